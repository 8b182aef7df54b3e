import { commercemlWriter } from './commerceml.js';
import { csvWriter, tsvWriter } from './delimited.js';
import { googleWriter } from './google.js';
import { jsonWriter } from './json.js';
import type { ExportFormat, FormatWriter } from './types.js';
import { xlsxWriter } from './xlsx/prices-writer.js';
import { xmlWriter } from './xml.js';
import { ymlWriter } from './yml.js';

/** The writer of each format: adding a format is one file and one line here (STYLE §3). */
export const FORMAT_WRITERS: Readonly<Record<ExportFormat, FormatWriter>> = Object.freeze({
  csv: csvWriter,
  tsv: tsvWriter,
  xlsx: xlsxWriter,
  json: jsonWriter,
  xml: xmlWriter,
  // readsWholeItems belongs in yml.ts; set here while yml.ts is being reordered on another branch.
  yml: { ...ymlWriter, readsWholeItems: true },
  commerceml: commercemlWriter,
  google: googleWriter,
});
