import type { RecordSpec } from '../model/record-spec.js';
import { EXTRA_KEYS } from './item-row.js';

/**
 * The item fields every dialect keeps in columns of their own (CONTRACT §5's legacy fields);
 * the rest live in the `extra` JSON text (item-row.ts). A storage fact: the CSV and JSON writers
 * describe records over any field, and the store builds only those over these.
 */
export const STORED_FIELDS = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'] as const;
export type StoredField = (typeof STORED_FIELDS)[number];

export const isStoredField = (field: string | null): field is StoredField => STORED_FIELDS.includes(field as StoredField);

/** The stored fields every item has (NOT NULL in both schemas): a record needs no null case for them. */
export const REQUIRED_FIELDS: ReadonlySet<StoredField> = new Set(['offer_id', 'name', 'price', 'currency', 'available']);

export type ExtraField = (typeof EXTRA_KEYS)[number];
export const isExtraField = (field: string): field is ExtraField => EXTRA_KEYS.includes(field as ExtraField);

/**
 * Whether the database can build these records itself: every field it reads is a column; YML
 * offers may also read keys of `extra` (their compilers parse it with the database's JSON
 * functions: an offer's category, vendor, picture and attributes live there).
 */
export function canBuildRecords(spec: RecordSpec): boolean {
  if (spec.format === 'yml') {
    return spec.parts.every((part) => !('field' in part) || isStoredField(part.field) || isExtraField(part.field));
  }
  const parts = spec.format === 'delimited' ? spec.fields : spec.format === 'sheet-row' ? spec.cells : spec.parts;
  return parts.every((part) => part.kind === 'literal' || isStoredField(part.field));
}
