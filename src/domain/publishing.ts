import { AppError, type InputProblem } from '../errors/app-error.js';
import type { PriceListRecord, SequencedItem, Store } from '../store/types.js';
import { normalizeItem } from './item-validation.js';
import { InvalidJson, type SourceRow } from './publication-source.js';

/** Items handed to the store at a time: large enough for fast inserts, small enough to stay flat. */
const BATCH_SIZE = 5000;
/** Bad rows listed in one answer; the count covers them all. */
const MAX_REPORTED_PROBLEMS = 1000;

export interface PublishOptions {
  /** Called every BATCH_SIZE rows with the rows read so far. */
  onProgress?: (rowsRead: number) => void;
}

/**
 * Validates every row and publishes the list as the store's new latest, atomically.
 * If any row is bad, nothing is published, every bad row is reported, and the previous
 * list stays latest.
 */
export async function publishPriceList(store: Store, storeId: string, rows: AsyncIterable<SourceRow>, options: PublishOptions = {}): Promise<PriceListRecord> {
  const owner = await store.getStore(storeId);
  if (!owner) throw new AppError('store_not_found', `no store with id "${storeId}"`);

  const draft = await store.beginPublication(storeId);
  const problems: InputProblem[] = [];
  let problemCount = 0;
  const report = (position: string, reason: string) => {
    problemCount++;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push({ position, reason });
  };

  let seq = 0;
  let availableCount = 0;
  const currencies = new Set<string>();
  const categoryPaths = new Set<string>();
  let batch: SequencedItem[] = [];
  let positions = new Map<number, string>();
  const flush = async () => {
    if (batch.length === 0) return;
    for (const duplicate of await draft.append(batch)) {
      report(positions.get(duplicate.seq) ?? `item ${duplicate.seq + 1}`, `offer_id "${duplicate.offer_id}" repeats an earlier item`);
    }
    batch = [];
    positions = new Map();
    options.onProgress?.(seq);
  };

  try {
    for await (const row of rows) {
      if (row.raw instanceof InvalidJson) {
        report(row.position, `not valid JSON: ${row.raw.message}`);
        continue;
      }
      const result = normalizeItem(row.raw, owner.currency, row.text);
      if (result.problems) {
        report(row.position, result.problems.join('; '));
        continue;
      }
      const item = result.item;
      if (item.available) availableCount++;
      currencies.add(item.currency);
      categoryPaths.add(item.category ?? '');
      positions.set(seq, row.position);
      batch.push({ seq: seq++, item });
      if (batch.length >= BATCH_SIZE) await flush();
    }
    await flush();
    if (seq === 0 && problemCount === 0) report('file', 'the price list has no items; an empty list would wipe the catalogue, so it is refused');
    if (problemCount > 0) {
      throw new AppError('invalid_publication', `${problemCount} bad row(s); nothing was published and the previous price list stays latest`, {
        problems,
        problemCount,
      });
    }
    return await draft.commit({
      item_count: seq,
      available_count: availableCount,
      currencies: [...currencies].sort(),
      category_paths: [...categoryPaths],
    });
  } catch (error) {
    await draft.abort();
    throw error;
  }
}
