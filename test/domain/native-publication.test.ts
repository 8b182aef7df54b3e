/*
 * A publication read by the store's native item reader (store/item-rows/) against the same file
 * read by JavaScript alone (the draft's rowReader withheld), on every dialect: the same stored
 * rows, quote_free bits included, the same summary and warnings, and the same refusal of a bad
 * file, positions and all.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors/app-error.js';
import type { SourceFormat } from '../../src/domain/publication-source.js';
import { publishPriceList, PUBLISH_BATCH_SIZE, readPublication } from '../../src/domain/publishing.js';
import type { Database, ItemRowReader, PublicationDraft } from '../../src/store/types.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { rawItem, richItem } from '../../bench/bench-data.js';

/** Items JavaScript takes and the native reader leaves to it (a form it does not read), among catalogue items. */
const LEFT_TO_JAVASCRIPT: Record<string, unknown>[] = [
  { offer_id: 12345678901234567, name: 'unsafe integer id', price: 1 },
  { offer_id: 'L-1', name: 'fourteen integer digits', price: 12345678901234.5 },
  { offer_id: 'L-2', name: 'three decimals', price: '19.900' },
  { offer_id: 'L-3', name: 'untidy category', price: 1, category: ' Дом /Кухня ' },
  { offer_id: 'L-4', name: 'IPv4 host', price: 1, url: 'http://10.0.0.1/p' },
  { offer_id: 'L-5', name: 'index-like attribute', price: 1, attributes: { 10: 'x', a: 'y' } },
  { offer_id: 'L-6', name: 'upper-case yes', price: 1, available: 'YES' },
  { offer_id: 'L-7', name: 'a price with a space', price: ' 5' },
  { offer_id: 'L-8', name: '\u00a0padded competitor', price: 1, competitors: [{ name: '\u00a0ozon ', price: '1.5' }] },
  { offer_id: 'L-9', name: 'name', price: 1, name2: 'unknown key', attributes: { k: 1.25 } },
];

function catalogue(count: number): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) items.push(i % 3 === 0 ? rawItem(i) : richItem(i));
  items.splice(7, 0, ...LEFT_TO_JAVASCRIPT);
  return items;
}

/** Rows JavaScript takes and the native reader leaves to it, as CSV cells (every value a text). */
const CSV_LEFT_TO_JAVASCRIPT: Record<string, unknown>[] = [
  { offer_id: 'C-1', name: 'three decimals', price: '19.900' },
  { offer_id: 'C-2', name: 'a padded price', price: ' 5' },
  { offer_id: 'C-3', name: 'upper-case yes', price: 1, available: 'YES' },
  { offer_id: 'C-4', name: 'a padded boolean', price: 1, available: ' true' },
  { offer_id: 'C-5', name: 'sixteen digits of quantity', price: 1, quantity: '0000000000000005' },
  { offer_id: 'C-6', name: 'untidy category', price: 1, category: 'Дом/ Кухня' },
  { offer_id: 'C-7', name: 'IPv4 host', price: 1, picture: 'http://10.0.0.1/p.jpg' },
  { offer_id: 'C-8', name: 'index-like attribute', price: 1, attributes: { 10: 'x', a: 'y' } },
  { offer_id: 'C-9', name: 'a column repeating a key', price: 1, attributes: { 'цвет': 'белый' }, 'attributes.цвет': 'чёрный' },
  { offer_id: 'C-10', name: 'competitors with padding', price: 1, competitors: [{ name: '\u00a0ozon ', price: '1.5' }] },
];

/** CSV columns: every field, and attribute columns besides the `attributes` cell. */
const CSV_COLUMNS = ['offer_id', 'name', 'price', 'old_price', 'purchase_price', 'currency', 'available', 'quantity', 'url', 'picture', 'vendor', 'vendor_code', 'barcode', 'description', 'category', 'competitors', 'attributes', 'attributes.цвет', 'attributes.size'];

/** An item as a CSV row: JSON in the competitors and attributes cells; every third item's attributes in their columns where it has one. */
function csvRow(item: Record<string, unknown>, i: number): string {
  const cells: Record<string, unknown> = { ...item };
  const attributes = { ...(item.attributes as Record<string, unknown> | undefined) };
  if (i % 3 === 0) {
    for (const key of ['цвет', 'size']) {
      if (key in attributes) {
        cells[`attributes.${key}`] = attributes[key];
        delete attributes[key];
      }
    }
  }
  if (item.attributes !== undefined) cells.attributes = Object.keys(attributes).length > 0 ? JSON.stringify(attributes) : '';
  if (item.competitors !== undefined) cells.competitors = JSON.stringify(item.competitors);
  const cell = (value: unknown, column: number) => {
    const written = value === undefined || value === null ? '' : String(value);
    // Quoted where it must be, and some fields where it need not be.
    return /[",\r\n]/.test(written) || (i + column) % 5 === 0 ? `"${written.replaceAll('"', '""')}"` : written;
  };
  return CSV_COLUMNS.map((column, k) => cell(cells[column], k)).join(',');
}

const text = (items: readonly unknown[], format: SourceFormat) => {
  if (format === 'ndjson') return `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  if (format === 'json') return JSON.stringify({ note: 'ignored', items });
  // CRLF and LF lines, a blank line, a BOM: each as a writer may send it.
  const rows = items.map((item, i) => csvRow(item as Record<string, unknown>, i) + (i % 4 === 0 ? '\r\n' : '\n') + (i === 100 ? '\n' : ''));
  return `\ufeff${CSV_COLUMNS.join(',')}\n${rows.join('')}`;
};

/** `db` whose drafts have no native reader: JavaScript reads every item. */
function withoutReader(db: Database): Database {
  const priceLists = Object.create(db.priceLists) as Database['priceLists'];
  priceLists.beginPublication = async (storeId: string) => {
    const draft = await db.priceLists.beginPublication(storeId);
    return { id: draft.id, append: (items, rows) => draft.append(items, rows), appended: () => draft.appended(), commit: (s, o) => draft.commit(s, o), abort: () => draft.abort(), rowReader: null };
  };
  return { ...db, priceLists, jsonItemFramer: () => null, csvRecordFramer: () => null };
}

/** `db` whose drafts are the store's, their reader and append those `change` makes of them. */
function withDrafts(db: Database, change: (draft: PublicationDraft, reader: ItemRowReader) => Pick<PublicationDraft, 'append' | 'rowReader'>): Database {
  const priceLists = Object.create(db.priceLists) as Database['priceLists'];
  priceLists.beginPublication = async (storeId: string) => {
    const draft = await db.priceLists.beginPublication(storeId);
    const reader = draft.rowReader;
    assert.ok(reader, 'this store has no native item reader (node scripts/build-native.mjs)');
    return { id: draft.id, appended: () => draft.appended(), commit: (s, o) => draft.commit(s, o), abort: () => draft.abort(), ...change(draft, reader) };
  };
  return { ...db, priceLists };
}

/** `db` whose drafts' reader counts the items it takes. */
function counting(db: Database, taken: { count: number }): Database {
  return withDrafts(db, (draft, reader) => ({
    append: (items, rows) => draft.append(items, rows),
    rowReader: {
      rules: reader.rules,
      read: (...args) => {
        const read = reader.read(...args);
        taken.count += read.accepted;
        return read;
      },
    },
  }));
}

/** What `batching` saw: each append's rows, and the most rows read but not yet stored at any time. */
interface Appends { sizes: number[]; read: number; stored: number; mostAhead: number }

/**
 * `db` whose drafts' reader asks for `rowsPerAppend` rows an append (undefined: none), and whose
 * appends are counted and each held back a turn, so the reading runs ahead of the store as far
 * as the publication lets it.
 */
function batching(db: Database, rowsPerAppend: number | undefined, seen: Appends): Database {
  return withDrafts(db, (draft, reader) => ({
    rowReader: {
      rules: reader.rules,
      rowsPerAppend,
      read: (...args) => {
        const read = reader.read(...args);
        seen.read += read.accepted;
        seen.mostAhead = Math.max(seen.mostAhead, seen.read - seen.stored);
        return read;
      },
    },
    append: (items, rows = []) => {
      const count = items.length + rows.reduce((sum, r) => sum + r.count, 0);
      seen.sizes.push(count);
      return new Promise((resolve, reject) => setImmediate(() => draft.append(items, rows).then((duplicates) => {
        seen.stored += count;
        resolve(duplicates);
      }, reject)));
    },
  }));
}

/** Every stored column of a list's rows, quote_free included, in seq order, as text. */
async function storedRows(testDb: TestDatabase, listId: number): Promise<string[]> {
  const sql = 'SELECT seq, offer_id, name, price, old_price, currency, available, quantity, url, extra, quote_free FROM price_items WHERE price_list_id = $1 ORDER BY seq';
  if (testDb.dialect === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const raw = new Sqlite(testDb.url.slice('sqlite:'.length), { readonly: true });
    try {
      return (raw.prepare(sql.replace('$1', '?')).raw().all(listId) as unknown[][]).map((row) => JSON.stringify(row));
    } finally {
      raw.close();
    }
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    // As SQLite holds them: numbers, and available as 0/1.
    const { rows } = await client.query({ text: sql, values: [listId], rowMode: 'array' });
    return rows.map((row: unknown[]) => JSON.stringify(row.map((v, i) => (i === 6 ? (v ? 1 : 0) : typeof v === 'string' && [0, 3, 4, 7, 10].includes(i) ? Number(v) : v))));
  } finally {
    await client.end();
  }
}

const publish = (db: Database, storeId: string, body: string, format: SourceFormat) =>
  publishPriceList(db, storeId, readPublication(db, Readable.from([Buffer.from(body)]), format));

for (const dialect of DIALECTS) {
  describe(`a publication read by the native item reader, against JavaScript alone (${dialect})`, () => {
    let testDb: TestDatabase;
    const store = async () => {
      const id = `s-${randomBytes(4).toString('hex')}`;
      await testDb.db.stores.create({ id, name: 'A store whose name is longer than twenty', currency: 'RUB', url: null, company: null });
      return id;
    };
    before(async () => {
      testDb = await createTestDatabase(dialect);
    });
    after(async () => {
      await testDb?.drop();
    });

    for (const format of ['ndjson', 'json', 'csv'] as const) {
      it(`stores the same rows, summary and warnings (${format}, 5,000 catalogue items and some it leaves)`, async () => {
        const items = catalogue(5000);
        if (format === 'csv') items.splice(3000, 0, ...CSV_LEFT_TO_JAVASCRIPT);
        const body = text(items, format);
        const taken = { count: 0 };
        const native = await publish(counting(testDb.db, taken), await store(), body, format);
        const javascript = await publish(withoutReader(testDb.db), await store(), body, format);
        // As a CSV text, the first of LEFT_TO_JAVASCRIPT (an offer_id too long for a JSON number) is one the reader takes.
        assert.equal(taken.count, format === 'csv' ? 5001 : 5000, 'the reader took every catalogue item and left the others');
        for (const key of ['item_count', 'available_count', 'currencies', 'state', 'warnings'] as const) assert.deepEqual(native[key], javascript[key], key);
        assert.deepEqual(native.category_ids.length, javascript.category_ids.length);
        assert.deepEqual(await storedRows(testDb, native.id), await storedRows(testDb, javascript.id));
      });
    }

    it("hands the store as many of the reader's rows an append as it asks for, and holds no more than two appends' worth", async () => {
      // Sent 50 lines a chunk, so the reader takes them 50 at a time.
      const lines = catalogue(9050).map((item) => JSON.stringify(item));
      const chunks = Array.from({ length: lines.length / 50 }, (_, k) => Buffer.from(lines.slice(50 * k, 50 * k + 50).join('\n') + '\n'));
      for (const [asked, batch] of [[3000, 3000], [undefined, PUBLISH_BATCH_SIZE], [500, PUBLISH_BATCH_SIZE]] as const) {
        const seen: Appends = { sizes: [], read: 0, stored: 0, mostAhead: 0 };
        const db = batching(testDb.db, asked, seen);
        const list = await publishPriceList(db, await store(), readPublication(db, Readable.from(chunks), 'ndjson'));
        assert.equal(list.item_count, 9050);
        assert.equal(seen.sizes.reduce((sum, size) => sum + size, 0), 9050);
        // Each append but the last closes at the chunk that fills it.
        for (const size of seen.sizes.slice(0, -1)) assert.ok(size >= batch && size < batch + 50, `asked ${asked}: an append of ${size} rows (${seen.sizes})`);
        assert.ok(seen.mostAhead <= 2 * (batch + 50), `asked ${asked}: ${seen.mostAhead} rows read ahead of the store`);
      }
    });

    it('refuses a bad file with the same problems, positions and count', async () => {
      const items: unknown[] = catalogue(3000);
      items.push({ ...richItem(5), name: 'a repeat of an offer id the reader took' }, { offer_id: 'bad', price: 'x' }, { ...rawItem(6) });
      items.splice(2500, 0, { ...richItem(2600) });
      // An item left to JavaScript, then one the reader takes with its offer_id, in one batch: the later one is the repeat.
      items.splice(20, 0, { offer_id: (items[40] as { offer_id: string }).offer_id, name: 'left to JavaScript', price: ' 5' });
      // And one the reader takes, then one left to JavaScript with its offer_id: the JavaScript one is the repeat.
      items.splice(60, 0, { offer_id: (items[50] as { offer_id: string }).offer_id, name: 'left to JavaScript', price: ' 6' });
      for (const format of ['ndjson', 'json', 'csv'] as const) {
        const body = text(items, format);
        const refusal = async (db: Database) => {
          const error = await publish(db, await store(), body, format).then(() => null, (e: unknown) => e);
          assert.ok(error instanceof AppError, String(error));
          return { detail: error.detail, extra: error.extra };
        };
        const native = await refusal(testDb.db);
        assert.deepEqual(native, await refusal(withoutReader(testDb.db)));
        assert.match(JSON.stringify(native.extra), /repeats an earlier item/);
      }
    });
  });
}
