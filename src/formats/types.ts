import type { RecordReader } from '../model/delimited-record.js';
import type { ExportColumn } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import type { PriceType, TabularOptions } from '../model/profile.js';

export const EXPORT_FORMATS = ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml', 'commerceml', 'google'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A category of the store, as YML declares it (CONTRACT §6.1). */
export interface ExportCategory {
  id: number;
  /** The last level of the path. */
  name: string;
  parentId: number | null;
  /** The full path (`Electronics / Phones`); '' for the default category of items without one. */
  path: string;
}

/** Everything a writer needs besides the items. */
export interface ExportMeta {
  store: { id: string; name: string; currency: string; url: string | null; company: string | null };
  priceList: {
    version: number;
    publishedAt: Date;
    /** Items in this file, after the filter (JSON's `item_count`). */
    itemCount: number;
    /** Every currency the list's items use. */
    currencies: readonly string[];
  };
  /** Legacy columns, or the profile's. */
  columns: readonly ExportColumn[];
  /** True when no profile shapes the export (legacy columns, legacy layout). */
  legacy: boolean;
  /** The profile's tabular options, or the legacy defaults. */
  tabular: TabularOptions;
  /** Categories used by the list, parents before children, and the default one last (YML). */
  categories: readonly ExportCategory[];
  /** The profile's CommerceML price type; absent: the default one (CONTRACT §14). */
  priceType?: PriceType;
}

/**
 * One writer per format: header, rows, footer → bytes. `render` consumes the items in
 * publication order, in batches, and yields the file in chunks; it never holds the list.
 */
export interface FormatWriter {
  readonly format: ExportFormat;
  readonly extension: string;
  contentType(meta: ExportMeta): string;
  /**
   * True when the writer reads item fields beyond meta.columns (its target's fixed elements:
   * YML, Google, CommerceML), so the export must read every field even for legacy columns.
   */
  readonly readsWholeItems?: boolean;
  /**
   * `records`, when the store offers it, builds delimited records next to the data; a writer
   * that can describe its records as a DelimitedRecordSpec may use it instead of `batches`.
   */
  render(batches: AsyncIterable<readonly PriceItem[]>, meta: ExportMeta, records?: RecordReader | null): AsyncIterable<Uint8Array>;
}
