import { loadNativeModule } from '../native-builds.js';
import type { CsvRecordFramer, ItemRowReader, ItemRowsRead, JsonItemFramer } from '../types.js';

/*
 * The native reader of a publication's items (native/item_rows.c says what it does and why),
 * as scripts/build-native.mjs leaves it in build/native/. Optional: without it every item is
 * read by JSON.parse and item-validation.ts, and its row made by copy-rows.ts — the same rows.
 */

/** The version of the module's call and rows (ITEM_ROWS_VERSION in native/item_rows_module.c). */
export const ITEM_ROWS_VERSION = 5;

/** The feed check's rules the module counts, as `target/rule`, in the order of its counts (item_rows.h). */
export const ITEM_ROW_RULES: readonly string[] = [
  'yml/offer_name_length', 'yml/description_length', 'yml/barcode_digits', 'yml/discount_range', 'yml/offer_id', 'yml/currency',
  'google/id_length', 'google/title_length', 'google/description_length', 'google/link_present', 'google/image_link_present', 'google/gtin_check_digit',
  'commerceml/id_length', 'commerceml/name_length',
  'xlsx/cell_text_length', 'xlsx/sheet_rows',
];

interface ItemRowsModule {
  read(bytes: Buffer, bounds: Int32Array, draftId: number, firstSeq: number, storeCurrency: string, maxFieldChars: number, columns: readonly string[] | null, binary: boolean, seen: Seen): ItemRowsRead;
  /** What one publication's calls of read share: the currencies and category paths they handed over. */
  seen(): Seen;
  frame: JsonItemFramer;
  frameCsv: CsvRecordFramer;
  version(): number;
}

/** The module's record of the texts a publication's reads handed over (an external). */
declare const seenBrand: unique symbol;
type Seen = { readonly [seenBrand]: true };

let loaded: ItemRowsModule | null | undefined;

/** The built module, or null when it was not built, cannot be loaded, or is of another version. */
export function itemRowsModule(): ItemRowsModule | null {
  if (loaded === undefined) loaded = loadNativeModule<ItemRowsModule>('price_export_item_rows.node', ITEM_ROWS_VERSION);
  return loaded;
}

/** The module's framer of a JSON array's items (types.ts JsonItemFramer); null without the module. */
export function jsonItemFramer(): JsonItemFramer | null {
  return itemRowsModule()?.frame ?? null;
}

/** The module's framer of CSV records (types.ts CsvRecordFramer); null without the module. */
export function csvRecordFramer(): CsvRecordFramer | null {
  return itemRowsModule()?.frameCsv ?? null;
}

/**
 * The reader into one draft's rows, in COPY's text format (both dialects take it) or its binary
 * format (PostgreSQL: copy-rows.ts BINARY_COPY_HEADER), with the rows an append of the store takes
 * best (ItemRowReader.rowsPerAppend); null without the module.
 */
export function itemRowReader(draftId: number, format: 'text' | 'binary' = 'text', rowsPerAppend?: number): ItemRowReader | null {
  const module = itemRowsModule();
  if (module === null) return null;
  // One per publication: each read hands over only the currencies and categories new to it.
  const seen = module.seen();
  return {
    rules: ITEM_ROW_RULES,
    rowsPerAppend,
    read: (bytes, bounds, firstSeq, storeCurrency, maxFieldChars, columns) => module.read(bytes, bounds, draftId, firstSeq, storeCurrency, maxFieldChars, columns, format === 'binary', seen),
  };
}
