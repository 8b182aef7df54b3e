import { AppError, type InputProblem } from '../errors/app-error.js';
import { DEFAULT_HISTORY_VERSIONS, type PublicationDiff } from '../model/versions.js';
import type { Metrics } from '../metrics/interface.js';
import type { PriceListRecord, SequencedItem, Database } from '../store/types.js';
import { warningsOf, type FeedWarning } from '../model/feed-check.js';
import { publicationTallies } from './feed-check.js';
import { getGuard, judge } from './guard.js';
import { sweep } from './versions.js';
import { normalizeItem } from './item-validation.js';
import { InvalidJson, type SourceRow } from './publication-source.js';

/**
 * Items handed to the store at a time. A publication holds at most two batches (one being read,
 * one being written), so this sets its memory: at 20,000 rich items a 1M-item publication
 * peaked at +680 MiB RSS, garbage of short-lived batches included; at 2,000, ~+190 MiB.
 * SQLite's append thread still commits ~20,000 rows at a time, over several batches
 * (store/sqlite/append-worker.ts): a commit per batch made 1M lean items publish ~1.6× slower.
 */
export const PUBLISH_BATCH_SIZE = 2_000;
/** Bad rows listed in one answer; the count covers them all. */
const MAX_REPORTED_PROBLEMS = 1000;

export interface PublishOptions {
  /** Called every PUBLISH_BATCH_SIZE rows with the rows read so far. */
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
export async function publishPriceList(db: Database, storeId: string, rows: AsyncIterable<SourceRow>, options: PublishOptions = {}): Promise<PublishedVersion> {
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

/** publishPriceList without the metrics. */
async function publishUnmeasured(db: Database, storeId: string, rows: AsyncIterable<SourceRow>, options: PublishOptions): Promise<PublishedVersion> {
  const owner = await db.stores.get(storeId);
  if (!owner) throw new AppError('store_not_found', `no store with id "${storeId}"`);

  const draft = await db.priceLists.beginPublication(storeId);
  const tallies = publicationTallies(owner);
  const problems: (InputProblem & { row: number })[] = [];
  let problemCount = 0;
  let rowNumber = 0;
  const report = (row: number, position: string, reason: string) => {
    problemCount++;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push({ row, position, reason });
  };

  let seq = 0;
  let availableCount = 0;
  let diff: PublicationDiff;
  let list: PriceListRecord;
  const currencies = new Set<string>();
  const categoryPaths = new Set<string>();
  let batch: SequencedItem[] = [];
  let positions: [row: number, position: string][] = [];
  // One append in flight while the next batch is read and validated: the database and the
  // parsing overlap instead of taking turns (bench/publish.ts measured the difference). A full
  // batch waits for the append before it, so no more than two batches are ever held: the
  // source is not read further ahead of the database than that.
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    const [sent, sentPositions, firstSeq] = [batch, positions, batch[0].seq];
    const sentCount = sent.length;
    batch = [];
    positions = [];
    await inFlight;
    // Only the count and positions are kept while the store works: the items are its to free.
    const appended = draft.append(sent).then((duplicates) => {
      for (const duplicate of duplicates) {
        const [row, position] = sentPositions[duplicate.seq - firstSeq];
        report(row, position, `offer_id "${duplicate.offer_id}" repeats an earlier item`);
      }
      options.onProgress?.(firstSeq + sentCount);
    });
    // Kept from rejecting unobserved until awaited; the error surfaces at the next await.
    appended.catch(() => undefined);
    inFlight = appended;
  };

  try {
    for await (const row of rows) {
      rowNumber++;
      if (row.raw instanceof InvalidJson) {
        report(rowNumber, row.position, `not valid JSON: ${row.raw.message}`);
        continue;
      }
      const result = normalizeItem(row.raw, owner.currency, row.text, options.maxFieldChars);
      if (result.problems) {
        report(rowNumber, row.position, result.problems.join('; '));
        continue;
      }
      const item = result.item;
      for (const tally of tallies) tally.add(item);
      if (item.available) availableCount++;
      currencies.add(item.currency);
      categoryPaths.add(item.category ?? '');
      positions.push([rowNumber, row.position]);
      batch.push({ seq: seq++, item });
      if (batch.length >= PUBLISH_BATCH_SIZE) await flush();
    }
    await flush();
    await inFlight;
    await draft.appended();
    if (seq === 0 && problemCount === 0) report(0, 'file', 'the price list has no items; an empty list would wipe the catalogue, so it is refused');
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
    diff = await judge(db, draft.id, latest, policy, options.force, seq);
    list = await draft.commit(
      { item_count: seq, available_count: availableCount, currencies: [...currencies].sort(), category_paths: [...categoryPaths] },
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
