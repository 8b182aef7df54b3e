import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ExportService, ResolvedExport } from '../domain/exports.js';
import type { DemandService } from '../domain/variant-demand.js';
import type { RenderCache } from '../render-cache/interface.js';
import { sendCachedFile } from './cached-file-reply.js';
import { allTags, notModified, setValidators } from './conditional-request.js';
import { compressStream, negotiateEncoding } from './content-coding.js';
import { renderSource, variantIds } from './export-cache.js';

/** What the export addresses answer with: the export use case and this app's render cache. */
export interface ExportDelivery {
  exports: ExportService;
  cache: RenderCache;
  /** Notes each variant served, so a new publication is rendered in it before anyone asks (export-warming.ts). */
  demand?: Pick<DemandService, 'note'>;
  /**
   * ACCEL_REDIRECT_PREFIX: with nginx in front on the same host, a finished file is not sent
   * by this process but handed to nginx (`X-Accel-Redirect: <prefix><file>`), which sends it
   * with sendfile and answers byte ranges itself. Null (the default): this process sends it.
   */
  accelRedirectPrefix?: string | null;
}

function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return ascii === fileName
    ? `attachment; filename="${fileName}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * Sends a resolved export: validators, 304, then the body from the render cache — a finished
 * file (Content-Length known, byte ranges, precompressed br/gzip when made), or the render in
 * progress followed as it is written (compressed on the fly when the client accepts it, by the
 * same compressor as the cache's copies, so both are one byte sequence under one ETag). A 304
 * and a cache hit never read the list; HEAD never starts a render and answers the headers the
 * GET would at that moment (no Content-Length while the file is not rendered). The caller has
 * checked the key: a 304 only ever answers a valid key (CONTRACT §4).
 */
export async function sendExport(request: FastifyRequest, reply: FastifyReply, { exports, cache, demand, accelRedirectPrefix }: ExportDelivery, resolved: ResolvedExport): Promise<FastifyReply> {
  const coding = negotiateEncoding(request.headers['accept-encoding']);
  // A revalidation is demand too: the fetcher will want the next list in this variant.
  demand?.note(resolved.variant, coding);
  const { tag, key } = variantIds(resolved.variant);
  const etag = setValidators(reply, tag, coding, resolved.lastModified);
  // The version these bytes are: an importer asks the changes feed `since=` it next time (CONTRACT §11).
  reply.header('X-Price-List-Version', String(resolved.variant.version));
  if (notModified(request, allTags(tag), resolved.lastModified)) return reply.code(304).send();
  reply.header('Content-Disposition', contentDisposition(resolved.fileName()));
  if (coding !== 'identity') reply.header('Content-Encoding', coding);

  // The variant's version is the store's latest at this request's key lookup.
  cache.noteLatest(key.storeId, key.version);
  if (accelRedirectPrefix && request.method === 'GET') {
    const located = cache.locate(key, coding);
    if (located) {
      request.server.metrics.cacheHit(resolved.variant.format);
      return handToNginx(reply, accelRedirectPrefix + located.path, located.contentType);
    }
  }
  const cached = await cache.open(key, coding);
  request.server.metrics[cached ? 'cacheHit' : 'cacheMiss'](resolved.variant.format);
  if (cached) return sendCachedFile(request, reply, cached, etag);

  reply.header('Content-Type', resolved.contentType());
  // HEAD never starts a render: like the GET at this moment, it has no length to tell.
  if (request.method === 'HEAD') return reply.code(200).send();
  const source = cache.read(key, request.server.metrics.timeRender(resolved.variant.format, renderSource(exports, resolved)));
  if (coding === 'identity') return reply.code(200).send(source);
  cache.want(key, coding);
  return reply.code(200).send(compressStream(source, coding));
}

/**
 * The answer nginx turns into the file (docs/running-several-instances.md, "Large repeats
 * through nginx"): the key, the scopes, the rate limits and the conditional headers have been
 * checked; nginx follows X-Accel-Redirect to its `internal` location over CACHE_DIR and sends
 * the file with its own Content-Length, Accept-Ranges and byte ranges. It keeps Content-Type,
 * Content-Disposition and Cache-Control from this answer by itself; the documented location
 * copies ETag, Last-Modified, Content-Encoding, Vary and the security headers from it (nginx
 * would otherwise drop them, or put its own file-based ETag and Last-Modified in their place).
 * The body is empty: nginx discards it anyway.
 */
function handToNginx(reply: FastifyReply, location: string, contentType: string): FastifyReply {
  return reply.code(200).header('Content-Type', contentType).header('X-Accel-Redirect', location).send();
}
