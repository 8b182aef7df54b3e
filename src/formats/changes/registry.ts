import type { ChangesWriter } from '../../model/changes-writer.js';
import { csvChangesWriter, tsvChangesWriter } from './delimited.js';
import { jsonChangesWriter } from './json.js';
import { ndjsonChangesWriter } from './ndjson.js';
import { xmlChangesWriter } from './xml.js';
import { ymlChangesWriter } from './yml.js';

/** The writer of each `format` of the changes address (CONTRACT §11), json first: the default. */
export const CHANGES_WRITERS: Readonly<Record<string, ChangesWriter>> = Object.freeze({
  json: jsonChangesWriter,
  ndjson: ndjsonChangesWriter,
  csv: csvChangesWriter,
  tsv: tsvChangesWriter,
  xml: xmlChangesWriter,
  yml: ymlChangesWriter,
});
