/** record-pages.ts with a page reader that counts: order, empty pages, failures, and how much a slow consumer leaves read ahead. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIRST_PAGE_POSITIONS, PAGES_IN_FLIGHT, POSITIONS_PER_PAGE, recordPages, type PageReader } from './record-pages.js';

/** A reader of a list with a record (`seq;`) at every position up to `last` that `positions` keeps, counting what it has read. */
function countingReader(last: number, positions: (seq: number) => boolean) {
  const read = { pages: 0, bytes: 0 };
  const reader: PageReader = async (from, to) => {
    read.pages++;
    let text = '';
    for (let seq = from; seq < Math.min(to, last + 1); seq++) if (positions(seq)) text += `${seq};`;
    read.bytes += text.length;
    return text ? [Buffer.from(text)] : [];
  };
  return { read, reader };
}

async function all(source: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const chunk of source) out += Buffer.from(chunk).toString();
  return out;
}

describe('pages of records', () => {
  it('gives every page in order, the first one small, pages of nothing skipped', async () => {
    const last = FIRST_PAGE_POSITIONS + 3 * POSITIONS_PER_PAGE + 7;
    // Nothing in the second page (a filter dropped it all), every other position elsewhere.
    const kept = (seq: number) => seq % 2 === 0 && !(seq >= FIRST_PAGE_POSITIONS && seq < FIRST_PAGE_POSITIONS + POSITIONS_PER_PAGE);
    const { read, reader } = countingReader(last, kept);
    const expected = Array.from({ length: last + 1 }, (_, seq) => seq).filter(kept).map((seq) => `${seq};`).join('');
    // Compared as a flag: a failure would print two long lists.
    const got = await all(recordPages([0, last], reader));
    assert.ok(got === expected, `${got.length} characters, not the ${expected.length} expected`);
    assert.equal(read.pages, 5);
  });

  it('reads nothing for an empty list', async () => {
    const { read, reader } = countingReader(0, () => true);
    assert.equal(await all(recordPages([null, null], reader)), '');
    assert.equal(read.pages, 0);
  });

  it('throws a failed page in its turn, after the pages before it', async () => {
    const reader: PageReader = async (from) => {
      if (from > 0) throw new Error(`page at ${from} failed`);
      return [Buffer.from('first;')];
    };
    const got: string[] = [];
    await assert.rejects(async () => {
      for await (const chunk of recordPages([0, 3 * POSITIONS_PER_PAGE], reader)) got.push(Buffer.from(chunk).toString());
    }, /page at 1000 failed/);
    assert.deepEqual(got, ['first;']);
  });

  it('a slow consumer leaves at most PAGES_IN_FLIGHT pages read ahead, not the list', async () => {
    const last = 100 * POSITIONS_PER_PAGE;
    const { read, reader } = countingReader(last, () => true);
    const pages = recordPages([0, last], reader);
    let handedOn = 0;
    for (let taken = 0; taken < 3; taken++) {
      const next = await pages.next();
      assert.equal(next.done, false);
      handedOn += next.value!.length;
      // Let every page asked for finish: whatever is read and not handed on is held in memory.
      for (let i = 0; i < 10; i++) await Promise.resolve();
      assert.ok(read.pages <= taken + 1 + PAGES_IN_FLIGHT, `${read.pages} pages read with ${taken + 1} handed on`);
      const pageBytes = POSITIONS_PER_PAGE * String(last).length + POSITIONS_PER_PAGE;
      assert.ok(read.bytes - handedOn <= PAGES_IN_FLIGHT * pageBytes, `${read.bytes - handedOn} bytes held`);
    }
    await pages.return(undefined);
  });
});
