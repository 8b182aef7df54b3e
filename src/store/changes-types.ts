import type { PriceItem } from '../model/price-item.js';
import type { RecordSpec } from '../model/record-spec.js';

/*
 * The changes feed's storage seam (CONTRACT §11): which versions a `since=N` request spans, and
 * the offers that may differ between the rows at N and at the latest, with both rows.
 */

/** The kept versions a changes request reads, newest first: those after `since` up to `latest`. */
export interface ChangeSpan {
  since: number;
  latest: number;
  /** `base`: the items list the version's changes were recorded against (changes_base). */
  versions: readonly { id: number; version: number; base: number | null }[];
}

/** An offer recorded as added, changed or removed in the span; a row is null where the offer was absent. */
export interface ChangeCandidate {
  offer_id: string;
  /** Its served row at `since`. */
  before: PriceItem | null;
  /** Its served row at the latest. */
  after: PriceItem | null;
}

export interface ChangesRepository {
  /**
   * The span from `since` to `latest`; null when `since` is not a kept version or a version in
   * between has no recorded changes (published before the feed existed): answer 410.
   */
  span(storeId: string, since: number, latest: number): Promise<ChangeSpan | null>;
  /**
   * Each offer recorded in the span once, in pages, with its rows in `before` and `after` (the
   * items list ids of the two versions): what changed costs, not the list.
   */
  candidates(storeId: string, span: ChangeSpan, before: number, after: number): AsyncIterable<ChangeCandidate[]>;
  /**
   * The same answer's records built by the store (model/changes-writer.ts BuiltChanges), each
   * in offer_id order: `changed`, the offers present at the latest that were absent at `since`
   * or whose price or a field its spec reads differs; `removed`, those present at `since` and
   * absent at the latest (present: there and, with `onlyAvailable`, available). Null where it
   * builds none (candidates then): a span of several versions, a field in no column, a store
   * without its C record builders.
   */
  records(span: ChangeSpan, before: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null;
}

/** The record specs of a changes answer's two parts. */
export interface ChangeRecordSpecs {
  changed: RecordSpec;
  removed: RecordSpec;
}

/** A changes answer's two parts as records, each read as it is iterated. */
export interface ChangeRecords {
  changed: AsyncIterable<Uint8Array>;
  removed: AsyncIterable<Uint8Array>;
}
