/*
 * The seam between the export use case (domain/exports.ts) and the format writers (formats/):
 * the domain reads the list and builds the meta, a writer turns them into bytes. The types live
 * here, in the shared vocabulary, so that neither side imports the other: the writers registry
 * is handed to the domain when the app is composed (src/composition.ts).
 */
import type { ChangesWriter } from './changes-writer.js';
import type { ExportColumn } from './columns.js';
import type { RecordReader } from './record-spec.js';
import type { PriceItem } from './price-item.js';
import type { PriceType, TabularOptions } from './profile.js';

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
  /**
   * Categories used by the list, parents before children, and the default one last; read from
   * the database only for a writer whose `needs.categories` is true (empty for the others).
   */
  categories: readonly ExportCategory[];
  /** The profile's CommerceML price type; absent: the default one (CONTRACT §14). */
  priceType?: PriceType;
}

/** What a writer reads besides the columns' values, so the domain fetches nothing more. */
export interface WriterNeeds {
  /**
   * `columns`: only what `meta.columns` read (an export whose columns are all legacy fields then
   * skips every item's other fields); `all`: every field of every item (YML's offer elements,
   * the summary's competitors).
   */
  fields: 'columns' | 'all';
  /** The store's categories in `meta.categories` (YML). */
  categories: boolean;
}

/**
 * One writer per format: header, rows, footer → bytes. `render` consumes the items in
 * publication order, in batches, and yields the file in chunks; it never holds the list.
 * The items the domain hands over may be iterated more than once, each time from the start
 * (the summary workbook reads them three times); a writer that reads them once need not care.
 */
export interface ExportWriter {
  /** The `format` parameter that selects it (and the variant's format). */
  readonly format: string;
  readonly extension: string;
  /** Appended to the store id in the file name (`-summary`). */
  readonly fileSuffix?: string;
  readonly needs: WriterNeeds;
  contentType(meta: ExportMeta): string;
  render(items: AsyncIterable<readonly PriceItem[]>, meta: ExportMeta): AsyncIterable<Uint8Array>;
}

/**
 * A writer that may take the records the database builds next to the data (CSV/TSV:
 * model/delimited-record.ts; JSON, XML, YML: model/json-record.ts, xml-record.ts,
 * yml-record.ts); it falls back to the items when the
 * layout cannot be described as a record spec, or the store declines it.
 */
export interface RecordSourceWriter extends ExportWriter {
  readonly takesRecordSource: true;
  render(items: AsyncIterable<readonly PriceItem[]>, meta: ExportMeta, records?: RecordReader | null): AsyncIterable<Uint8Array>;
}

export const takesRecordSource = (writer: ExportWriter): writer is RecordSourceWriter =>
  (writer as Partial<RecordSourceWriter>).takesRecordSource === true;

/** The writers the export use case is composed with: one per `format`, and the summary workbook's. */
export interface ExportWriters {
  formats: Readonly<Record<string, ExportWriter>>;
  summary: ExportWriter;
  /** The changes address's writers (CONTRACT §11), by `format`; absent: the service answers no changes. */
  changes?: Readonly<Record<string, ChangesWriter>>;
}
