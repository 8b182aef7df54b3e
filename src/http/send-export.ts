import { createHash } from 'node:crypto';
import { constants as zlibConstants, createBrotliCompress, createGzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { selectRange } from '../render-cache/byte-ranges.js';
import { openRenderCache } from '../render-cache/factory.js';
import type { CacheKey, Coding, OpenCachedFile, RenderCache } from '../render-cache/interface.js';

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

/** The costly part of an export, made only when the render cache cannot answer: its Content-Type and its bytes. */
export interface PreparedExport {
  /** The variant as planning found it: it wins over the request's own if they differ (a profile edited in between). */
  variant: ExportVariant;
  contentType: string;
  /** Produces the body; called at most once per variant while the render cache holds it. */
  body(): AsyncIterable<Uint8Array>;
}

/**
 * What a route knows of an export after the key, parameter and profile checks: enough for the
 * validators, a 304 and a cache hit. `prepare` plans the rest (categories, meta) on a miss.
 */
export interface ExportFile {
  variant: ExportVariant;
  publishedAt: Date;
  /** The download's name; asked for only when a body (or HEAD) is answered, not for a 304. */
  fileName(): string;
  prepare(): Promise<PreparedExport>;
}

/** Digests of the variants asked for lately: a revalidation then skips the SHA-256. */
const DIGESTS = new Map<string, string>();
const MAX_DIGESTS = 10_000;

/** One digest of everything that shapes the bytes: the ETag and the cache key both come from it. */
function variantDigest(variant: ExportVariant): string {
  const text = JSON.stringify([variant.endpoint, variant.storeId, variant.priceListId, variant.format, variant.profileId, variant.profileRevision, variant.onlyAvailable]);
  let digest = DIGESTS.get(text);
  if (digest === undefined) {
    digest = createHash('sha256').update(text).digest('base64url');
    if (DIGESTS.size >= MAX_DIGESTS) DIGESTS.clear();
    DIGESTS.set(text, digest);
  }
  return digest;
}

const tagOf = (variant: ExportVariant, digest: string): string => `v${variant.version}-${digest.slice(0, 16)}`;
/** The whole 256-bit digest (base64url: also a safe file name), with the version the cache drops by. */
const keyOf = (variant: ExportVariant, digest: string): CacheKey => ({ id: `v${variant.version}-${digest}`, storeId: variant.storeId, version: variant.version });

export function variantTag(variant: ExportVariant): string {
  return tagOf(variant, variantDigest(variant));
}

/** The render cache's key of a variant. */
export function cacheKey(variant: ExportVariant): CacheKey {
  return keyOf(variant, variantDigest(variant));
}

const CACHES = new WeakMap<object, RenderCache>();

/**
 * The app's render cache, opened on first use and closed with the app. Keyed by the HTTP
 * server, which every encapsulated scope of one app shares, so the export and summary routes
 * registered in one scope use one cache.
 */
export function renderCacheOf(app: FastifyInstance): RenderCache {
  let cache = CACHES.get(app.server);
  if (!cache) {
    const opened = openRenderCache(app.log);
    CACHES.set(app.server, opened);
    app.addHook('onClose', async () => opened.close());
    cache = opened;
  }
  return cache;
}

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
  // `2026-11-22T07:00:00.000Z` → `20261122T070000Z` by slicing (every download asks; regexes cost more).
  const iso = publishedAt.toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
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
 * Sends an export: validators, 304, then the body from the render cache — a finished file
 * (Content-Length known, byte ranges, precompressed br/gzip when made), or the render in
 * progress followed as it is written (compressed on the fly when the client accepts it).
 * A 304 and a cache hit never plan the export; HEAD never starts a render. The identity and
 * each compressed representation get their own strong ETag (RFC 9110 §8.8.3); a conditional
 * request matches any of them. The caller has checked the key: a 304 only ever answers a
 * valid key (CONTRACT §4).
 */
export async function sendExport(request: FastifyRequest, reply: FastifyReply, file: ExportFile, cache: RenderCache): Promise<FastifyReply> {
  const coding = negotiateEncoding(request.headers['accept-encoding']);
  const digest = variantDigest(file.variant);
  let tag = tagOf(file.variant, digest);
  let etag = setValidators(reply, tag, coding, file.publishedAt);
  if (notModified(request, allTags(tag), file.publishedAt)) return reply.code(304).send();
  reply.header('Content-Disposition', contentDisposition(file.fileName()));
  if (coding !== 'identity') reply.header('Content-Encoding', coding);

  let key = keyOf(file.variant, digest);
  // The variant's version is the store's latest at this request's key lookup.
  cache.noteLatest(key.storeId, key.version);
  const cached = await cache.open(key, coding);
  request.server.metrics[cached ? 'cacheHit' : 'cacheMiss'](file.variant.format);
  if (cached) return sendCachedFile(request, reply, cached, etag);

  const prepared = await file.prepare();
  const preparedDigest = variantDigest(prepared.variant);
  if (preparedDigest !== digest) {
    // Planning read a newer profile revision than the request did: the bytes are the newer
    // revision's, so they are keyed and tagged as such (never cached under the older key).
    tag = tagOf(prepared.variant, preparedDigest);
    etag = setValidators(reply, tag, coding, file.publishedAt);
    if (notModified(request, allTags(tag), file.publishedAt)) return reply.code(304).send();
    key = keyOf(prepared.variant, preparedDigest);
  }
  reply.header('Content-Type', prepared.contentType);
  if (request.method === 'HEAD') return reply.code(200).send();

  const source = cache.read(key, request.server.metrics.timeRender(file.variant.format, prepared));
  if (coding === 'identity') return reply.code(200).send(source);
  cache.want(key, coding);
  // Streaming levels: fast enough to keep up with rendering; the cache's own copies are made harder.
  const compressor = coding === 'br'
    ? createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } })
    : createGzip({ level: 5 });
  source.on('error', (error) => compressor.destroy(error));
  return reply.code(200).send(source.pipe(compressor));
}

const allTags = (tag: string): string[] => [`"${tag}"`, `"${tag}-br"`, `"${tag}-gzip"`];

/** ETag (one per representation), Last-Modified and the caching headers; returns the ETag. */
function setValidators(reply: FastifyReply, tag: string, coding: Coding, publishedAt: Date): string {
  const etag = coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
  reply
    .header('ETag', etag)
    .header('Last-Modified', publishedAt.toUTCString())
    .header('Cache-Control', 'private, no-cache')
    .header('Vary', 'Accept-Encoding');
  return etag;
}

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** A finished file: its length, and a byte range of it when asked (RFC 9110 §14). */
function sendCachedFile(request: FastifyRequest, reply: FastifyReply, file: OpenCachedFile, etag: string): FastifyReply {
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
