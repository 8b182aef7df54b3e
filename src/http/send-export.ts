import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { constants as zlibConstants, createBrotliCompress, createGzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Everything that shapes the bytes of one export; two requests with equal variants get equal bytes. */
export interface ExportVariant {
  endpoint: 'prices' | 'summary';
  storeId: string;
  priceListId: number;
  version: number;
  format: string;
  profileId: number | null;
  profileRevision: number | null;
  onlyAvailable: boolean;
}

export interface ExportFile {
  variant: ExportVariant;
  publishedAt: Date;
  contentType: string;
  fileName: string;
  /** Produces the body; called only when a body is sent. */
  body(): AsyncIterable<Uint8Array>;
}

export function variantTag(variant: ExportVariant): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([variant.endpoint, variant.storeId, variant.priceListId, variant.format, variant.profileId, variant.profileRevision, variant.onlyAvailable]))
    .digest('base64url')
    .slice(0, 16);
  return `v${variant.version}-${digest}`;
}

type Coding = 'br' | 'gzip' | 'identity';

/** Picks br, then gzip, from Accept-Encoding (q=0 excludes one). */
export function negotiateEncoding(header: string | undefined): Coding {
  if (!header) return 'identity';
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name, q ? Number(q.slice(2)) || 0 : 1);
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return 'identity';
}

/** `demo-shop-20261122T070000Z.csv`: store id (an ASCII slug) and publication time. */
export function exportFileName(storeId: string, publishedAt: Date, extension: string, suffix = ''): string {
  const stamp = publishedAt.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return `${storeId}${suffix}-${stamp}.${extension}`;
}

function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return ascii === fileName
    ? `attachment; filename="${fileName}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** True when the client's copy is current: If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2). */
function notModified(request: FastifyRequest, etags: readonly string[], lastModified: Date): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() === '*') return true;
    const presented = ifNoneMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
    return presented.some((tag) => etags.includes(tag));
  }
  const ifModifiedSince = request.headers['if-modified-since'];
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
  }
  return false;
}

/**
 * Sends an export: validators, 304, HEAD without rendering, and the body streamed through
 * br/gzip when the client accepts it. The identity and each compressed representation get
 * their own strong ETag (RFC 9110 §8.8.3); a conditional request matches any of them.
 */
export function sendExport(request: FastifyRequest, reply: FastifyReply, file: ExportFile): FastifyReply {
  const tag = variantTag(file.variant);
  const coding = negotiateEncoding(request.headers['accept-encoding']);
  const etag = coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
  const allTags = [`"${tag}"`, `"${tag}-br"`, `"${tag}-gzip"`];

  reply
    .header('ETag', etag)
    .header('Last-Modified', file.publishedAt.toUTCString())
    .header('Cache-Control', 'private, no-cache')
    .header('Vary', 'Accept-Encoding');
  if (notModified(request, allTags, file.publishedAt)) return reply.code(304).send();

  reply.header('Content-Type', file.contentType).header('Content-Disposition', contentDisposition(file.fileName));
  if (coding !== 'identity') reply.header('Content-Encoding', coding);
  if (request.method === 'HEAD') return reply.code(200).send();

  const source = Readable.from(file.body(), { objectMode: false, highWaterMark: 1 << 16 });
  if (coding === 'identity') return reply.code(200).send(source);
  // Streaming levels: fast enough to keep up with rendering; the render cache precompresses harder.
  const compressor = coding === 'br'
    ? createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } })
    : createGzip({ level: 5 });
  source.on('error', (error) => compressor.destroy(error));
  return reply.code(200).send(source.pipe(compressor));
}
