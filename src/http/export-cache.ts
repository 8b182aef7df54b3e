import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ExportService, ExportVariant, ResolvedExport } from '../domain/exports.js';
import { openRenderCache, type CacheOptions } from '../render-cache/factory.js';
import type { CacheKey, RenderCache, RenderSource } from '../render-cache/interface.js';
import { rememberRecent } from './recent-results.js';

/** Digests of the variants asked for lately: a revalidation then skips the SHA-256. */
const digestOf = rememberRecent((text: string) => createHash('sha256').update(text).digest('base64url'));

/** One digest of everything that shapes the bytes: the ETag and the cache key both come from it. */
function variantDigest(variant: ExportVariant): string {
  const parts: unknown[] = [variant.endpoint, variant.storeId, variant.priceListId, variant.format, variant.profileId, variant.profileRevision, variant.onlyAvailable];
  // Only the changes feed has a `since`; the whole files' digests (and ETags) stay as they were.
  if (variant.since !== undefined) parts.push(variant.since);
  return digestOf(JSON.stringify(parts));
}

/**
 * The variant's ETag stem (`v3-<16 digest characters>`; the coding is appended per
 * representation) and its render cache key (the whole 256-bit digest, base64url: also a safe
 * file name, with the version the cache drops entries by).
 */
export function variantIds(variant: ExportVariant): { tag: string; key: CacheKey } {
  const digest = variantDigest(variant);
  return {
    tag: `v${variant.version}-${digest.slice(0, 16)}`,
    key: { id: `v${variant.version}-${digest}`, storeId: variant.storeId, version: variant.version },
  };
}

/** The render cache's key of a variant. */
export const cacheKey = (variant: ExportVariant): CacheKey => variantIds(variant).key;

/** How the cache makes a resolved export's identity bytes when it has none: the domain's `open`. */
export const renderSource = (exports: ExportService, resolved: ResolvedExport): RenderSource => ({
  contentType: resolved.contentType(),
  body: () => exports.open(resolved),
});

const CACHES = new WeakMap<object, RenderCache>();

/**
 * The app's render cache, opened on first use and closed with the app. Keyed by the HTTP
 * server, which every encapsulated scope of one app shares, so the export and summary routes
 * registered in one scope use one cache. `options` (CACHE_DIR's root, CACHE_MAX_MB's bound) count on
 * the first call only: the app makes it.
 */
export function renderCacheOf(app: FastifyInstance, options: CacheOptions = {}): RenderCache {
  let cache = CACHES.get(app.server);
  if (!cache) {
    const opened = openRenderCache(app.log, options);
    CACHES.set(app.server, opened);
    app.addHook('onClose', async () => opened.close());
    cache = opened;
  }
  return cache;
}
