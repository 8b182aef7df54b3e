import { AppError, type InputProblem } from '../errors/app-error.js';
import { DEFAULT_HISTORY_VERSIONS, type PublicationDiff } from '../model/versions.js';
import type { Metrics } from '../metrics/interface.js';
import type { ItemRowReader, ItemRows, PriceListRecord, SequencedItem, Database } from '../store/types.js';
import { warningsOf, type FeedWarning } from '../model/feed-check.js';
import { publicationTallies } from './feed-check.js';
import { getGuard, judge } from './guard.js';
import { sweep } from './versions.js';
import { normalizeItem } from './item-validation.js';
import type { Readable } from 'node:stream';
import { InvalidJson, type ItemPositions, RawItems, readSource, type SourceFormat, type SourceOptions, type SourceRow } from './publication-source.js';
import { DEFAULT_MAX_FIELD_CHARS } from '../config/config.js';
import type { FeedCheckTally } from '../model/feed-check.js';

/**
 * Items handed to the store at a time. A publication holds at most two batches (one being read,
 * one being written), so this sets its memory: at 20,000 rich items a 1M-item publication
 * peaked at +680 MiB RSS, garbage of short-lived batches included; at 2,000, ~+190 MiB.
 * SQLite's append thread still commits ~20,000 rows at a time, over several batches
 * (store/sqlite/append-worker.ts): a commit per batch made 1M lean items publish ~1.6× slower.
 * A store's native reader may ask for more of its rows a batch (ItemRowReader.rowsPerAppend).
 */
export const PUBLISH_BATCH_SIZE = 2_000;
/** Bad rows listed in one answer; the count covers them all. */
const MAX_REPORTED_PROBLEMS = 1000;

export interface PublishOptions {
  /** Called as each batch is stored, with the rows read so far. */
  onProgress?: (rowsRead: number) => void;
  /** `publish --force`: skip the guard for a deliberate large change (the diff still says what tripped). */
  force?: boolean;
  /** HISTORY_VERSIONS: published versions kept per store. */
  keepVersions?: number;
  /** The longest text field, in characters (MAX_FIELD_CHARS); a longer one is a bad row. */
  maxFieldChars?: number;
  /** Counts the publication by verdict, with its seconds (the serving process's metrics; none for the CLI). */
  metrics?: Metrics;
}

/**
 * A publication's answer: the version stored, whether it is served, its diff (CONTRACT §10),
 * and the feed check's warnings about it (CONTRACT §14: never a refusal).
 */
export type PublishedVersion = PriceListRecord & { state: 'latest' | 'held'; diff: PublicationDiff; warnings: FeedWarning[] };

/**
 * Validates every row and publishes the list as the store's new latest, atomically.
 * If any row is bad, nothing is published, every bad row is reported, and the previous
 * list stays latest. The feed check's rules run over the items as they pass (no second read).
 * A good list then passes the store's guard (CONTRACT §10): it is published, published with
 * some items quarantined, or stored as a held version. Counted in `options.metrics` by that
 * verdict (`published`, `quarantined`, `held`), or `refused` for a bad row or file.
 */
export async function publishPriceList(db: Database, storeId: string, rows: AsyncIterable<SourceRow | RawItems>, options: PublishOptions = {}): Promise<PublishedVersion> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const list = await publishUnmeasured(db, storeId, rows, options);
    const verdict = list.diff.verdict === 'held' ? 'held' : list.diff.verdict === 'published_with_quarantine' ? 'quarantined' : 'published';
    options.metrics?.publication(verdict, seconds());
    return list;
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_publication') options.metrics?.publication('refused', seconds());
    throw error;
  }
}

/**
 * A publication's rows as publishPriceList reads them best: JSON and NDJSON items unparsed, for
 * the store's native reader, and a JSON array's items and CSV records framed natively where the
 * store can.
 */
export function readPublication(db: Database, input: Readable, format: SourceFormat, options: Omit<SourceOptions, 'raw' | 'frameJsonItems' | 'frameCsvRecords'> = {}): AsyncIterable<SourceRow | RawItems> {
  return readSource(input, format, { ...options, raw: true, frameJsonItems: db.jsonItemFramer?.() ?? null, frameCsvRecords: db.csvRecordFramer?.() ?? null });
}

/** publishPriceList without the metrics. */
async function publishUnmeasured(db: Database, storeId: string, rows: AsyncIterable<SourceRow | RawItems>, options: PublishOptions): Promise<PublishedVersion> {
  const owner = await db.stores.get(storeId);
  if (!owner) throw new AppError('store_not_found', `no store with id "${storeId}"`);

  const draft = await db.priceLists.beginPublication(storeId);
  const tallies = publicationTallies(owner);
  const reader = usableReader(draft.rowReader ?? null, tallies);
  const maxFieldChars = options.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
  const problems: (InputProblem & { row: number })[] = [];
  let problemCount = 0;
  /** Rows read so far. A row's seq is its ordinal (rows read before it): the same as its place among the items when every row is good, and a list with a bad row is never committed. */
  let rowsRead = 0;
  const report = (row: number, position: string, reason: string) => {
    problemCount++;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push({ row, position, reason });
  };

  let itemCount = 0;
  let availableCount = 0;
  let diff: PublicationDiff;
  let list: PriceListRecord;
  const currencies = new Set<string>();
  const categoryPaths = new Set<string>();
  // A row is its bytes, not objects: where the store takes more of them an append, a batch holds more.
  const rowsWorth = Math.max(PUBLISH_BATCH_SIZE, reader?.reader.rowsPerAppend ?? 0);
  let batch = new Batch(rowsWorth);
  // One append in flight while the next batch is read and validated: the database and the
  // parsing overlap instead of taking turns (bench/publish.ts measured the difference). A full
  // batch waits for the append before it, so no more than two batches are ever held: the
  // source is not read further ahead of the database than that.
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (batch.size === 0) return;
    const sent = batch;
    const readBefore = rowsRead;
    batch = new Batch(rowsWorth);
    await inFlight;
    // Only the positions are kept while the store works: the items are its to free.
    const appended = draft.append(sent.items, sent.rows).then((duplicates) => {
      for (const { seq, offer_id } of duplicates) report(seq + 1, sent.positionOf(seq), `offer_id "${offer_id}" repeats an earlier item`);
      options.onProgress?.(readBefore);
    });
    sent.items = [];
    sent.rows = [];
    // Kept from rejecting unobserved until awaited; the error surfaces at the next await.
    appended.catch(() => undefined);
    inFlight = appended;
  };

  /** One row through the domain's rules (item-validation.ts). */
  const takeRow = (row: SourceRow, seq: number) => {
    if (row.raw instanceof InvalidJson) return report(seq + 1, row.position, `not valid JSON: ${row.raw.message}`);
    const result = normalizeItem(row.raw, owner.currency, row.text, maxFieldChars);
    if (result.problems) return report(seq + 1, row.position, result.problems.join('; '));
    const item = result.item;
    for (const tally of tallies) tally.add(item, seq);
    if (item.available) availableCount++;
    currencies.add(item.currency);
    categoryPaths.add(item.category ?? '');
    itemCount++;
    batch.take({ seq, item }, row.position);
  };

  /** Items as texts: the store's reader takes what it can straight into rows, the rules read the rest. */
  const takeTexts = async (group: RawItems, first: number) => {
    if (reader === null) {
      // A group is a slice's items (up to ~7,000 lean ones): flushed as it goes, to hold no more than a batch of items.
      for (let k = 0; k < group.count; k++) {
        takeRow(group.row(k), first + k);
        if (batch.full) await flush();
      }
      return;
    }
    const read = reader.reader.read(group.bytes, group.bounds, first, owner.currency, maxFieldChars, group.columns);
    for (const k of read.left) takeRow(group.row(k), first + k);
    if (read.accepted === 0) return;
    itemCount += read.accepted;
    availableCount += read.available;
    for (const currency of read.currencies.split('\0')) if (currency !== '') currencies.add(currency);
    const paths = read.categories.split('\0');
    paths.pop();
    for (const path of paths) categoryPaths.add(path);
    tallies.forEach((tally, t) => tally.addCounted(read.accepted, (rule) => read.ruleCounts[reader.countAt[t].get(rule)!]));
    batch.takeRows({ bytes: read.rows, count: read.accepted }, group.positions, first);
  };

  try {
    for await (const entry of rows) {
      if (entry instanceof RawItems) {
        const first = rowsRead;
        rowsRead += entry.count;
        await takeTexts(entry, first);
      } else {
        takeRow(entry, rowsRead++);
      }
      if (batch.full) await flush();
    }
    await flush();
    await inFlight;
    await draft.appended();
    if (itemCount === 0 && problemCount === 0) report(0, 'file', 'the price list has no items; an empty list would wipe the catalogue, so it is refused');
    if (problemCount > 0) {
      // Duplicates are found a batch later than other problems: list them all in file order.
      problems.sort((a, b) => a.row - b.row);
      throw new AppError('invalid_publication', `${problemCount} bad row(s); nothing was published and the previous price list stays latest`, {
        problems: problems.map(({ position, reason }) => ({ position, reason })),
        problemCount,
      });
    }
    const [latest, policy] = await Promise.all([db.priceLists.latest(storeId), getGuard(db, storeId)]);
    // Compared in the database: the draft's rows are already there.
    diff = await judge(db, draft.id, latest, policy, options.force, itemCount);
    list = await draft.commit(
      { item_count: itemCount, available_count: availableCount, currencies: [...currencies].sort(), category_paths: [...categoryPaths] },
      {
        hold: diff.verdict === 'held',
        quarantine: diff.verdict === 'published_with_quarantine' ? policy : null,
        diff: JSON.stringify(diff),
        keepVersions: options.keepVersions ?? DEFAULT_HISTORY_VERSIONS,
      },
    );
  } catch (error) {
    await inFlight.catch(() => undefined);
    await draft.abort();
    throw error;
  }
  // After the commit, outside the try: nothing may abort a committed version.
  await sweep(db, storeId);
  return { ...list, state: diff.verdict === 'held' ? 'held' : 'latest', diff, warnings: warningsOf(tallies.map((tally) => tally.result())) };
}

/** What one append sends: items the rules read, rows the store's reader made, and where each came from. */
class Batch {
  items: SequencedItem[] = [];
  rows: ItemRows[] = [];
  size = 0;
  private readonly positions = new Map<number, string>();
  private readonly groups: { first: number; positions: ItemPositions }[] = [];

  /** `rowsWorth`: the store reader's rows a batch holds in place of PUBLISH_BATCH_SIZE items. */
  constructor(private readonly rowsWorth: number) {}

  /** Holds a batch's worth: PUBLISH_BATCH_SIZE items, `rowsWorth` rows, or the like of both. */
  get full(): boolean {
    return this.items.length / PUBLISH_BATCH_SIZE + (this.size - this.items.length) / this.rowsWorth >= 1;
  }

  take(item: SequencedItem, position: string): void {
    this.items.push(item);
    this.positions.set(item.seq, position);
    this.size++;
  }

  /** `positions`: where the rows' items stood; not their group, whose bytes the batch need not hold. */
  takeRows(rows: ItemRows, positions: ItemPositions, first: number): void {
    this.rows.push(rows);
    this.groups.push({ first, positions });
    this.size += rows.count;
  }

  /** Where the item of `seq` stood in the file (for a duplicate's problem). */
  positionOf(seq: number): string {
    const position = this.positions.get(seq);
    if (position !== undefined) return position;
    const { first, positions } = this.groups.find(({ first, positions }) => seq >= first && seq < first + positions.count)!;
    return positions.at(seq - first);
  }
}

/**
 * The draft's native reader, with each tally's rules as indexes into its counts; null without
 * one, or when it does not count exactly the rules publishing counts (a rule added here and not
 * there): every item is then read by the rules, with the same answer.
 */
function usableReader(reader: ItemRowReader | null, tallies: readonly FeedCheckTally[]): { reader: ItemRowReader; countAt: Map<string, number>[] } | null {
  if (reader === null) return null;
  const countAt = tallies.map((tally) => new Map(tally.itemRuleIds().map((rule) => [rule, reader.rules.indexOf(`${tally.result().format}/${rule}`)])));
  const ruleCount = countAt.reduce((sum, rules) => sum + rules.size, 0);
  if (ruleCount !== reader.rules.length || countAt.some((rules) => [...rules.values()].some((at) => at < 0))) return null;
  return { reader, countAt };
}
