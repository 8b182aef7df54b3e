import type { KeyLookup } from '../types.js';
import type { ChangeSignal } from './change-signal.js';

/** Entries kept at most; past it the cache starts over (a deployment has far fewer keys). */
const MAX_ENTRIES = 10_000;

/**
 * Key look-ups remembered while nothing in the database changed, so a revalidation (304) costs
 * one check of the change signal (change-signal.ts) instead of a three-table join
 * (bench/RESULTS.md, "304 revalidations"). The signal fires whenever any connection commits
 * (the CLI revoking a key or publishing, another process); this connection's own key and list
 * writes also call `invalidate()`. So a revocation is seen by the next request, as CONTRACT §4
 * requires. Misses are not kept.
 */
export class KeyLookupCache {
  private readonly entries = new Map<string, KeyLookup>();

  constructor(private readonly signal: ChangeSignal) {}

  get(hash: string): KeyLookup | undefined {
    if (this.signal.changed()) this.entries.clear();
    return this.entries.get(hash);
  }

  set(hash: string, lookup: KeyLookup): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, lookup);
  }

  close(): void {
    this.signal.close();
  }

  /** After this connection changed keys, stores or latest lists. */
  invalidate(): void {
    this.entries.clear();
  }

  /** touchKey on this connection: keep the entry, with the new time. */
  touched(keyId: string, at: Date): void {
    for (const lookup of this.entries.values()) if (lookup.key.id === keyId) lookup.key.last_used_at = at;
  }
}
