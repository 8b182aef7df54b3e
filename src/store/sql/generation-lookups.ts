import type { KeyLookup } from '../types.js';
import { RememberedLookups } from './remembered-lookups.js';

/** What one query answers: the look-ups it found and the generation it read with them. */
export interface LookupsAt {
  generation: number;
  found: Map<string, KeyLookup>;
}

/**
 * Key look-ups remembered on PostgreSQL while `key_lookup_generation` stays put. The counter is
 * raised by triggers, at commit, whenever anything a look-up reads changes (a key but for its
 * `last_used_at`, a store, a latest list: postgres/schema.ts); the ledger's batches and the
 * touches leave it. The requests of one event-loop turn ask together (SqlKeyRepository), and
 * with this their query is one row — the counter — when every key of the turn is remembered:
 * across 5,000 keys, the three-table look-ups and their rows' parsing had made a 304 cost twice
 * what it costs for one key (bench/RESULTS.md, "2026-11-26, day").
 *
 * A revocation is still seen by the next request (CONTRACT §4): the turn's query is sent after
 * the request arrived, and reads the counter the revocation's commit raised. SQLite remembers
 * its look-ups its own way (sqlite/key-lookup-cache.ts), without a query per turn.
 */
export class GenerationLookups {
  private readonly entries = new RememberedLookups();
  /** The counter's value when the entries were read; -1 before the first query. */
  private generation = -1;

  /** `fetch` reads the counter and the look-ups of `hashes` in one statement (one snapshot). */
  constructor(private readonly fetch: (hashes: readonly string[]) => Promise<LookupsAt>) {}

  /** The look-ups of one turn's keys (a key not found is absent), read after every one of them was asked. */
  async lookUp(hashes: readonly string[]): Promise<Map<string, KeyLookup>> {
    const readAt = this.generation;
    const remembered = new Map<string, KeyLookup>();
    const missing: string[] = [];
    for (const hash of hashes) {
      const lookup = this.entries.get(hash);
      if (lookup) remembered.set(hash, lookup);
      else missing.push(hash);
    }
    let { generation, found } = await this.fetch(missing);
    // Compared with the generation the entries taken above were read at, not with the memo's
    // now: another turn may have moved it meanwhile, past a change this query did see.
    if (generation !== readAt && remembered.size > 0) {
      // Something a look-up reads changed since those were read: they are asked again.
      remembered.clear();
      ({ generation, found } = await this.fetch(hashes));
    }
    if (generation > this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
    // A query older than the memo (turns overlap) answers its own requests but is not kept.
    if (generation === this.generation) for (const [hash, lookup] of found) this.entries.set(hash, lookup);
    for (const [hash, lookup] of remembered) found.set(hash, lookup);
    return found;
  }

  /** This process touched a key (the counter ignores touches). */
  touched(keyId: string, at: Date): void {
    this.entries.touched(keyId, at);
  }
}
