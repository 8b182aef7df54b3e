import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isForbiddenAddress } from './webhook-target.js';

/** CONTRACT §13: an attempt that has not been answered in 10 s failed. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface PostResult {
  ok: boolean;
  /** The answer's status, when there was one. */
  status?: number;
  /** Why it failed, for `webhook list` (never a secret). */
  error?: string;
}

/**
 * One delivery attempt: a POST of the body with the given headers. 2xx is success; anything
 * else (3xx included: redirects are never followed), a refused or private address, or no
 * complete answer within the timeout is a failure.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, options: { allowPrivate: boolean; timeoutMs?: number }): Promise<PostResult> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // A literal address never goes through `lookup`: checked here instead.
  if (!options.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
    return Promise.resolve({ ok: false, error: 'refused: a loopback, private or link-local address' });
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const payload = Buffer.from(body, 'utf8');
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': 'price-export-webhooks/1' },
      lookup: guardedLookup(options.allowPrivate) as never,
      signal: AbortSignal.timeout(options.timeoutMs ?? WEBHOOK_TIMEOUT_MS),
    }, (response) => {
      const status = response.statusCode ?? 0;
      // The answer's body is read and dropped: the status decides.
      response.resume();
      response.on('end', () => resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `answered ${status}` }));
      response.on('error', (error) => resolve({ ok: false, status, error: describe(error) }));
    });
    request.on('error', (error) => resolve({ ok: false, error: describe(error) }));
    request.end(payload);
  });
}

function describe(error: NodeJS.ErrnoException): string {
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer within 10 s';
  if (error.code === 'EWEBHOOKPRIVATE') return error.message;
  return error.code ? `connection failed (${error.code})` : 'connection failed';
}
