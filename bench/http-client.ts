/* A plain HTTP client for the figures that are one download (time to last byte), not a load. */
import { createHash } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';

export interface Download {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: number;
  /** Seconds to the last byte. */
  seconds: number;
  /** Seconds to the first byte of the body. */
  firstByteSeconds: number;
  /** Empty unless asked for (hashing costs the client CPU a timing should not include). */
  sha256: string;
}

/** GETs `url` on a fresh connection, consuming (and hashing, when asked) the body as it comes. */
export function download(url: string, headers: Record<string, string> = {}, options: { method?: string; hash?: boolean } = {}): Promise<Download> {
  const method = options.method ?? 'GET';
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const req = request(url, { method, headers, agent: false }, (res) => {
      const hash = options.hash ? createHash('sha256') : null;
      let bytes = 0;
      let firstByteSeconds = NaN;
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteSeconds = seconds();
        bytes += chunk.length;
        hash?.update(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, seconds: seconds(), firstByteSeconds, sha256: hash?.digest('hex') ?? '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
