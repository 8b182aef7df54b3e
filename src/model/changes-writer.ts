/*
 * The seam between the changes feed (domain/changes.ts) and its writers (formats/changes/),
 * CONTRACT §11: the domain decides which offers were added, changed or removed since a version,
 * a writer prints them.
 */
import type { ExportMeta, WriterNeeds } from './export-writer.js';
import type { PriceItem } from './price-item.js';
import type { RecordSpec } from './record-spec.js';

/** One line of a changes answer. All upserts come before the first delete. */
export interface ChangeEntry {
  action: 'upsert' | 'delete';
  /** An upsert: the item as the latest version serves it; a delete: as version `since` served it. */
  item: PriceItem;
}

/** The latest version's meta (`priceList`), and the version the changes are counted from. */
export interface ChangesMeta extends ExportMeta {
  since: number;
}

export interface ChangesWriter {
  /** The `format` parameter of the changes address. */
  readonly format: string;
  readonly extension: string;
  readonly needs: WriterNeeds;
  contentType(meta: ChangesMeta): string;
  /**
   * Whether two versions of an item print alike in this format with these columns: a change of
   * a field the export does not show is no change (the price always counts).
   */
  sameShown(meta: ChangesMeta): (a: PriceItem, b: PriceItem) => boolean;
  /** The entries, in batches, as the file's bytes. */
  render(entries: AsyncIterable<readonly ChangeEntry[]>, meta: ChangesMeta): AsyncIterable<Uint8Array>;
  /**
   * The same answer from records a store may build itself next to the recorded changes, as a
   * full export's (model/record-spec.ts); absent, or null for these columns: `render` only.
   */
  built?(meta: ChangesMeta): BuiltChanges | null;
}

/**
 * A changes answer of store-built records: the upserts' items as `changed` prints them (the
 * full export's records) and the deletes' as `removed` does, each in offer_id order. "Changed"
 * is judged by the fields `changed` reads and the price, as `sameShown` judges it.
 */
export interface BuiltChanges {
  changed: RecordSpec;
  removed: RecordSpec;
  render(changed: AsyncIterable<Uint8Array>, removed: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
}
