import type pg from 'pg';
import type { RecordSpec } from '../../model/record-spec.js';
import type { PriceItem } from '../../model/price-item.js';
import { ITEM_COLUMNS, itemFromRow, LEGACY_ITEM_COLUMNS } from '../item-row.js';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, COPY_ROW_COLUMNS, itemCopyRows } from '../item-rows/copy-rows.js';
import { itemRowReader } from '../item-rows/native-item-rows.js';
import type { DialectItems } from '../sql/dialect.js';
import { changePages, changeRecordParts, changeRowsQuery, changeRowsSql, pageEndSql, sharedPageEnds } from '../sql/change-rows.js';
import type { ChangeRecords, ChangeRecordSpecs } from '../changes-types.js';
import type { DuplicateOffer, ItemRowReader, ItemRows, ReadItemsOptions, SequencedItem } from '../types.js';
import { compilePgRecord, type PgRecord } from './delimited-sql.js';
import { compilePgJsonRecord } from './json-sql.js';
import { compilePgXmlRecord } from './xml-sql.js';
import { compilePgYmlRecord } from './yml-sql.js';
import { CopyRecordsQuery, type CopyParser } from './copy-out.js';
import { CopyBytes } from './copy-bytes.js';
import { copyIn } from './copy-in.js';
import { nativeCopyPlan, type CopyRecordsModule } from './native-copy-records.js';
import { pageIndexSql, PAGES_IN_FLIGHT, recordPages } from './record-pages.js';
import { compilePgSheetRow, fillTextCells } from './sheet-row-sql.js';
import { pageRowNumbers } from '../sheet-row-numbers.js';
import type { SheetRowSpec } from '../../model/sheet-row.js';
import { STORED_FIELDS } from '../stored-fields.js';
import { literal } from './sql-literal.js';

/** What the item paths use of the dialect's pool. */
export interface PostgresConnection {
  pool: pg.Pool;
  /** Runs `work` on one pooled connection, discarding the connection if it fails. */
  withClient<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>;
  /** A query config that gives up after the request-path read timeout. */
  timed<T extends object>(config: T): T;
  /** The C module that builds pages over a COPY of the columns (native-copy-records.ts); null: the server's SQL builds them. */
  records: CopyRecordsModule | null;
}

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * The native reader's rows an append takes: each append is a transaction and a COPY, whose fixed
 * cost 2,000 rows a time (the domain's batch of items) paid 500 times for 1M items. At 8,000,
 * 300k rich items took PostgreSQL 4-15 % less CPU and published 1.116x as fast (rounds
 * 1.086-1.207), for +10-15 MiB of peak RSS; 16,000 was no faster (bench/RESULTS.md, "2026-11-27,
 * late evening").
 */
const ROWS_PER_APPEND = 8_000;

/** PostgreSQL's own item paths: COPY appends, keyset pages, records built by the server. */
export class PostgresItems implements DialectItems {
  readonly recordFormats: ReadonlySet<RecordSpec['format']> = new Set(['delimited', 'json', 'xml', 'yml', 'sheet-row'] as const);

  constructor(private readonly c: PostgresConnection) {}

  /**
   * COPY straight into price_items is the fast path. A repeated offer_id makes the unique index
   * fail the whole COPY (nothing of it stays); that batch is then copied into a temporary table
   * and inserted from there with ON CONFLICT DO NOTHING, whose RETURNING tells which rows were
   * duplicates. A bad publication pays twice for one batch; a good one never does.
   */
  async append(draftId: number, items: readonly SequencedItem[], rows: readonly ItemRows[] = []): Promise<DuplicateOffer[]> {
    if (items.length === 0 && rows.length === 0) return [];
    // The items JavaScript read as COPY text rows, the native reader's rows as binary ones (rowReader).
    const data: CopyData = { text: items.length > 0 ? itemCopyRows(draftId, items) : null, binary: rows.map((r) => r.bytes) };
    try {
      await this.c.withClient(async (client) => {
        // No WAL flush of its own: nothing reads a draft's rows but its publication, whose
        // commit flushes the WAL up to itself, these rows with it, and a crash before that drops
        // the draft either way. A flush a batch is ~500 for 1M items: here 300k rich items took
        // 6.7 s against 6.9 (4 alternating rounds, within the noise), more where a flush is slow.
        await client.query('BEGIN; SET LOCAL synchronous_commit TO off');
        try {
          await copyInto(client, 'price_items', data);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      });
      return [];
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    }
    return this.insertSkippingDuplicates(data);
  }

  rowReader(draftId: number): ItemRowReader | null {
    return itemRowReader(draftId, 'binary', ROWS_PER_APPEND);
  }

  private async insertSkippingDuplicates(data: CopyData): Promise<DuplicateOffer[]> {
    return this.c.withClient(async (client) => {
      await client.query('BEGIN');
      try {
        await client.query('CREATE TEMPORARY TABLE incoming_items (LIKE price_items) ON COMMIT DROP');
        await copyInto(client, 'incoming_items', data);
        // In seq order, so of two equal ids the first one stays, as in SQLite.
        const inserted = await client.query<{ seq: number }>(
          `INSERT INTO price_items (${COPY_ROW_COLUMNS}) SELECT ${COPY_ROW_COLUMNS} FROM incoming_items ORDER BY seq
           ON CONFLICT (price_list_id, offer_id) DO NOTHING RETURNING seq`,
        );
        const all = await client.query<{ seq: number; offer_id: string }>('SELECT seq, offer_id FROM incoming_items ORDER BY seq');
        await client.query('COMMIT');
        const kept = new Set(inserted.rows.map((r) => r.seq));
        return all.rows.filter(({ seq }) => !kept.has(seq));
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async *read(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]> {
    const batchSize = options.batchSize ?? 5000;
    // Keyset pages, each its own statement: a slow download holds no transaction or
    // connection between pages. A list is immutable, so the pages are consistent.
    const text = `SELECT seq, ${options.withExtra === false ? LEGACY_ITEM_COLUMNS : ITEM_COLUMNS} FROM price_items
                   WHERE price_list_id = $1 AND seq > $2 ${options.onlyAvailable ? 'AND available' : ''}
                   ORDER BY seq LIMIT $3`;
    let after = -1;
    for (;;) {
      const { rows } = await this.c.pool.query<unknown[]>(this.c.timed({ text, values: [priceListId, after, batchSize], rowMode: 'array' }));
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1][0]);
      yield rows.map((row) => itemFromRow(row, 1));
      if (rows.length < batchSize) return;
    }
  }

  async *render(priceListId: number, spec: RecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    if (spec.format === 'sheet-row') {
      yield* this.sheetRows(priceListId, spec, options);
      return;
    }
    const module = this.c.records;
    const native = module && nativeCopyPlan(spec);
    // COPY takes no bound parameters: the compilers write the profile's texts as literals. With
    // the C module the server sends only the plain columns, and the C builds the page's records.
    const { expression, join } = native ? { expression: native.select, join: null } : compilePgAny(spec);
    // Pages are ranges of positions, as SQLite's (sqlite/list-pages.ts), not keyset pages with a
    // LIMIT: on a list published since the table's statistics were taken (every new list, until
    // ANALYZE) the planner expects a handful of rows and reads the whole rest of the list for
    // each LIMIT page, then sorts it (100k items: ~14 ms a page instead of ~2 ms).
    const page = (from: number, to: number) =>
      `COPY (SELECT ${expression} FROM price_items ${join ?? ''}
              WHERE price_list_id = ${sqlInteger(priceListId)} AND seq >= ${sqlInteger(from)} AND seq < ${sqlInteger(to)}
                    ${options.onlyAvailable ? 'AND available' : ''}
              ORDER BY seq) TO STDOUT (FORMAT binary)`;
    const read = module && native
      ? async (from: number, to: number) => {
          const bytes = new CopyBytes(module.copyDataRun);
          try {
            const messages = await this.copyRecords(page(from, to), bytes);
            const records = await module.build(native.call, native.args, native.columnTypes, messages);
            return records === null || records.length === 0 ? [] : [records];
          } finally {
            // The build has read the messages (or the page failed): their buffer serves a later page.
            bytes.release();
          }
        }
      : (from: number, to: number) => this.copyRecords(page(from, to));
    // Both ends from the primary key (min and max each one index probe).
    const { rows } = await this.c.pool.query<[number | null, number | null]>(
      this.c.timed({ text: 'SELECT min(seq), max(seq) FROM price_items WHERE price_list_id = $1', values: [priceListId], rowMode: 'array' }),
    );
    yield* recordPages(rows[0], read);
  }

  /**
   * A changes answer's records built by the C module from a version's recorded copies
   * (ChangesRepository.records; sql/change-rows.ts), as a full export's pages are: the server
   * sends the copies' plain columns in offer_id order. Null without the module, or for specs
   * it does not build or one that reads `extra` (YML: the copies cannot compare its keys one by one).
   */
  changeRecords(changesOf: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null {
    const module = this.c.records;
    if (!module) return null;
    const list = sqlInteger(changesOf);
    const pageEnd = sharedPageEnds(async (after) => {
      // By the key's index, as the pages are read: on a list whose changes the statistics have
      // not seen, the planner's bitmap scan sorted every recorded offer for each page end (~8 ms
      // a page end for 10,000 offers, against ~1.5 ms).
      const results = (await this.c.withClient((client) =>
        client.query(this.c.timed({ text: inKeyOrder(pageEndSql(list, literal(after))), rowMode: 'array' })),
      )) as unknown as pg.QueryArrayResult<[string]>[];
      const ends = results[1].rows;
      return ends.length === 0 ? null : ends[0][0];
    });
    return changeRecordParts(specs, (spec, which) => {
      const native = nativeCopyPlan(spec);
      const rows = native && changeRowsQuery(native.columns, which, onlyAvailable);
      if (!native || !rows) return null;
      return changePages(
        pageEnd,
        async (after, upto) => {
          const copies = changeRowsSql(rows, list, literal(after), upto === null ? null : literal(upto));
          const bytes = new CopyBytes(module.copyDataRun);
          try {
            const messages = await this.copyRecords(`COPY (SELECT ${native.select} FROM (${copies}) AS copies ORDER BY offer_id) TO STDOUT (FORMAT binary)`, bytes);
            return await module.build(native.call, native.args, native.columnTypes, messages);
          } finally {
            bytes.release();
          }
        },
        PAGES_IN_FLIGHT,
      );
    });
  }

  /**
   * XLSX rows, numbered from the spec's first row on in publication order, as SQLite numbers
   * them (sqlite/items.ts): by position when every position between the first and the last row
   * read (the filter applied) holds one, which one count with the bounds tells; else from one
   * grouped count that gives each page its first row, a page with gaps numbering its rows with
   * row_number(). The texts the server marks are made into cells here (sheet-row-sql.ts).
   */
  private async *sheetRows(priceListId: number, spec: SheetRowSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    const list = sqlInteger(priceListId);
    const filter = options.onlyAvailable ? 'AND available' : '';
    const query = async (text: string) => (await this.c.pool.query<unknown[]>(this.c.timed({ text, rowMode: 'array' }))).rows;
    const [[first, last, rowCount]] = (await query(
      `SELECT min(seq), max(seq), count(*) FROM price_items WHERE price_list_id = ${list} ${filter}`,
    )) as [number | null, number | null, string][];
    if (first === null || last === null) return;
    const expression = compilePgSheetRow(spec);
    const page = (from: number, to: number, rowNumber: string) =>
      `COPY (SELECT ${expression} FROM (SELECT ${STORED_FIELDS.join(', ')}, quote_free, seq, ${rowNumber} AS sheet_row FROM price_items
               WHERE price_list_id = ${list} AND seq >= ${sqlInteger(from)} AND seq < ${sqlInteger(to)} ${filter}) AS r
             ORDER BY seq) TO STDOUT (FORMAT binary)`;
    const read = async (sql: string) => (await this.copyRecords(sql)).map((records) => fillTextCells(records, spec));
    // Every position holds a row (count over the positions' span, the filter included): numbered by position.
    if (Number(rowCount) === last - first + 1) {
      const offset = sqlInteger(first - spec.firstRow);
      yield* recordPages([first, last], (from, to) => read(page(from, to, `seq - ${offset}`)));
      return;
    }
    const counts = new Map(
      ((await query(
        `SELECT ${pageIndexSql('seq', sqlInteger(first))} AS page, count(*) FROM price_items WHERE price_list_id = ${list} ${filter} GROUP BY 1`,
      )) as [number, string][]).map(([index, rows]) => [Number(index), Number(rows)]),
    );
    const numbers = pageRowNumbers(spec.firstRow, last, counts);
    yield* recordPages([first, last], (from, to) => {
      const numbered = numbers(from, to);
      return read(page(from, to, numbered.byPosition ? `seq - ${sqlInteger(numbered.offset)}` : `row_number() OVER (ORDER BY seq) + ${sqlInteger(numbered.base)}`));
    });
  }

  /**
   * The records of one page: the server's C code builds and sends each (copy-out.ts); no
   * per-page aggregate, no result row to decode. The page is read by the primary key's index
   * scan, which hands the rows over in seq order: the planner's own choice, a bitmap scan and a
   * sort of the built records, cost the server ~21 % more CPU a page (15.6 against 12.9 ms for
   * 5,000 JSON records; bench/RESULTS.md, "2026-11-26, late night").
   */
  private async copyRecords(sql: string, parser?: CopyParser): Promise<Buffer[]> {
    return this.c.withClient((client) => client.query(this.c.timed(new CopyRecordsQuery(inKeyOrder(sql), parser))).records);
  }
}

/**
 * `sql` read by an index scan, not a bitmap scan (see copyRecords and changeRecords). SET LOCAL
 * lasts only as long as this one simple-query message's implicit transaction, so the pooled
 * connection keeps its settings.
 */
const inKeyOrder = (sql: string): string => `SET LOCAL enable_bitmapscan = off; ${sql}`;

/** A spec of any format but the numbered sheet rows as one PostgreSQL expression per record, its texts as literals, and a join the expression needs. */
function compilePgAny(spec: Exclude<RecordSpec, SheetRowSpec>): PgRecord {
  switch (spec.format) {
    case 'delimited':
      return { expression: compilePgRecord(spec), join: null };
    case 'json':
      return { expression: compilePgJsonRecord(spec), join: null };
    case 'xml':
      return { expression: compilePgXmlRecord(spec), join: null };
    case 'yml':
      return compilePgYmlRecord(spec);
  }
}

function sqlInteger(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}

/** A batch's rows: the items JavaScript read, in COPY's text format; the native reader's, in its binary format. */
interface CopyData {
  text: Buffer | null;
  binary: readonly Buffer[];
}

/** The batch's rows into `table`: one COPY for each format it has rows in (item-rows/copy-rows.ts). */
async function copyInto(client: pg.ClientBase, table: string, data: CopyData): Promise<void> {
  if (data.text !== null) await copyIn(client, `COPY ${table} (${COPY_ROW_COLUMNS}) FROM STDIN`, [data.text]);
  if (data.binary.length > 0) await copyIn(client, `COPY ${table} (${COPY_ROW_COLUMNS}) FROM STDIN (FORMAT binary)`, [BINARY_COPY_HEADER, ...data.binary, BINARY_COPY_TRAILER]);
}
