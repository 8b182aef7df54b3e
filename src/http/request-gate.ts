import type { FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors/app-error.js';
import type { KeyLookup } from '../store/types.js';
import type { RateCounter } from '../rate-limit/interface.js';

const WINDOW_MS = 60_000;

export interface GateLimits {
  perStorePerMin: number;
  authFailsPerClientPerMin: number;
}

/**
 * Admits a key holder's request (CONTRACT §8): a client over its failed-key limit is refused
 * before its key is looked at; a failed key counts against the client, never against a store;
 * an accepted key counts against its store's quota, shared by all the store's keys.
 */
export class RequestGate {
  constructor(private readonly counter: RateCounter, private readonly limits: GateLimits) {}

  async admit(request: FastifyRequest, authenticate: () => Promise<KeyLookup>): Promise<KeyLookup> {
    const clientKey = `fail:${request.ip}`;
    const fails = await this.counter.peek(clientKey, WINDOW_MS);
    if (fails.count >= this.limits.authFailsPerClientPerMin) {
      throw this.limited('too many wrong API keys from this address', this.limits.authFailsPerClientPerMin, fails.resetInMs, 0);
    }
    let lookup: KeyLookup;
    try {
      lookup = await authenticate();
    } catch (error) {
      if (isAppError(error) && error.status === 401) await this.counter.hit(clientKey, WINDOW_MS);
      throw error;
    }
    const used = await this.counter.hit(`store:${lookup.store.id}`, WINDOW_MS);
    const remaining = Math.max(0, this.limits.perStorePerMin - used.count);
    request.rateLimit = { limit: this.limits.perStorePerMin, remaining, resetInMs: used.resetInMs };
    if (used.count > this.limits.perStorePerMin) {
      throw this.limited('too many requests for this store', this.limits.perStorePerMin, used.resetInMs, 0);
    }
    return lookup;
  }

  private limited(detail: string, limit: number, resetInMs: number, remaining: number): AppError {
    const retryAfterSeconds = Math.max(1, Math.ceil(resetInMs / 1000));
    return new AppError('rate_limited', detail, { retryAfterSeconds, rateLimit: { limit, remaining, resetInMs } });
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The store quota after this request, for the RateLimit headers. */
    rateLimit?: { limit: number; remaining: number; resetInMs: number };
  }
}
