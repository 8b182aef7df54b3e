import type Database from 'better-sqlite3';
import { findNativeBuild, RECORDS_EXTENSION_VERSION } from '../native-builds.js';

/*
 * The SQLite extension that builds CSV/TSV, JSON, XML and YML pages in C
 * (native/price_export_records.c, native/yml_offers.c), as scripts/build-native.mjs leaves it in
 * build/native/ at the package root. Optional: without it the records are built by SQL
 * (delimited-sql.ts, json-sql.ts, xml-sql.ts, yml-sql.ts), byte for byte the same, slower.
 */

/** The built extension's path; null when it was not built. */
export const findRecordsExtension = (): string | null => findNativeBuild('price_export_records.so');

/**
 * Loads the extension into a connection; false (the SQL records then) when it cannot be loaded
 * or is another version than `expected`.
 */
export function loadRecordsExtension(db: Database.Database, path: string, expected = RECORDS_EXTENSION_VERSION): boolean {
  try {
    // SQLite finds the entry point by the file's name: sqlite3_priceexportrecords_init.
    db.loadExtension(path);
    return db.prepare('SELECT price_export_records_version()').pluck().get() === expected;
  } catch {
    // A file built for another machine or SQLite, or one without the version (the first build):
    // the SQL records are the same bytes.
    return false;
  }
}
