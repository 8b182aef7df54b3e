import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

/*
 * The SQLite extension that builds CSV/TSV, JSON, XML and YML pages in C
 * (native/price_export_records.c, native/yml_offers.c), as scripts/build-native.mjs leaves it in
 * build/native/ at the package root. Optional: without it the records are built by SQL
 * (delimited-sql.ts, json-sql.ts, xml-sql.ts, yml-sql.ts), byte for byte the same, slower.
 */

const FILE = 'build/native/price_export_records.so';

/** The built extension's path, looked for from this module up to the package root; null when it was not built. */
export function findRecordsExtension(): string | null {
  // src/store/sqlite/, dist/store/sqlite/ or a build elsewhere below the root (the bench's).
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const path = join(dir, FILE);
      return existsSync(path) ? path : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The version of the aggregates' calls this code makes (price_export_records_version() in the C
 * source; both change together). A build left from an older checkout (pulled, not rebuilt)
 * answers another and is not used: its calls would fail, or print other bytes.
 */
export const RECORDS_EXTENSION_VERSION = 3;

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
