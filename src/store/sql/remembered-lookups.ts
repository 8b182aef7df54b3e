import type { KeyLookup } from '../types.js';

/** Look-ups kept at most; past it they start over (a deployment has far fewer keys). */
const MAX_ENTRIES = 10_000;

/**
 * Key look-ups kept by key hash, bounded: what SQLite's cache (sqlite/key-lookup-cache.ts) and
 * PostgreSQL's generation look-ups (generation-lookups.ts) each keep. When to trust or drop them
 * is theirs to judge.
 */
export class RememberedLookups {
  private readonly entries = new Map<string, KeyLookup>();

  get(hash: string): KeyLookup | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, lookup: KeyLookup): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, lookup);
  }

  clear(): void {
    this.entries.clear();
  }

  /** This process touched a key: its kept look-ups show the new time (touches change no look-up's validity). */
  touched(keyId: string, at: Date): void {
    for (const lookup of this.entries.values()) if (lookup.key.id === keyId) lookup.key.last_used_at = at;
  }
}
