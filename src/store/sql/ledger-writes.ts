import { setImmediate as nextTurn } from 'node:timers/promises';
import { RUN_ID_SPACE, RUN_SPAN_MS, type DeliveryRuns } from '../delivery-types.js';
import { bit, type DeliverySql, type Query } from './delivery-sql.js';
import { statementRows, type ColumnKind } from './dialect.js';
import { lastAtOf, orderedRun, repeatedOf, type OrderedRun } from './ledger-runs.js';

/*
 * A batch's runs as statements. A seldom consumer's first run in the batch *continues* its
 * newest stored run when that run has the same shape and room, began within RUN_SPAN_MS and
 * ended at least SELDOM_AFTER_MS before: a fetcher revalidating every 15 minutes made a row an
 * answer (~260 bytes on PostgreSQL, ~130 on SQLite, indexes included), now a row an hour
 * (bench/RESULTS.md, "2026-12-06, night"). Plain SQL for both dialects, in the batch's one
 * transaction (SQLite runs them on its write thread), over the runs as a table of rows
 * (SqlDialect.rowsQuery: a VALUES list on SQLite, one array a column on PostgreSQL):
 *
 * 1. UPDATE … FROM (the rows) appends the runs that may continue: their records' triples, `at`
 *    in milliseconds since the epoch, which ledger-runs.ts repeatedAt tells from an offset;
 * 2. INSERT … SELECT … FROM (the rows) adds the runs of every store that has a run the UPDATE
 *    tried: its other runs, and each tried one whose UPDATE did not apply, told by the absence of
 *    its consumer's row that ends at the run's last record, began no later than its first and
 *    holds at least its records after the first. Only the UPDATE makes such a row, but for
 *    another instance's answer of the same consumer at the same millisecond (one run lost then,
 *    which the ledger allows);
 * 3. every other store's runs (all of a busy server's batch) go in plainly, no guard to
 *    evaluate: one binary COPY on PostgreSQL (SqlDialect.copyRows), INSERTs of the rows on SQLite.
 *
 * A store's rows go in the order its runs came (its page lists answers of one millisecond by id).
 *
 * A consumer's runs still never interleave: only its newest row is continued, and only by
 * records at least SELDOM_AFTER_MS newer than its last. Across instances, PostgreSQL's row lock
 * orders two UPDATEs of one row: the second sees the first's `last_at` and inserts a run of its own.
 */

/**
 * Only a consumer whose stored run ended this long before its next answer has the run continued.
 * An UPDATE rewrites the whole row, `repeated` included, and costs PostgreSQL about three
 * INSERTs: continuing 5,000 consumers answered every second took 0.7–1.0 s a batch against 0.2 s
 * (scratch, "2026-12-06, night"). A consumer answering more often makes its runs in the queue,
 * as before; this bounds a continued run to RUN_SPAN_MS / SELDOM_AFTER_MS + 1 answers' rewrites.
 */
export const SELDOM_AFTER_MS = 60_000;
/** Consumers whose last answer a writer remembers, so a frequent one is not even tried; past it the oldest goes. */
const REMEMBERED_CONSUMERS = 100_000;

const COLUMNS = [
  'store_id', 'key_id', 'at', 'address', 'format', 'profile_id', 'only_available', 'version', 'status', 'bytes_sent', 'finished',
  'duration_ms', 'client_class', 'client_address', 'last_at', 'repeats', 'repeated',
] as const;
const KINDS: Record<(typeof COLUMNS)[number], ColumnKind> = {
  store_id: 'text', key_id: 'text', at: 'time', address: 'text', format: 'text', profile_id: 'bigint', only_available: 'boolean',
  version: 'integer', status: 'integer', bytes_sent: 'bigint', finished: 'boolean', duration_ms: 'integer', client_class: 'text',
  client_address: 'text', last_at: 'time', repeats: 'integer', repeated: 'text',
};
/** The plain INSERT's rows: the columns. */
const ROW_KINDS: readonly ColumnKind[] = COLUMNS.map((c) => KINDS[c]);
/** The guarded INSERT's rows: the columns, then whether the run may have continued a stored one (1/0). */
const INSERT_KINDS: readonly ColumnKind[] = [...ROW_KINDS, 'integer'];
/** What a continued run must share with the stored one, besides its consumer. */
const SHAPE = ['key_id', 'address', 'format', 'profile_id', 'only_available', 'version', 'status', 'finished'] as const;
/**
 * The UPDATE's rows, in order (pushContinuation's): the consumer, the shape, then `ends_by`
 * (SELDOM_AFTER_MS before the run's first record: the stored run must end by then), the run's
 * last record, `since` (RUN_SPAN_MS before it: the stored run must begin after), its records
 * and their triples.
 */
const CONTINUE_COLUMNS = ['store_id', 'client_class', 'client_address', ...SHAPE, 'ends_by', 'last_at', 'since', 'records', 'triples'] as const;
const CONTINUE_KIND_OF: Record<(typeof CONTINUE_COLUMNS)[number], ColumnKind> = { ...KINDS, ends_by: 'time', since: 'time', records: 'integer', triples: 'text' };
const CONTINUE_KINDS: readonly ColumnKind[] = CONTINUE_COLUMNS.map((c) => CONTINUE_KIND_OF[c]);
/** Runs per statement: 18 parameters × 500 stays far below SQLite's and PostgreSQL's bounds. */
const ROWS_PER_STATEMENT = 500;
/** Runs a batch's statements take from the main thread between two turns of its event loop: ~1 ms. */
const RUNS_PER_TURN = 1_000;

const column = (n: number) => `v.column${n}`;
/** The guarded INSERT's column of a ledger column. */
const valueOf = (name: (typeof COLUMNS)[number]) => column(COLUMNS.indexOf(name) + 1);
/** The UPDATE's column of that name. */
const continued = (name: (typeof CONTINUE_COLUMNS)[number]) => column(CONTINUE_COLUMNS.indexOf(name) + 1);

/**
 * The consumer's newest row that may still take the run (one that began after `since` ends after it too).
 * The UPDATE below joins the ledger on it from a subquery with a LIMIT (of a statement's most rows):
 * PostgreSQL flattens a subquery without one, and then hashed the whole ledger to join it on
 * this SubPlan (60 ms a batch at 30,000 rows, growing with the table) instead of looking each
 * row up by its id.
 */
const NEWEST_OF_CONSUMER = `SELECT n.id FROM delivery_ledger n
   WHERE n.store_id = ${continued('store_id')} AND n.last_at >= ${continued('since')}
     AND n.client_class = ${continued('client_class')} AND n.client_address = ${continued('client_address')}
   ORDER BY n.last_at DESC, n.id DESC LIMIT 1`;

const continueSql = (d: DeliverySql, rows: number): string => `UPDATE delivery_ledger SET
    last_at = ${continued('last_at')},
    repeats = delivery_ledger.repeats + ${continued('records')},
    repeated = CASE WHEN delivery_ledger.repeated IS NULL THEN '[' || ${continued('triples')} || ']'
      ELSE substr(delivery_ledger.repeated, 1, length(delivery_ledger.repeated) - 1) || ',' || ${continued('triples')} || ']' END
  FROM (SELECT v.*, (${NEWEST_OF_CONSUMER}) AS newest FROM (${d.rowsQuery(CONTINUE_KINDS, rows)}) AS v LIMIT ${ROWS_PER_STATEMENT}) AS v
  WHERE delivery_ledger.id = v.newest
    AND ${SHAPE.map((c) => `delivery_ledger.${c} IS NOT DISTINCT FROM ${continued(c)}`).join(' AND ')}
    AND delivery_ledger.last_at <= ${continued('ends_by')} AND delivery_ledger.at >= ${continued('since')}
    AND delivery_ledger.repeats + ${continued('records')} < ${RUN_ID_SPACE}`;

/** Runs none of which may continue a stored one (a busy server's batches): no guard to evaluate. */
const plainInsertSql = (d: DeliverySql, rows: number): string =>
  `INSERT INTO delivery_ledger (${COLUMNS.join(', ')}) ${d.rowsQuery(ROW_KINDS, rows)}`;

const guardedInsertSql = (d: DeliverySql, rows: number): string => `INSERT INTO delivery_ledger (${COLUMNS.join(', ')})
  SELECT ${COLUMNS.map((_, i) => column(i + 1)).join(', ')} FROM (${d.rowsQuery(INSERT_KINDS, rows)}) AS v
  WHERE ${column(COLUMNS.length + 1)} = 0 OR NOT EXISTS (SELECT 1 FROM delivery_ledger n
    WHERE n.store_id = ${valueOf('store_id')} AND n.last_at = ${valueOf('last_at')} AND n.client_class = ${valueOf('client_class')}
      AND n.client_address = ${valueOf('client_address')} AND n.at <= ${valueOf('at')} AND n.repeats >= ${valueOf('repeats')} + 1)`;

/**
 * One of the three statements, for up to ROWS_PER_STATEMENT rows (as the dialect splits them):
 * its full-size text built once (a busy ledger sends dozens a second), and kept prepared by
 * PostgreSQL, whose rowsQuery is one text for any number of rows.
 */
class RowsStatement {
  private readonly full: string;

  constructor(
    private readonly d: DeliverySql,
    private readonly kinds: readonly ColumnKind[],
    private readonly text: (d: DeliverySql, rows: number) => string,
    private readonly prepared: string,
  ) {
    this.full = text(d, ROWS_PER_STATEMENT);
  }

  /** The statement writing these rows' values, in row order. */
  query(values: readonly unknown[]): Query {
    const rows = values.length / this.kinds.length;
    const sql = rows === ROWS_PER_STATEMENT ? this.full : this.text(this.d, rows);
    return { sql, params: this.d.rowsParams(this.kinds, values), prepared: this.prepared };
  }
}

/** Writes a batch's runs. */
export class LedgerWrites {
  private readonly update: RowsStatement;
  private readonly guardedInsert: RowsStatement;
  private readonly plainInsert: RowsStatement;
  /** Per consumer, the newest answer this writer wrote (in the order set: the first is the oldest). */
  private readonly lastAnswer = new Map<string, number>();

  constructor(private readonly d: DeliverySql) {
    this.update = new RowsStatement(d, CONTINUE_KINDS, continueSql, 'ledger_continue');
    this.guardedInsert = new RowsStatement(d, INSERT_KINDS, guardedInsertSql, 'ledger_insert_guarded');
    this.plainInsert = new RowsStatement(d, ROW_KINDS, plainInsertSql, 'ledger_insert');
  }

  /**
   * The statements that write a batch, in order (one transaction), built a slice at a time with
   * the event loop turning between slices: built at once, a busy server's batch of 5,000 runs
   * held the main thread 5–10 ms every second, and the requests that came meanwhile waited that
   * long, most of the 304s' p99 across 5,000 keys (bench/RESULTS.md, "2026-12-08").
   */
  async statements(batch: DeliveryRuns): Promise<Query[]> {
    const { d } = this;
    const runs: OrderedRun[] = [];
    const mayContinue: boolean[] = [];
    for (let i = 0; i < batch.runs; i++) {
      if (i > 0 && i % RUNS_PER_TURN === 0) await nextTurn();
      runs.push(orderedRun(batch, i));
      mayContinue.push(this.seldomFirst(batch, i, runs[i]));
    }
    // In one order across instances: two UPDATEs lock their rows in it, so they never deadlock.
    const continuing = runs.map((_, i) => i).filter((i) => mayContinue[i]).sort((a, b) => compareConsumers(batch, a, b));
    const { guarded, plain } = byStore(batch, mayContinue);
    const row = (values: unknown[], i: number) => pushRow(d, values, batch, i, runs[i], null);
    return [
      ...await inStatements(d, continuing, ROWS_PER_STATEMENT, (values, i) => pushContinuation(d, values, batch, i, runs[i]), (values) => this.update.query(values)),
      ...await inStatements(d, guarded, ROWS_PER_STATEMENT, (values, i) => pushRow(d, values, batch, i, runs[i], mayContinue[i]), (values) => this.guardedInsert.query(values)),
      // Every other store's runs plainly: on PostgreSQL a binary COPY a slice (encoding a batch's 5,000 rows at once took ~5 ms).
      ...(d.copyRows
        ? await inStatements(d, plain, RUNS_PER_TURN, row, (values) => d.copyRows!('delivery_ledger', COLUMNS, ROW_KINDS, values))
        : await inStatements(d, plain, ROWS_PER_STATEMENT, row, (values) => this.plainInsert.query(values))),
    ];
  }

  /**
   * Whether run `i` may continue a stored run: its consumer's first in the batch, and not
   * answered by this writer within SELDOM_AFTER_MS before (the UPDATE would not apply; another
   * instance's answers only make the gap shorter). Remembers the consumer's newest answer.
   */
  private seldomFirst(batch: DeliveryRuns, i: number, run: OrderedRun): boolean {
    const consumer = `${batch.storeId[i]}\n${batch.clientClass[i]}\n${batch.clientAddress[i]}`;
    // For the consumer's first run in the batch, its last answer before the batch (a later run follows and is not tried).
    const last = this.lastAnswer.get(consumer);
    const at = lastAtOf(run);
    if (last === undefined || at > last) {
      // Set anew, so the map's order is the order of last answers and the oldest goes first.
      this.lastAnswer.delete(consumer);
      if (this.lastAnswer.size >= REMEMBERED_CONSUMERS) this.lastAnswer.delete(this.lastAnswer.keys().next().value as string);
      this.lastAnswer.set(consumer, at);
    }
    return !batch.follows[i] && (last === undefined || run.atMs - last >= SELDOM_AFTER_MS);
  }
}

/**
 * The batch's runs by store (a stable sort: each store's in the order they came, which is the
 * order its page lists answers of one millisecond in, by the rows' ids). A store with a run that
 * may continue a stored one has all its runs inserted by the guarded INSERT; every other store's
 * go in plainly. In store order, each store's rows go in next to each other in the ledger's index:
 * runs in the order they came, each into another store's place, cost PostgreSQL ~1 µs a row more
 * (bench/RESULTS.md, "2026-12-07, night").
 */
function byStore(batch: DeliveryRuns, mayContinue: readonly boolean[]): { guarded: number[]; plain: number[] } {
  const order = Array.from({ length: batch.runs }, (_, i) => i).sort((a, b) => compareTexts(batch.storeId[a], batch.storeId[b]));
  const guarded: number[] = [];
  const plain: number[] = [];
  for (let start = 0, end = 0; start < order.length; start = end) {
    let anyTried = false;
    for (end = start; end < order.length && batch.storeId[order[end]] === batch.storeId[order[start]]; end++) anyTried ||= mayContinue[order[end]];
    (anyTried ? guarded : plain).push(...order.slice(start, end));
  }
  return { guarded, plain };
}

/** Statements of the runs `indexes`, at most `most` a statement as the dialect splits them, the event loop turning before each. */
async function inStatements(
  d: DeliverySql, indexes: readonly number[], most: number, push: (values: unknown[], i: number) => void, statement: (values: unknown[]) => Query,
): Promise<Query[]> {
  const statements: Query[] = [];
  for (const [start, end] of statementRows(d, indexes.length, most)) {
    await nextTurn();
    const values: unknown[] = [];
    for (const i of indexes.slice(start, end)) push(values, i);
    statements.push(statement(values));
  }
  return statements;
}

const compareConsumers = (c: DeliveryRuns, a: number, b: number): number =>
  compareTexts(c.storeId[a], c.storeId[b]) || compareTexts(c.clientClass[a], c.clientClass[b]) || compareTexts(c.clientAddress[a], c.clientAddress[b]);
const compareTexts = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function pushContinuation(d: DeliverySql, params: unknown[], c: DeliveryRuns, i: number, run: OrderedRun): void {
  const lastAt = lastAtOf(run);
  const triples = [run.atMs, run.bytesSent, run.durationMs];
  for (let r = 0; r < run.repeated.length; r += 3) triples.push(run.atMs + run.repeated[r], run.repeated[r + 1], run.repeated[r + 2]);
  params.push( // CONTINUE_COLUMNS' order
    c.storeId[i], c.clientClass[i], c.clientAddress[i],
    c.keyId[i], c.address[i], c.format[i], c.profileId[i], bit(c.onlyAvailable[i]), c.version[i], c.status[i], bit(c.finished[i]),
    d.timeParam(new Date(run.atMs - SELDOM_AFTER_MS)), d.timeParam(new Date(lastAt)), d.timeParam(new Date(lastAt - RUN_SPAN_MS)),
    run.repeated.length / 3 + 1, triples.join(','),
  );
}

/** The row of run `i`, straight from the batch's columns (no record object per answer); `mayContinue` null for a plain INSERT. */
function pushRow(d: DeliverySql, params: unknown[], c: DeliveryRuns, i: number, run: OrderedRun, mayContinue: boolean | null): void {
  params.push(
    c.storeId[i], c.keyId[i], d.timeParam(new Date(run.atMs)), c.address[i], c.format[i], c.profileId[i], bit(c.onlyAvailable[i]), c.version[i],
    c.status[i], run.bytesSent, bit(c.finished[i]), run.durationMs, c.clientClass[i], c.clientAddress[i],
    d.timeParam(new Date(lastAtOf(run))), run.repeated.length / 3, repeatedOf(run),
  );
  if (mayContinue !== null) params.push(mayContinue ? 1 : 0);
}
