import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Coding } from '../render-cache/interface.js';
import { rememberRecent } from './recent-results.js';

/** Every representation's ETag of a variant: a conditional request matches any of them. */
export const allTags = (tag: string): string[] => [`"${tag}"`, `"${tag}-br"`, `"${tag}-gzip"`];

/** HTTP dates of recent Last-Modified values: formatting a Date is a measurable share of a 304. */
const httpDateOf = rememberRecent((time: number) => new Date(time).toUTCString());

/**
 * ETag (one per representation: RFC 9110 §8.8.3), Last-Modified and the caching headers;
 * returns the ETag. Last-Modified is the resolved export's: the later of the publication and
 * the profile's last edit.
 */
export function setValidators(reply: FastifyReply, tag: string, coding: Coding, lastModified: Date): string {
  const etag = coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
  reply
    .header('ETag', etag)
    .header('Last-Modified', httpDateOf(lastModified.getTime()))
    .header('Cache-Control', 'private, no-cache')
    .header('Vary', 'Accept-Encoding');
  return etag;
}

/** True when the client's copy is current: If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2). */
export function notModified(request: FastifyRequest, etags: readonly string[], lastModified: Date): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    // The usual revalidation sends back exactly the ETag it was given.
    if (etags.includes(ifNoneMatch)) return true;
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
