import type { DelimitedRecordSpec } from './delimited-record.js';
import type { JsonRecordSpec } from './json-record.js';
import type { SheetRowSpec } from './sheet-row.js';
import type { XmlRecordSpec } from './xml-record.js';
import type { YmlRecordSpec } from './yml-record.js';

/** Every kind of record a store may build next to the rows: CSV/TSV records, JSON and XML items, YML offers, XLSX rows. */
export type RecordSpec = DelimitedRecordSpec | JsonRecordSpec | XmlRecordSpec | YmlRecordSpec | SheetRowSpec;

/**
 * Renders the records of a spec, UTF-8, in publication order, in chunks of whole records; or
 * null when the store cannot build them (a field it keeps in no column of its own: see
 * store/stored-fields.ts), and the writer renders them itself.
 */
export type RecordReader = (spec: RecordSpec) => AsyncIterable<Uint8Array> | null;
