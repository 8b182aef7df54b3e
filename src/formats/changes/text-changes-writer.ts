import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import type { WriterNeeds } from '../../model/export-writer.js';
import type { PriceItem } from '../../model/price-item.js';
import { renderText, UTF8_NO_BOM, type TextEncoding, type TextLayout } from '../text-writer.js';

/**
 * "Changed" as CONTRACT §11 means it: an item whose row prints differently with the export's
 * columns, or whose price moved (a price change counts for every profile). Printing both rows
 * is exact for any format and profile, and costs only what changed: only the offers recorded
 * as touched are compared.
 */
export const printsAlike =
  (row: (item: PriceItem) => string) =>
  (a: PriceItem, b: PriceItem): boolean =>
    a.price === b.price && row(a) === row(b);

/** What a text format's changes writer is made of: its full export's row layout and its own. */
export interface TextChangesFormat {
  format: string;
  extension: string;
  needs: WriterNeeds;
  contentType(meta: ChangesMeta): string;
  /** The full export's layout: its rows print the changed items and judge what changed. */
  items(meta: ChangesMeta): TextLayout;
  /** The changes answer's layout over the entries (built on `items`). */
  changes(meta: ChangesMeta): TextLayout<ChangeEntry>;
  /** Absent: UTF-8 without BOM. */
  encoding?(meta: ChangesMeta): TextEncoding;
}

/** A changes writer over a text format's layouts (every format of the changes address is one). */
export function textChangesWriter(spec: TextChangesFormat): ChangesWriter {
  return {
    format: spec.format,
    extension: spec.extension,
    needs: spec.needs,
    contentType: (meta) => spec.contentType(meta),
    sameShown(meta) {
      const items = spec.items(meta);
      return printsAlike((item) => items.row(item, 1));
    },
    render: (entries, meta) => renderText(entries, spec.changes(meta), spec.encoding?.(meta) ?? UTF8_NO_BOM),
  };
}
