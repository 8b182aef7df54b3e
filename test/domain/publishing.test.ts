/*
 * Publishing through the domain onto a real database of every dialect (moved from the store's
 * contract tests: store/ does not import domain/).
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors/app-error.js';
import type { PriceItem } from '../../src/model/price-item.js';
import type { Database, DuplicateOffer, PublicationDraft, SequencedItem } from '../../src/store/types.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { readSource, type SourceRow } from '../../src/domain/publication-source.js';
import { publishPriceList, PUBLISH_BATCH_SIZE } from '../../src/domain/publishing.js';

const FIXTURE = new URL('../../test/fixtures/legacy-sample.json', import.meta.url);

function item(offerId: string): PriceItem {
  return {
    offer_id: offerId, name: `Item ${offerId}`, price: 100, old_price: null, purchase_price: null, currency: 'RUB',
    available: true, quantity: null, url: null, picture: null, vendor: null, vendor_code: null, barcode: null,
    description: null, category: null, competitors: null, attributes: null,
  };
}

async function publish(db: Database, storeId: string, items: readonly PriceItem[]) {
  const draft = await db.priceLists.beginPublication(storeId);
  assert.deepEqual(await draft.append(items.map((it, seq) => ({ seq, item: it }))), []);
  return draft.commit({ item_count: items.length, available_count: items.length, currencies: ['RUB'], category_paths: [''] });
}

async function readAll(db: Database, listId: number, onlyAvailable = false): Promise<PriceItem[][]> {
  const batches: PriceItem[][] = [];
  for await (const batch of db.priceLists.readItems(listId, { onlyAvailable })) batches.push(batch);
  return batches;
}

async function createStore(db: Database): Promise<string> {
  const id = `s-${randomBytes(4).toString('hex')}`;
  await db.stores.create({ id, name: `Store ${id}`, currency: 'RUB', url: null, company: null });
  return id;
}

/**
 * `db` with every draft's appends held back until the event loop has run dry (setImmediate: by
 * then the publication has read as far as it will without the store), then passed on.
 * `resolvedItems` counts the items of the appends that have answered.
 */
function withHeldAppends(db: Database): { db: Database; resolvedItems: () => number; appendSizes: number[] } {
  let resolved = 0;
  const appendSizes: number[] = [];
  const priceLists = Object.create(db.priceLists) as Database['priceLists'];
  priceLists.beginPublication = async (storeId: string) => {
    const draft = await db.priceLists.beginPublication(storeId);
    const held: PublicationDraft = {
      id: draft.id,
      append: (items: readonly SequencedItem[]) => {
        appendSizes.push(items.length);
        return new Promise<DuplicateOffer[]>((resolve, reject) => setImmediate(() => draft.append(items).then((duplicates) => {
          resolved += items.length;
          resolve(duplicates);
        }, reject)));
      },
      appended: () => draft.appended(),
      commit: (summary, outcome) => draft.commit(summary, outcome),
      abort: () => draft.abort(),
    };
    return held;
  };
  const wrapped = Object.create(db) as Database;
  Object.defineProperty(wrapped, 'priceLists', { value: priceLists });
  return { db: wrapped, resolvedItems: () => resolved, appendSizes };
}

for (const dialect of DIALECTS) {
  describe(dialect, () => {
    let testDb: TestDatabase;
    let db: Database;
    before(async () => {
      testDb = await createTestDatabase(dialect);
      db = testDb.db;
    });
    after(async () => testDb?.drop());

    describe('through the domain', () => {
      it('publishes the legacy sample: 12 items, 10 available, in file order', async () => {
        await db.stores.create({ id: 'demo-shop', name: 'Demo Shop', currency: 'RUB', url: 'https://demo-shop.example', company: null });
        const list = await publishPriceList(db, 'demo-shop', readSource(createReadStream(FIXTURE), 'json'));
        assert.equal(list.version, 1);
        assert.equal(list.item_count, 12);
        assert.equal(list.available_count, 10);
        assert.deepEqual(list.currencies, ['RUB', 'USD']);
        const items = (await readAll(db, list.id)).flat();
        assert.deepEqual(items.map((it) => it.offer_id), ['A-100', 'A-101', 'A-102', 'A-103', 'A-104', 'A-105', 'A-106', 'A-107', 'A-108', 'A-109', 'B/200', 'B-201']);
        assert.equal(items[1].price, 79_950);
        assert.equal(items[8].price, 123_456_789);
        assert.equal(items[10].name, 'Carriage\rreturn');
        assert.equal((await readAll(db, list.id, true)).flat().length, 10);
        const categories = await db.priceLists.categories('demo-shop', list.category_ids);
        assert.ok(categories.some((c) => c.path === 'Электроника / Смартфоны'));
      });

      it('refuses a publication with bad rows, lists each one, and keeps the previous list latest', async () => {
        const storeId = await createStore(db);
        const kept = await publish(db, storeId, [item('keep')]);
        const lines = [
          '{"offer_id":"ok-1","name":"Good","price":1}',
          '{"offer_id":"bad-price","name":"Bad","price":1.005}',
          '{"offer_id":"ok-1","name":"Repeat","price":2}',
          '{not json',
          '',
          '{"offer_id":"ok-2","name":"","price":3}',
          '{"offer_id":"ok-3","name":"Good","price":4}',
        ];
        const source = readSource(Readable.from([lines.join('\n')]), 'ndjson');
        const error = await publishPriceList(db, storeId, source).then(() => null, (e: unknown) => e);
        assert.ok(error instanceof AppError, String(error));
        assert.equal(error.code, 'invalid_publication');
        assert.equal(error.extra.problemCount, 4);
        assert.deepEqual(error.extra.problems!.map((p) => p.position).sort(), ['line 2', 'line 3', 'line 4', 'line 6']);
        assert.match(error.extra.problems!.find((p) => p.position === 'line 3')!.reason, /ok-1/);
        assert.deepEqual(await db.priceLists.latest(storeId), kept);
        assert.deepEqual((await readAll(db, kept.id)).flat().map((it) => it.offer_id), ['keep']);
      });

      it("settles the draft's appends before comparing its rows (SQLite's append thread commits several batches at a time)", async () => {
        const storeId = await createStore(db);
        const steps: string[] = [];
        const priceLists = Object.create(db.priceLists) as Database['priceLists'];
        priceLists.beginPublication = async (id: string) => {
          const draft = await db.priceLists.beginPublication(id);
          return Object.assign(Object.create(draft) as PublicationDraft, {
            append: (items: readonly SequencedItem[]) => draft.append(items),
            appended: async () => { await draft.appended(); steps.push('appended'); },
            commit: (...args: Parameters<PublicationDraft['commit']>) => draft.commit(...args),
            abort: () => draft.abort(),
          });
        };
        const versions = Object.create(db.versions) as Database['versions'];
        versions.compareDraft = (...args) => { steps.push('compared'); return db.versions.compareDraft(...args); };
        const wrapped = Object.create(db) as Database;
        Object.defineProperties(wrapped, { priceLists: { value: priceLists }, versions: { value: versions } });
        const rows = Array.from({ length: 3 }, (_, i) => JSON.stringify({ offer_id: `S-${i}`, name: 'Settled', price: 1 })).join('\n');
        await publishPriceList(wrapped, storeId, readSource(Readable.from([rows]), 'ndjson'));
        assert.deepEqual(steps.slice(0, 2), ['appended', 'compared']);
      });

      it('reads no more than two batches ahead of the store: the items held in memory are bounded, not the list', async () => {
        const storeId = await createStore(db);
        const held = withHeldAppends(db);
        const count = PUBLISH_BATCH_SIZE * 5 + 7;
        let pulled = 0;
        let mostAhead = 0;
        async function* rows(): AsyncIterable<SourceRow> {
          for (let i = 0; i < count; i++) {
            pulled++;
            // Rows read (this one too) but not yet in the database: in a batch, or in an append.
            mostAhead = Math.max(mostAhead, pulled - held.resolvedItems());
            yield { position: `line ${i + 1}`, raw: { offer_id: `B-${i}`, name: 'Bounded', price: 1 }, text: false };
          }
        }
        const list = await publishPriceList(held.db, storeId, rows());
        assert.equal(list.item_count, count);
        assert.deepEqual(held.appendSizes, [...Array(5).fill(PUBLISH_BATCH_SIZE), 7]);
        // A batch read while the one before it is written (the overlap), and never more.
        assert.equal(mostAhead, 2 * PUBLISH_BATCH_SIZE);
      });

      it('reports a repeated offer_id across batches at the row it repeats on', async () => {
        const storeId = await createStore(db);
        const count = PUBLISH_BATCH_SIZE * 2 + 10;
        const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ offer_id: i === count - 3 ? 'R-5' : `R-${i}`, name: 'Item', price: 1 }));
        const error = await publishPriceList(db, storeId, readSource(Readable.from([lines.join('\n')]), 'ndjson')).then(() => null, (e: unknown) => e);
        assert.ok(error instanceof AppError, String(error));
        assert.deepEqual(error.extra.problems, [{ position: `line ${count - 2}`, reason: 'offer_id "R-5" repeats an earlier item' }]);
        assert.equal(await db.priceLists.latest(storeId), null);
      });
    });
  });
}
