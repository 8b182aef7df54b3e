import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { selectRange } from '../render-cache/byte-ranges.js';
import type { OpenCachedFile } from '../render-cache/interface.js';

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** A finished file: its length, and a byte range of it when asked (RFC 9110 §14). */
export function sendCachedFile(request: FastifyRequest, reply: FastifyReply, file: OpenCachedFile, etag: string): FastifyReply {
  const { handle, buffer, size } = file;
  reply.header('Accept-Ranges', 'bytes');
  const range = request.method === 'GET' ? selectRange(header(request.headers.range), header(request.headers['if-range']), etag, size) : null;
  if (handle && (request.method === 'HEAD' || range === 'unsatisfiable' || size === 0)) void handle.close().catch(() => undefined);
  if (range === 'unsatisfiable') {
    reply.removeHeader('Content-Disposition');
    reply.removeHeader('Content-Encoding');
    reply.header('Content-Range', `bytes */${size}`);
    throw new AppError('range_not_satisfiable', `the file has ${size} bytes; the requested range starts past its end`);
  }
  reply.header('Content-Type', file.contentType);
  if (request.method === 'HEAD') return reply.code(200).header('Content-Length', String(size)).send();
  if (size === 0) return reply.code(200).header('Content-Length', '0').send();
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  if (range) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
  else reply.code(200);
  reply.header('Content-Length', String(end - start + 1));
  if (buffer) return reply.send(range ? buffer.subarray(start, end + 1) : buffer);
  return reply.send(handle.createReadStream({ start, end, highWaterMark: 64 * 1024 }));
}
