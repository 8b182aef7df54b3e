import { csvWriter, tsvWriter } from './delimited.js';
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
  yml: ymlWriter,
});
