import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * What scripts/build-native.mjs leaves in build/native/ at the package root: the SQLite records
 * extension (sqlite/records-extension.ts) and the Node-API module that runs the same aggregates
 * over PostgreSQL's COPY (postgres/native-copy-records.ts). Both optional: without them the
 * records are built by SQL, byte for byte the same, slower.
 */

/** The built file's path, looked for from this module up to the package root; null when it was not built. */
export function findNativeBuild(file: string): string | null {
  // src/store/, dist/store/ or a build elsewhere below the root (the bench's).
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const path = join(dir, 'build/native', file);
      return existsSync(path) ? path : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The Node-API module built as `file`, when it loads and answers `version`; null when it was not
 * built, was built for another platform, or by an older checkout (its calls would differ). Each
 * module's code falls back to JavaScript or SQL with the same bytes.
 */
export function loadNativeModule<T extends { version(): number | null }>(file: string, version: number): T | null {
  const path = findNativeBuild(file);
  if (path === null) return null;
  try {
    const module = createRequire(import.meta.url)(path) as T;
    return module.version() === version ? module : null;
  } catch {
    return null;
  }
}

/**
 * The version of the aggregates' calls this code makes (price_export_records_version() in the C
 * source; both change together). A build left from an older checkout (pulled, not rebuilt)
 * answers another and is not used: its calls would fail, or print other bytes.
 */
export const RECORDS_EXTENSION_VERSION = 7;
