import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors/app-error.js';
import { noopMetrics, type Metrics } from '../metrics/interface.js';
import type { KeyLookup } from '../domain/records.js';
import type { Clock, RateCounter } from '../rate-limit/interface.js';

/** CONTRACT §8 counts per minute. */
const WINDOW_MS = 60_000;
/** While the counters are unreachable, one warning per this interval, not one per request. */
const OUTAGE_WARNING_INTERVAL_MS = 30_000;
/**
 * After a counter failure the counters are not asked again for this long: a Redis that hangs
 * (rather than refuses) costs each ask its command timeout, and that must not be every request's.
 */
export const OUTAGE_BACKOFF_MS = 5_000;

export interface GateLimits {
  perStorePerMin: number;
  authFailsPerClientPerMin: number;
}

/** The quota a response reports in its RateLimit / RateLimit-Policy headers. */
export interface QuotaReport {
  /** The policy name in the headers: `store` (a store's requests) or `auth-fail` (a client's wrong keys). */
  policy: 'store' | 'auth-fail';
  limit: number;
  remaining: number;
  resetInMs: number;
}

/**
 * A wrong key counts against the client; a missing key does not (it guesses nothing, and
 * refusing it costs no database round trip).
 */
const isWrongKey = (error: unknown) => isAppError(error) && (error.code === 'invalid_key' || error.code === 'revoked_key' || error.code === 'expired_key');

/**
 * Admits a key holder's request (CONTRACT §8): a client over its failed-key limit is refused
 * whatever its key (so a guesser cannot tell a right key from a wrong one once limited); a wrong
 * key counts against the client, never against a store; an accepted key counts against its
 * store's quota, shared by all the store's keys.
 *
 * When the counters cannot be reached (Redis down or slow), the gate fails OPEN: requests are
 * admitted without limits and a warning is logged. The limits protect the service from abuse;
 * refusing every store's downloads because a side cache is down would do the abuser's work.
 * The Redis counter fails fast (see redis-counter.ts), and after a failure the gate leaves the
 * counters alone for a few seconds, so an outage costs next to no latency.
 */
export class RequestGate {
  private lastOutageWarning = 0;
  private uncountedChecks = 0;
  private skipCountersUntil = 0;

  constructor(
    private readonly counter: RateCounter,
    private readonly limits: GateLimits,
    private readonly metrics: Metrics = noopMetrics,
    private readonly now: Clock = Date.now,
  ) {}

  async admit(request: FastifyRequest, authenticate: () => Promise<KeyLookup>): Promise<KeyLookup> {
    const clientKey = `fail:${request.ip}`;
    const failLimit = this.limits.authFailsPerClientPerMin;

    // Counted first, then decided (red-team finding #20.5): a limit read before the key is looked
    // up lets a burst of guesses sent at once all pass the read together, a right key among them.
    // So every decision is taken on a count made after the lookup: a wrong key on its own atomic
    // INCR (of any burst, only the first AUTH_FAIL_LIMIT_PER_MIN wrong keys get their 401), a right
    // key on the client's wrong keys counted by the time its lookup ended.
    let lookup: KeyLookup;
    try {
      lookup = await authenticate();
    } catch (error) {
      if (!isWrongKey(error)) throw error;
      const used = await this.count(request, () => this.counter.hit(clientKey, WINDOW_MS));
      if (used) {
        const quota: QuotaReport = { policy: 'auth-fail', limit: failLimit, remaining: Math.max(0, failLimit - used.count), resetInMs: used.resetInMs };
        // Past the limit a wrong key gets the 429 a right key would: a limited guesser learns nothing.
        if (used.count > failLimit) throw this.limited(request, 'too many wrong API keys from this address', quota);
        request.rateLimit = quota;
      }
      throw error;
    }

    const storeLimit = this.limits.perStorePerMin;
    // One atomic step: the client's wrong keys so far and, unless they reached the limit, the store's hit
    // (a refused right key does not use up its store's quota).
    const counts = await this.count(request, () => this.counter.hitUnlessOver(`store:${lookup.store.id}`, clientKey, failLimit, WINDOW_MS));
    if (counts) {
      const { hit, guard: fails } = counts;
      if (hit === null) {
        throw this.limited(request, 'too many wrong API keys from this address', { policy: 'auth-fail', limit: failLimit, remaining: 0, resetInMs: fails.resetInMs });
      }
      const quota: QuotaReport = { policy: 'store', limit: storeLimit, remaining: Math.max(0, storeLimit - hit.count), resetInMs: hit.resetInMs };
      if (hit.count > storeLimit) throw this.limited(request, 'too many requests for this store', quota);
      request.rateLimit = quota;
    }
    return lookup;
  }

  /** A count, or null when the counters cannot be reached (fail open, see the class comment). */
  private async count<T>(request: FastifyRequest, read: () => Promise<T>): Promise<T | null> {
    if (this.now() < this.skipCountersUntil) {
      this.uncountedChecks++;
      return null;
    }
    try {
      return await read();
    } catch (error) {
      this.skipCountersUntil = this.now() + OUTAGE_BACKOFF_MS;
      this.warnOutage(request.log, error);
      return null;
    }
  }

  private warnOutage(log: FastifyBaseLogger, error: unknown): void {
    this.uncountedChecks++;
    const now = this.now();
    if (now - this.lastOutageWarning < OUTAGE_WARNING_INTERVAL_MS) return;
    this.lastOutageWarning = now;
    // The error's name only: a driver's message could quote the Redis address with its password.
    log.warn(
      { err: { type: (error as Error)?.name ?? typeof error }, uncounted_checks: this.uncountedChecks },
      'rate-limit counters unreachable: admitting requests without limits until they answer',
    );
    this.uncountedChecks = 0;
  }

  private limited(request: FastifyRequest, detail: string, quota: QuotaReport): AppError {
    request.rateLimit = quota;
    this.metrics.rateLimitRefused(quota.policy);
    const retryAfterSeconds = Math.max(1, Math.ceil(quota.resetInMs / 1000));
    return new AppError('rate_limited', detail, { retryAfterSeconds });
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The quota this request was counted against, for the RateLimit headers. */
    rateLimit?: QuotaReport;
  }
}
