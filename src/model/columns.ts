import { ITEM_FIELDS, isItemField, type PriceItem, type ValueKind } from './price-item.js';
import type { ProfileColumn } from './profile.js';

/** A cell value: text, minor units for `money`, an integer, a boolean, or null when absent. */
export type CellValue = string | number | boolean | null;

/**
 * One output column, as every format sees it: the legacy columns of CONTRACT §5 or a profile's.
 * `get` reads the value from an item; `kind` says how a writer prints it.
 */
export interface ExportColumn {
  /** Header in tabular formats. */
  title: string;
  /** Property name in JSON, element name in XML. */
  key: string;
  kind: ValueKind;
  /** The item field or `attributes.<key>` it reads; null for a constant. */
  field: string | null;
  get(item: PriceItem): CellValue;
}

const fieldColumn = (field: string, title: string, key: string): ExportColumn => {
  if (field.startsWith('attributes.')) {
    const attribute = field.slice('attributes.'.length);
    // Own properties only: `attributes.constructor` or `attributes.__proto__` must read an
    // attribute of that name, never Object's built-ins (a function printed into the file).
    return { title, key, kind: 'text', field, get: (item) => ownAttribute(item, attribute) };
  }
  if (!isItemField(field)) throw new Error(`unknown item field ${field}`);
  return { title, key, kind: ITEM_FIELDS[field], field, get: (item) => item[field] };
};

const ownAttribute = (item: PriceItem, name: string): string | null =>
  item.attributes !== null && Object.prototype.hasOwnProperty.call(item.attributes, name) ? item.attributes[name] : null;

/** The frozen legacy layout, CONTRACT §5. */
export const LEGACY_COLUMNS: readonly ExportColumn[] = Object.freeze(
  (['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'] as const).map((field) =>
    fieldColumn(field, field, field),
  ),
);

/** A profile's columns; the profile was validated when it was stored. */
export function profileColumns(columns: readonly ProfileColumn[]): ExportColumn[] {
  return columns.map((column) => {
    if (column.field !== undefined) return fieldColumn(column.field, column.title, column.key ?? column.field.replaceAll('.', '_'));
    const constant = column.value ?? '';
    return { title: column.title, key: column.key ?? column.title, kind: 'text', field: null, get: () => constant };
  });
}
