/*
 * Test-only helpers for the contract tests of records a store builds itself
 * (src/store/*-records.contract.test.ts): publish items as a new store's list, then render a
 * writer's output through the store's records and through its JavaScript layout.
 */
import assert from 'node:assert/strict';
import type { ExportMeta, RecordSourceWriter } from '../../src/model/export-writer.js';
import type { PriceItem } from '../../src/model/price-item.js';
import type { RecordReader } from '../../src/model/record-spec.js';
import type { Database } from '../../src/store/types.js';
import * as postgresPages from '../../src/store/postgres/record-pages.js';
import * as sqlitePages from '../../src/store/sqlite/list-pages.js';
import { findRecordsExtension } from '../../src/store/sqlite/records-extension.js';
import { copyRecordsModule } from '../../src/store/postgres/native-copy-records.js';
import { createTestDatabase, DIALECTS, executeRaw, type Dialect, type TestDatabase } from './dialects.js';
import { buildMeta, collectChunks, inBatches, legacySample } from './format-items.js';

export interface BuiltRecords {
  publish(items: readonly PriceItem[]): Promise<number>;
  /** `afterPublish` may change the stored rows (as an older version of the store left them). */
  bothWays(writer: RecordSourceWriter, items: readonly PriceItem[], meta: ExportMeta, onlyAvailable?: boolean, afterPublish?: (listId: number) => void | Promise<void>): Promise<{ viaStore: Buffer; viaJavaScript: Buffer; used: boolean }>;
}

/** A dialect the records' contract tests run on, and whether it builds its pages with the C aggregates. */
export interface RecordsRun {
  dialect: Dialect;
  nativeRecords?: boolean;
  name: string;
}

/**
 * Each dialect this run reaches, twice where its C aggregates were built (build/native/): its
 * pages built by them (SQLite's extension, PostgreSQL's module over the COPY), and by SQL (the
 * fallback where no C compiler is).
 */
export const RECORDS_RUNS: readonly RecordsRun[] = DIALECTS.flatMap((dialect): RecordsRun[] => {
  const built = dialect === 'sqlite' ? findRecordsExtension() !== null : copyRecordsModule() !== null;
  const native = dialect === 'sqlite' ? 'C extension' : 'C module over COPY';
  return built
    ? [{ dialect, nativeRecords: true, name: `${dialect}, ${native}` }, { dialect, nativeRecords: false, name: `${dialect}, SQL` }]
    : [{ dialect, name: dialect }];
});

/** Items enough to fill a dialect's small first page and a whole page after it, and to start a third. */
export function itemsAcrossPages(dialect: Dialect): number {
  const pages = dialect === 'postgres' ? postgresPages : sqlitePages;
  return pages.FIRST_PAGE_POSITIONS + pages.POSITIONS_PER_PAGE + 345;
}

/** A fresh database for one run of RECORDS_RUNS, checked to build its pages the way the run names. */
export async function createRunDatabase({ dialect, nativeRecords }: RecordsRun): Promise<TestDatabase> {
  const testDb = await createTestDatabase(dialect, { nativeRecords });
  if (nativeRecords !== undefined) {
    assert.equal(testDb.db.nativeRecords?.(), nativeRecords, 'the pages are built the way this run names (build/native/ left by an older checkout? run npm run build)');
  }
  return testDb;
}

export const bytesOf = async (stream: AsyncIterable<Uint8Array>): Promise<Buffer> => Buffer.concat(await collectChunks(stream));

export function builtRecords(database: () => Database): BuiltRecords {
  let storeCount = 0;
  async function publish(items: readonly PriceItem[]): Promise<number> {
    const db = database();
    const id = `s-${++storeCount}`;
    await db.stores.create({ id, name: id, currency: 'RUB', url: null, company: null });
    const draft = await db.priceLists.beginPublication(id);
    for (let from = 0; from < items.length; from += 5000) {
      assert.deepEqual(await draft.append(items.slice(from, from + 5000).map((item, i) => ({ seq: from + i, item }))), []);
    }
    const list = await draft.commit({
      item_count: items.length,
      available_count: items.filter((item) => item.available).length,
      currencies: ['RUB'],
      category_paths: [''],
    });
    return list.id;
  }
  return {
    publish,
    async bothWays(writer, items, meta, onlyAvailable = false, afterPublish) {
      const listId = await publish(items);
      await afterPublish?.(listId);
      let used = false;
      const records: RecordReader = (spec) => {
        const built = database().priceLists.renderRecords(listId, spec, { onlyAvailable });
        used = built !== null;
        return built;
      };
      const kept = onlyAvailable ? items.filter((item) => item.available) : items;
      const viaStore = await bytesOf(writer.render(inBatches([]), meta, records));
      const viaJavaScript = await bytesOf(writer.render(inBatches(kept, 7), meta));
      return { viaStore, viaJavaScript, used };
    },
  };
}

type BothWays = (items: readonly PriceItem[], meta: ExportMeta, onlyAvailable?: boolean) => ReturnType<BuiltRecords['bothWays']>;

/** The legacy sample, all items and only available ones: the store's records are used and give the JavaScript bytes; `check` looks further. */
export async function legacySampleBothWays(bothWays: BothWays, check?: (viaStore: Buffer) => void): Promise<void> {
  const { items } = legacySample();
  for (const onlyAvailable of [false, true]) {
    const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items), onlyAvailable);
    assert.equal(used, true);
    assert.deepEqual(viaStore, viaJavaScript);
    check?.(viaStore);
  }
}

/**
 * Sets `quote_free` of a list's rows to `value` (an SQL expression), as an older version of the
 * store left them (on PostgreSQL, before 2026-11-26, always NULL); an `afterPublish` for bothWays.
 */
export const storedQuoteFree = (testDb: () => TestDatabase, value: string) => async (listId: number): Promise<void> => {
  await executeRaw(testDb(), `UPDATE price_items SET quote_free = ${value} WHERE price_list_id = $1`, [listId]);
};

/**
 * Texts of plain runs (ASCII and Cyrillic) with one of `characters` at every place from 0 to 17:
 * the C scans pass eight plain bytes at a time (sqlite/native/records_page.h), so a character
 * to escape must be found wherever it falls in or after a word. The random property tests' short,
 * dense texts seldom put one alone among plain bytes.
 */
export function loneCharacterTexts(characters: readonly string[]): string[] {
  const plain = 'abcdefghijklmnopqrstuvwxyz';
  const cyrillic = 'ПлоскийЭкранСмартфонаАБВГД';
  return characters.flatMap((character) =>
    Array.from({ length: 18 }, (_, at) => [plain, cyrillic].map((run) => `${run.slice(0, at)}${character}${run.slice(at)}`)).flat(),
  );
}
