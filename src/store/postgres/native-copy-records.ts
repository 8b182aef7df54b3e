import type { RecordSpec } from '../../model/record-spec.js';
import { loadNativeModule, RECORDS_EXTENSION_VERSION } from '../native-builds.js';
import { callColumns, nativeRecordsCall, type NativeCall } from '../native-records-call.js';
import type { StoredField } from '../stored-fields.js';

/*
 * PostgreSQL's pages built in the instance by the C aggregates SQLite's pages run
 * (native/copy_records.c says how): the server sends the plain columns a record reads, as psql
 * would get them, and the records are built off the event loop. The server's record expressions
 * (delimited-, json-, xml-, yml-sql.ts) stay the reference and the fallback where the module was
 * not built; postgres's runs of the records contract tests hold both to the writers' bytes.
 */

export interface CopyRecordsModule {
  /** `messages`: the COPY's CopyData messages, framing and all, cut anywhere; one Buffer is read in place (its bytes may be overwritten). */
  build(name: string, args: readonly (number | string | null)[], columnTypes: string, messages: readonly Buffer[]): Promise<Buffer | null>;
  version(): number | null;
  /** The offset after the run of whole CopyData messages from `offset` in `chunk`. */
  copyDataRun(chunk: Buffer, offset: number): number;
  /** V8's count of external memory (what starts its full collections), for the tests. */
  externalMemory(): number;
}

const FILE = 'price_export_copy_records.node';

let loaded: CopyRecordsModule | null | undefined;

/** The built module, or null when it was not built, cannot be loaded, or is of another version. */
export function copyRecordsModule(): CopyRecordsModule | null {
  if (loaded === undefined) loaded = loadNativeModule<CopyRecordsModule>(FILE, RECORDS_EXTENSION_VERSION);
  return loaded;
}

/** The type letter of a column for the module (t text, i integer, b boolean), as the schema has it. */
const COLUMN_TYPES: Record<StoredField | 'seq' | 'extra', 't' | 'i' | 'b'> = {
  seq: 'i', offer_id: 't', name: 't', price: 'i', old_price: 'i', currency: 't', available: 'b', quantity: 'i', url: 't', extra: 't',
};

/** A page's plan: the COPY's select list, its columns' types, and the call's arguments over them. */
export interface NativeCopyPlan {
  select: string;
  /** The columns of `select` (callColumns). */
  columns: readonly string[];
  call: NativeCall['name'];
  args: readonly (number | string | null)[];
  columnTypes: string;
}

/** How `spec`'s records are built from a COPY of the columns; null where no aggregate builds them (nativeRecordsCall). */
export function nativeCopyPlan(spec: RecordSpec): NativeCopyPlan | null {
  const call = nativeRecordsCall(spec);
  if (call === null) return null;
  const columns = callColumns(call) as (keyof typeof COLUMN_TYPES)[];
  // A column argument is its place in the COPY's rows.
  const args = call.args.map((arg): number | string | null => ('text' in arg ? arg.text : columns.indexOf(arg.column)));
  return { select: columns.join(', '), columns, call: call.name, args, columnTypes: columns.map((column) => COLUMN_TYPES[column]).join('') };
}
