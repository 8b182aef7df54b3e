/**
 * The remembered look-ups' bookkeeping when turns overlap, driven by a stand-in query that the
 * test answers in the order, and with the database state, it chooses (the PostgreSQL tests in
 * postgres/key-lookups.test.ts show the real query and triggers).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KeyLookup } from '../types.js';
import { GenerationLookups, type LookupsAt } from './generation-lookups.js';

interface Query {
  hashes: readonly string[];
  answer(generation: number, revoked: boolean): Promise<void>;
}

function standIn() {
  const queries: Query[] = [];
  const fetch = (hashes: readonly string[]) => new Promise<LookupsAt>((resolve) => {
    queries.push({
      hashes,
      answer: async (generation, revoked) => {
        const found = new Map(hashes.map((hash) => [hash, { key: { id: hash, revoked_at: revoked ? new Date(0) : null }, store: { id: 's' } } as unknown as KeyLookup]));
        resolve({ generation, found });
        // Lets the look-up go on to its next step (another query, or its answer).
        await new Promise((settled) => setImmediate(settled));
      },
    });
  });
  return { queries, memo: new GenerationLookups(fetch) };
}

const revokedIn = async (answer: Promise<Map<string, KeyLookup>>) => (await answer).get('h')?.key.revoked_at !== null;

test('what is remembered is answered while the generation stays, with one query for the generation alone', async () => {
  const { queries, memo } = standIn();
  const first = memo.lookUp(['h']);
  await queries[0].answer(1, false);
  const again = memo.lookUp(['h']);
  assert.deepEqual(queries[1].hashes, [], 'nothing asked but the generation');
  await queries[1].answer(1, false);
  assert.equal((await again).get('h'), (await first).get('h'));
});

test('a turn asks again for what it remembered when its query saw a change, though a later turn already moved the memo on', async () => {
  const { queries, memo } = standIn();
  const warm = memo.lookUp(['h']);
  await queries[0].answer(1, false);
  await warm;
  // Turns A and B both take the remembered look-up (read at generation 1) and send their queries.
  const turnA = memo.lookUp(['h']);
  const turnB = memo.lookUp(['h']);
  // B's is answered first, after the key was revoked (generation 2) and something else changed (3):
  // B asks for the key again and remembers it at 3.
  await queries[2].answer(3, true);
  await queries[3].answer(3, true);
  assert.equal(await revokedIn(turnB), true);
  // A's query read the database at generation 2, after the revocation: A must not answer what it
  // took at 1, though the memo (at 3) is newer than what A read.
  await queries[1].answer(2, true);
  assert.equal(queries.length, 5, 'A asked for the key again');
  await queries[4].answer(3, true);
  assert.equal(await revokedIn(turnA), true);
});

test('an answer older than the memo answers its own turn but is not remembered', async () => {
  const { queries, memo } = standIn();
  const turnA = memo.lookUp(['h']);
  const turnB = memo.lookUp(['h']);
  await queries[1].answer(2, true);
  await queries[0].answer(1, false);
  assert.equal(await revokedIn(turnA), false, 'as of its own read');
  assert.equal(await revokedIn(turnB), true);
  const later = memo.lookUp(['h']);
  assert.deepEqual(queries[2].hashes, [], 'remembered from B, not A');
  await queries[2].answer(2, true);
  assert.equal(await revokedIn(later), true);
});
