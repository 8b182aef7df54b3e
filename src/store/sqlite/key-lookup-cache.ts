import { RememberedLookups } from '../sql/remembered-lookups.js';
import type { KeyLookup } from '../types.js';
import type { KeyLookupChanges, KeyLookupSignal } from './change-signal.js';

/**
 * Key look-ups remembered while nothing in the database changed, so a revalidation (304) costs
 * a share of one check of the change signal (change-signal.ts) instead of a three-table join
 * (bench/RESULTS.md, "304 revalidations"). The signal fires whenever any connection commits
 * (the CLI revoking a key or publishing, another process) and says which stores' look-ups it may
 * have changed, or all (change-signal.ts); this connection's own key and list writes also call
 * `invalidate()`. Misses are not kept.
 *
 * A revocation is seen by the next request (CONTRACT §4), and the check is still shared: a
 * look-up waits for a check made after it asked, run once for all the look-ups of an event-loop
 * turn (in its check phase, after the poll phase has read every ready socket). Every request
 * served from that check had arrived before it was made, so a commit that finished before a
 * request was sent is always seen; one read of the signal serves every request of the turn
 * (one `pread` per request cost 13 % of 304s/s, bench/RESULTS.md).
 */
export class KeyLookupCache {
  private readonly entries = new RememberedLookups();
  /** The check the look-ups asked for so far in this turn will share, once scheduled. */
  private nextCheck: Promise<void> | null = null;
  /**
   * Misses being looked up since the latest check (or this connection's latest write): a new
   * map after each, so a look-up begun before one is not remembered.
   */
  private loading = new Map<string, Promise<KeyLookup | null>>();

  constructor(private readonly signal: KeyLookupSignal) {}

  /**
   * The key's look-up: remembered, or asked of the database with `load`, after a check made
   * after this call. The look-ups of a turn resume one after the other, each reading what is
   * remembered in the microtask it resumes in, so a miss is asked of the database once for all
   * of them (they all asked before the check, the database is asked after it).
   */
  async find(hash: string, load: () => Promise<KeyLookup | null>): Promise<KeyLookup | null> {
    await this.checked();
    return this.get(hash) ?? this.lookUpOnce(hash, load);
  }

  /** Resolves once the signal was read after this call. */
  checked(): Promise<void> {
    return (this.nextCheck ??= new Promise<void>((resolve) => setImmediate(() => this.check(resolve))));
  }

  /** What is remembered (read right after `checked()`). */
  get(hash: string): KeyLookup | undefined {
    return this.entries.get(hash);
  }

  private lookUpOnce(hash: string, load: () => Promise<KeyLookup | null>): Promise<KeyLookup | null> {
    const loading = this.loading;
    let pending = loading.get(hash);
    if (!pending) {
      pending = load().then((lookup) => {
        if (lookup && loading === this.loading) this.set(hash, lookup);
        return lookup;
      });
      loading.set(hash, pending);
    }
    return pending;
  }

  private check(done: () => void): void {
    // Look-ups asking from here on wait for the next check: this one may predate their requests.
    this.nextCheck = null;
    this.loading = new Map();
    let changes: KeyLookupChanges;
    try {
      changes = this.signal.changes();
    } catch {
      // An unreadable signal is a change: nothing remembered is trusted.
      changes = 'all';
    }
    if (changes === 'all') this.entries.clear();
    else if (changes !== 'none') this.entries.forget(changes);
    done();
  }

  set(hash: string, lookup: KeyLookup): void {
    this.entries.set(hash, lookup);
  }

  close(): void {
    this.signal.close();
  }

  /** After this connection changed keys, stores or latest lists: those of `storeId` only, when given. */
  invalidate(storeId?: string): void {
    if (storeId === undefined) this.entries.clear();
    else this.entries.forget(new Set([storeId]));
    this.loading = new Map();
  }

  /** touchKey on this connection: keep the entry, with the new time. */
  touched(keyId: string, at: Date): void {
    this.entries.touched(keyId, at);
  }
}
