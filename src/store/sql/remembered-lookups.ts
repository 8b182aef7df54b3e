import type { KeyLookup } from '../types.js';

/**
 * Look-ups kept at most; past it the oldest kept goes. A fleet routed by key gives an instance
 * about this many (bench/RESULTS.md, "2026-12-06, evening": 100,000 stores on 10 instances).
 */
const MAX_ENTRIES = 10_000;

/**
 * Key look-ups kept by key hash, bounded: what SQLite's cache (sqlite/key-lookup-cache.ts) and
 * PostgreSQL's generation look-ups (generation-lookups.ts) each keep. When to trust or drop them
 * is theirs to judge.
 */
export class RememberedLookups {
  /** In the order they were set: the first is the oldest. */
  private readonly entries = new Map<string, KeyLookup>();
  /** Each store's key hashes among the entries, so one store's can be forgotten alone. */
  private readonly byStore = new HashesBy();
  /**
   * Each key's hashes among the entries, so a touch finds its look-ups without going through all:
   * with 10,000 kept, touching each key once (as a minute of traffic across them does) took 0.56 s
   * of the event loop walking them all, 9 ms this way (bench/RESULTS.md, "2026-12-07").
   */
  private readonly byKey = new HashesBy();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  get(hash: string): KeyLookup | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, lookup: KeyLookup): void {
    const was = this.entries.get(hash);
    if (was) this.drop(hash, was);
    // The oldest goes, not all: starting over made every key of a full instance a miss at once.
    // Oldest set, not least used: a hit stays a plain Map read on the 304's path.
    else if (this.entries.size >= this.maxEntries) {
      const [oldest, its] = this.entries.entries().next().value as [string, KeyLookup];
      this.drop(oldest, its);
    }
    this.entries.set(hash, lookup);
    this.byStore.add(lookup.store.id, hash);
    this.byKey.add(lookup.key.id, hash);
  }

  private drop(hash: string, lookup: KeyLookup): void {
    this.entries.delete(hash);
    this.byStore.delete(lookup.store.id, hash);
    this.byKey.delete(lookup.key.id, hash);
  }

  clear(): void {
    this.entries.clear();
    this.byStore.clear();
    this.byKey.clear();
  }

  /** Forgets the look-ups of these stores' keys. */
  forget(storeIds: ReadonlySet<string>): void {
    for (const storeId of storeIds) {
      for (const hash of [...this.byStore.of(storeId)]) this.drop(hash, this.entries.get(hash)!);
    }
  }

  /** This process touched a key: its kept look-ups show the new time (touches change no look-up's validity). */
  touched(keyId: string, at: Date): void {
    for (const hash of this.byKey.of(keyId)) this.entries.get(hash)!.key.last_used_at = at;
  }
}

/** Hashes of the kept look-ups grouped by an id (a store's, a key's). */
class HashesBy {
  private readonly groups = new Map<string, Set<string>>();

  of(id: string): ReadonlySet<string> {
    return this.groups.get(id) ?? NONE;
  }

  add(id: string, hash: string): void {
    let hashes = this.groups.get(id);
    if (!hashes) this.groups.set(id, (hashes = new Set()));
    hashes.add(hash);
  }

  delete(id: string, hash: string): void {
    const hashes = this.groups.get(id);
    hashes?.delete(hash);
    if (hashes?.size === 0) this.groups.delete(id);
  }

  clear(): void {
    this.groups.clear();
  }
}

const NONE: ReadonlySet<string> = new Set();
