import type { ExportWriter, ExportWriters } from '../model/export-writer.js';
import { CHANGES_WRITERS } from './changes/registry.js';
import { commercemlWriter } from './commerceml.js';
import { csvWriter, tsvWriter } from './delimited.js';
import { googleWriter } from './google.js';
import { jsonWriter } from './json.js';
import { xlsxWriter } from './xlsx/prices-writer.js';
import { summaryWriter } from './xlsx/summary-writer.js';
import { xmlWriter } from './xml.js';
import { ymlWriter } from './yml.js';

/**
 * The writer of each `format`: adding a format is one writer file and one line here (STYLE §3).
 * The format list the addresses accept, document and report (`/api/me`) is these keys.
 */
export const FORMAT_WRITERS: Readonly<Record<string, ExportWriter>> = Object.freeze({
  csv: csvWriter,
  tsv: tsvWriter,
  xlsx: xlsxWriter,
  json: jsonWriter,
  xml: xmlWriter,
  yml: ymlWriter,
  commerceml: commercemlWriter,
  google: googleWriter,
});

/** Every format of the price list addresses, in the registry's order. */
export const EXPORT_FORMATS: readonly string[] = Object.freeze(Object.keys(FORMAT_WRITERS));

/** What the export use case is composed with (src/composition.ts). */
export const EXPORT_WRITERS: ExportWriters = Object.freeze({ formats: FORMAT_WRITERS, summary: summaryWriter, changes: CHANGES_WRITERS });
