/** The bounded look-ups SQLite's cache and PostgreSQL's generation look-ups keep (remembered-lookups.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyLookup } from '../types.js';
import { RememberedLookups } from './remembered-lookups.js';

const lookup = (storeId: string, keyId: string) => ({ store: { id: storeId }, key: { id: keyId, last_used_at: null } }) as unknown as KeyLookup;
const kept = (remembered: RememberedLookups, hashes: string[]) => hashes.filter((hash) => remembered.get(hash) !== undefined);

describe('RememberedLookups', () => {
  it('past its bound the oldest look-up goes, and only it', () => {
    const remembered = new RememberedLookups(3);
    for (const hash of ['a', 'b', 'c', 'd']) remembered.set(hash, lookup(`s-${hash}`, `k-${hash}`));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c', 'd']), ['b', 'c', 'd']);
    remembered.set('e', lookup('s-e', 'k-e'));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c', 'd', 'e']), ['c', 'd', 'e']);
  });

  it('a look-up set again is the newest, and setting it makes no room', () => {
    const remembered = new RememberedLookups(3);
    for (const hash of ['a', 'b', 'c']) remembered.set(hash, lookup('s', `k-${hash}`));
    remembered.set('a', lookup('s', 'k-a'));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c']), ['a', 'b', 'c']);
    remembered.set('d', lookup('s', 'k-d'));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c', 'd']), ['a', 'c', 'd']);
  });

  it('forgetting a store forgets its keys that are kept, after others went for room', () => {
    const remembered = new RememberedLookups(3);
    remembered.set('a', lookup('s1', 'k-a'));
    remembered.set('b', lookup('s2', 'k-b'));
    remembered.set('c', lookup('s1', 'k-c'));
    remembered.set('d', lookup('s2', 'k-d'));
    remembered.forget(new Set(['s1']));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c', 'd']), ['b', 'd']);
    // A key that moved to another store is forgotten with its new store only.
    remembered.set('b', lookup('s1', 'k-b'));
    remembered.forget(new Set(['s2']));
    assert.deepEqual(kept(remembered, ['b', 'd']), ['b']);
  });

  it('a touch shows on its key\'s kept look-ups only, also after look-ups went, were set again or were forgotten', () => {
    const remembered = new RememberedLookups(3);
    const used = (hash: string) => remembered.get(hash)?.key.last_used_at ?? null;
    const first = new Date('2026-12-07T10:00:00Z');
    remembered.set('a', lookup('s1', 'k-1'));
    remembered.set('b', lookup('s1', 'k-2'));
    remembered.set('c', lookup('s2', 'k-1')); // the same key's look-up under another hash (and store)
    remembered.touched('k-1', first);
    assert.deepEqual(['a', 'b', 'c'].map(used), [first, null, first]);
    // 'a' goes for room, 'b' is set again as k-1's, s2 is forgotten: k-1's are 'b' and 'd' now.
    remembered.set('d', lookup('s3', 'k-1'));
    remembered.set('b', lookup('s1', 'k-1'));
    remembered.forget(new Set(['s2']));
    assert.deepEqual(kept(remembered, ['a', 'b', 'c', 'd']), ['b', 'd']);
    const second = new Date('2026-12-07T10:01:00Z');
    remembered.touched('k-1', second);
    remembered.touched('k-2', second); // no look-up of k-2 is kept any more
    assert.deepEqual(['b', 'd'].map(used), [second, second]);
    // 'd' and 'b' go for room: k-1 has no kept look-up, and a touch of it changes nothing.
    remembered.set('e', lookup('s1', 'k-3'));
    remembered.set('f', lookup('s1', 'k-4'));
    remembered.set('g', lookup('s1', 'k-5'));
    remembered.touched('k-1', new Date('2026-12-07T10:02:00Z'));
    assert.deepEqual(['e', 'f', 'g'].map(used), [null, null, null]);
  });
});
