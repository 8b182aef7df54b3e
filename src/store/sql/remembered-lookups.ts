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
  /** Each store's key hashes among the entries, so one store's can be forgotten alone. */
  private readonly byStore = new Map<string, Set<string>>();

  get(hash: string): KeyLookup | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, lookup: KeyLookup): void {
    if (this.entries.size >= MAX_ENTRIES) this.clear();
    const was = this.entries.get(hash);
    if (was && was.store.id !== lookup.store.id) this.byStore.get(was.store.id)?.delete(hash);
    this.entries.set(hash, lookup);
    let hashes = this.byStore.get(lookup.store.id);
    if (!hashes) this.byStore.set(lookup.store.id, (hashes = new Set()));
    hashes.add(hash);
  }

  clear(): void {
    this.entries.clear();
    this.byStore.clear();
  }

  /** Forgets the look-ups of these stores' keys. */
  forget(storeIds: ReadonlySet<string>): void {
    for (const storeId of storeIds) {
      for (const hash of this.byStore.get(storeId) ?? []) this.entries.delete(hash);
      this.byStore.delete(storeId);
    }
  }

  /** This process touched a key: its kept look-ups show the new time (touches change no look-up's validity). */
  touched(keyId: string, at: Date): void {
    for (const lookup of this.entries.values()) if (lookup.key.id === keyId) lookup.key.last_used_at = at;
  }
}
