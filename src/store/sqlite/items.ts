import type Database from 'better-sqlite3';
import type { RecordSpec } from '../../model/record-spec.js';
import { STORED_FIELDS } from '../stored-fields.js';
import type { PriceItem } from '../../model/price-item.js';
import { itemFromRow } from '../item-row.js';
import type { DialectItems } from '../sql/dialect.js';
import type { DuplicateOffer, ItemRowReader, ItemRows, ReadItemsOptions, SequencedItem } from '../types.js';
import { itemRowReader } from '../item-rows/native-item-rows.js';
import { compileRecord, type CompiledRecord } from './delimited-sql.js';
import { nativeRecordsPage } from './native-records-sql.js';
import { changeRecordPages } from './change-records.js';
import type { ChangeRecords, ChangeRecordSpecs } from '../changes-types.js';
import { compileJsonRecord } from './json-sql.js';
import { compileXmlRecord } from './xml-sql.js';
import { compileYmlRecord } from './yml-sql.js';
import { compileSheetRow } from './sheet-row-sql.js';
import { pageRowNumbers } from '../sheet-row-numbers.js';
import type { SheetRowSpec } from '../../model/sheet-row.js';
import { INSERT_ITEM_SQL, insertItems } from './item-insert.js';
import { listPages, pageIndexSql, pageThreadValue, POSITIONS_PER_PAGE, type PageQuery, type PageRunner } from './list-pages.js';
import type { AppendThread } from './store-threads.js';

/** What the item paths use of the dialect's connection. */
export interface SqliteConnection {
  db: Database.Database;
  /** A kept prepared statement (one mode per SQL text). */
  prepare(sql: string): Database.Statement;
  pageRunner: PageRunner;
  /** Where drafts' rows are inserted; null: on this connection (an in-memory database). */
  appendThread: AppendThread | null;
  /** Whether every connection has the records extension (records-extension.ts): CSV/TSV, JSON, XML and YML pages are built by it. */
  nativeRecords: boolean;
}

/** SQLite's own item paths: appends on the append thread, reads and records built on page threads. */
export class SqliteItems implements DialectItems {
  readonly recordFormats: ReadonlySet<RecordSpec['format']> = new Set(['delimited', 'json', 'xml', 'yml', 'sheet-row'] as const);
  /** Rows sent to the append thread per draft not yet settled: the thread checks it holds them all. */
  private readonly sent = new Map<number, number>();

  constructor(private readonly c: SqliteConnection) {}

  async append(draftId: number, items: readonly SequencedItem[], rows: readonly ItemRows[] = []): Promise<DuplicateOffer[]> {
    if (items.length === 0 && rows.length === 0) return [];
    // The items are not kept past this point: the thread answers the offer ids it refused. It
    // builds the rows itself, off the main thread that reads and validates the next batch.
    if (this.c.appendThread) {
      this.sent.set(draftId, rows.reduce((sum, r) => sum + r.count, (this.sent.get(draftId) ?? 0) + items.length));
      return this.c.appendThread.append(draftId, items, rows);
    }
    if (rows.length > 0) throw new Error('rows of the native reader need the append thread');
    const insert = this.c.prepare(INSERT_ITEM_SQL);
    return this.c.db.transaction(() => insertItems(insert, draftId, items))();
  }

  /** The native reader, where the append thread can insert its rows (it has the records extension). */
  rowReader(draftId: number): ItemRowReader | null {
    return this.c.appendThread !== null && this.c.nativeRecords ? itemRowReader(draftId) : null;
  }

  async settle(draftId: number): Promise<void> {
    const sent = this.sent.get(draftId);
    if (sent === undefined || !this.c.appendThread) return;
    this.sent.delete(draftId);
    await this.c.appendThread.settle(draftId, sent);
  }

  async *read(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]> {
    const batchSize = options.batchSize ?? POSITIONS_PER_PAGE;
    // Each page is one JSON array of rows built by SQLite on a page thread: JSON.parse makes the
    // rows ~2× faster than better-sqlite3 hands them over one by one, and the event loop is not
    // held up while SQLite reads (bench/RESULTS.md, "First XLSX"). `extra` comes as an object.
    // The rows arrive in seq order as render's do (see there).
    const extra = options.withExtra === false ? 'NULL' : 'json(extra)';
    const query: PageQuery = {
      sql: `SELECT json_group_array(json_array(${STORED_FIELDS.join(', ')}, ${extra}))
              FROM (SELECT ${STORED_FIELDS.join(', ')}, extra FROM price_items
                     WHERE price_list_id = @list AND seq >= @from AND seq < @to ${options.onlyAvailable ? 'AND available = 1' : ''}
                     ORDER BY seq)`,
      params: {},
    };
    // Pages follow positions; batches are of batchSize items (the last may be shorter).
    let batch: PriceItem[] = [];
    for await (const page of listPages<string>(this.c.pageRunner, priceListId, this.positionBounds(priceListId), query)) {
      for (const row of JSON.parse(page) as unknown[][]) {
        batch.push(itemFromRow(row));
        if (batch.length === batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  }

  async *render(priceListId: number, spec: RecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    if (spec.format === 'sheet-row') {
      yield* this.sheetRows(priceListId, spec, options);
      return;
    }
    const native = this.c.nativeRecords ? nativeRecordsPage(spec, options.onlyAvailable === true) : null;
    if (native) {
      yield* listPages<Uint8Array>(this.c.pageRunner, priceListId, this.positionBounds(priceListId), native);
      return;
    }
    const { expression, params, readsExtra, tables } = compileAny(spec);
    // Each page is one blob of records made by SQLite, so no row becomes a JavaScript object
    // (bench/RESULTS.md, "First (uncached) CSV"). The subquery hands its rows over in seq order
    // and group_concat joins them in arrival order (`group_concat(… ORDER BY seq)` would sort
    // again, ~35 % slower); delimited-records.contract.test.ts checks the order across pages.
    const query: PageQuery = {
      sql: `${tables ? `WITH ${tables.join(', ')} ` : ''}SELECT CAST(group_concat(${expression}, '') AS BLOB)
              FROM (SELECT ${STORED_FIELDS.join(', ')}, quote_free${readsExtra ? ', extra' : ''} FROM price_items
                     WHERE price_list_id = @list AND seq >= @from AND seq < @to ${options.onlyAvailable ? 'AND available = 1' : ''}
                     ORDER BY seq)`,
      params,
    };
    yield* listPages<Uint8Array>(this.c.pageRunner, priceListId, this.positionBounds(priceListId), query);
  }

  changeRecords(changesOf: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null {
    return this.c.nativeRecords ? changeRecordPages(this.c.pageRunner, changesOf, specs, onlyAvailable) : null;
  }

  /**
   * XLSX rows, numbered from the spec's first row on in publication order. When every position
   * of the list holds a row and no filter applies (a count from the offer index tells: ~2 ms per
   * 100k rows), a row's number follows from its position. Otherwise (`only_available`, items
   * held back by quarantine) one grouped count gives each page's rows, so each page knows the
   * number of its first row; a page with gaps numbers its rows with row_number(). Both counts run
   * on a page thread, off the event loop.
   */
  private async *sheetRows(priceListId: number, spec: SheetRowSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    const bounds = this.positionBounds(priceListId);
    const [first, last] = bounds;
    if (first === null || last === null) return;
    const { expression, params } = compileSheetRow(spec);
    const filter = options.onlyAvailable ? 'AND available = 1' : '';
    const pageSql = (rowNumber: string) =>
      `SELECT CAST(group_concat(${expression}, '') AS BLOB)
         FROM (SELECT ${STORED_FIELDS.join(', ')}, quote_free, ${rowNumber} AS sheet_row FROM price_items
                WHERE price_list_id = @list AND seq >= @from AND seq < @to ${filter}
                ORDER BY seq)`;
    const runner = this.c.pageRunner;
    // BigInts bind as integers (a number binds as a real, and the row would be `5.0`).
    const byPosition = { sql: pageSql('seq - @row_offset'), params: { ...params, row_offset: BigInt(first - spec.firstRow) } };
    if (!options.onlyAvailable) {
      const rows = await pageThreadValue<number>(runner, 'SELECT count(*) FROM price_items WHERE price_list_id = @list', { list: priceListId });
      if (rows === last - first + 1) {
        yield* listPages<Uint8Array>(runner, priceListId, bounds, byPosition);
        return;
      }
    }
    const counts = JSON.parse(await pageThreadValue<string>(runner,
      `SELECT json_group_object(page, rows) FROM (SELECT ${pageIndexSql('seq', '@first')} AS page, count(*) AS rows
         FROM price_items WHERE price_list_id = @list ${filter} GROUP BY page)`,
      { list: priceListId, first: BigInt(first) },
    )) as Record<string, number>;
    const numbers = pageRowNumbers(spec.firstRow, last, new Map(Object.entries(counts).map(([page, rows]) => [Number(page), rows])));
    const counted = pageSql('@row_base + row_number() OVER (ORDER BY seq)');
    yield* listPages<Uint8Array>(runner, priceListId, bounds, (from, to) => {
      const page = numbers(from, to);
      return page.byPosition
        ? { sql: byPosition.sql, params: { ...params, row_offset: BigInt(page.offset) } }
        : { sql: counted, params: { ...params, row_base: BigInt(page.base) } };
    });
  }

  /** The list's first and last position (null, null when it has no items or does not exist). */
  private positionBounds(priceListId: number): [number | null, number | null] {
    // Two subqueries: SQLite answers a lone min() or max() from the primary key, both at once by a scan.
    return this.c.prepare(
        `SELECT (SELECT min(seq) FROM price_items WHERE price_list_id = @list), (SELECT max(seq) FROM price_items WHERE price_list_id = @list)`,
      )
      .raw(true)
      .get({ list: priceListId }) as [number | null, number | null];
  }
}

/** A spec of any format but the numbered sheet rows as one SQLite expression per record. */
function compileAny(spec: Exclude<RecordSpec, SheetRowSpec>): CompiledRecord {
  switch (spec.format) {
    case 'delimited':
      return compileRecord(spec);
    case 'json':
      return compileJsonRecord(spec);
    case 'xml':
      return compileXmlRecord(spec);
    case 'yml':
      return compileYmlRecord(spec);
  }
}
