import { LEGACY_COLUMNS, type ExportColumn } from '../model/columns.js';
import type { DelimitedRecordSpec, RecordField } from '../model/delimited-record.js';
import { formatMoney } from '../model/money.js';
import { isItemField, ITEM_FIELDS, type PriceItem } from '../model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS, type TabularOptions } from '../model/profile.js';
import { escapeFormula } from '../model/formula-escape.js';
import { NO_ITEM, renderBuiltRecords, renderText, type TextLayout } from './text-writer.js';
import type { ExportMeta, RecordSourceWriter } from '../model/export-writer.js';

/*
 * CSV and TSV, CONTRACT §5 (the frozen legacy layout) and §6 (profiles).
 *
 * The quoting and the record building are written by hand, not delegated to csv-stringify:
 * this is the service's hottest path and the benchmark (bench/, issue "≥ 3× csv-stringify")
 * requires it. Per field: one precompiled regex test, and string concatenation for the
 * record; no per-field arrays, objects or option lookups.
 */

export const RECORD_END = '\r\n';
const QUOTE = /"/g;

type Cell = (item: PriceItem) => string;

/** The test for "must be quoted": the separator, `"`, CR or LF anywhere, or a space at either end. */
function quotingTest(delimiter: string): RegExp {
  if (delimiter.length === 1) {
    const inClass = delimiter.replace(/[\\\]^-]/, '\\$&');
    return new RegExp(`[${inClass}"\\r\\n]|^ | $`);
  }
  const literal = delimiter.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  return new RegExp(`${literal}|["\\r\\n]|^ | $`);
}

export function quoter(delimiter: string): (value: string) => string {
  const mustQuote = quotingTest(delimiter);
  return (value) => (mustQuote.test(value) ? `"${value.replace(QUOTE, '""')}"` : value);
}

function cellFor(column: ExportColumn, quote: (value: string) => string, options: TabularOptions): Cell {
  const get = column.get;
  // Numbers print only digits, `-` and the decimal separator: they skip the quoting test
  // unless the profile made the separator collide with the delimiter (`,` and `,`).
  const guardNumber = options.delimiter.includes(options.decimal_separator) ? quote : (text: string) => text;
  const decimal = options.decimal_separator;
  switch (column.kind) {
    case 'money':
      return (item) => {
        const value = get(item);
        return typeof value === 'number' ? guardNumber(formatMoney(value, decimal)) : '';
      };
    case 'integer':
      return (item) => {
        const value = get(item);
        return value === null ? '' : String(value);
      };
    case 'boolean':
      return (item) => {
        const value = get(item);
        return value === null ? '' : value ? '1' : '0';
      };
    case 'text': {
      const escape = options.escape_formulas ? escapeFormula : (text: string) => text;
      return (item) => {
        const value = get(item);
        return value === null ? '' : quote(escape(typeof value === 'string' ? value : String(value)));
      };
    }
  }
}

export function delimitedLayout(columns: readonly ExportColumn[], options: TabularOptions): TextLayout {
  const { delimiter } = options;
  const quote = quoter(delimiter);
  const cells = columns.map((column) => cellFor(column, quote, options));
  const count = cells.length;
  const first = count > 0 ? cells[0] : () => '';
  return {
    header: options.header ? columns.map((column) => quote(column.title)).join(delimiter) + RECORD_END : '',
    row(item) {
      let record = first(item);
      for (let i = 1; i < count; i++) record += delimiter + cells[i](item);
      return record + RECORD_END;
    },
    footer: '',
  };
}

/**
 * The legacy record (§5), spelled out field by field: the layout is frozen, and reading the
 * eight properties directly instead of through eight column closures is ~40 % faster on the
 * path every old link takes. The generic layout over LEGACY_COLUMNS must give the same
 * bytes; delimited.test.ts checks that.
 */
export function legacyLayout(delimiter: string): TextLayout {
  const quote = quoter(delimiter);
  return {
    header: LEGACY_COLUMNS.map((column) => column.title).join(delimiter) + RECORD_END,
    row: (item) =>
      quote(item.offer_id) +
      delimiter +
      quote(item.name) +
      delimiter +
      formatMoney(item.price) +
      delimiter +
      (item.old_price === null ? '' : formatMoney(item.old_price)) +
      delimiter +
      quote(item.currency) +
      delimiter +
      (item.available ? '1' : '0') +
      delimiter +
      (item.quantity === null ? '' : String(item.quantity)) +
      delimiter +
      (item.url === null ? '' : quote(item.url)) +
      RECORD_END,
    footer: '',
  };
}

/** The legacy layout is frozen (§5) whatever the meta says; TSV always separates with a tab (§6). */
export function optionsFor(meta: ExportMeta, format: 'csv' | 'tsv'): TabularOptions {
  const options = meta.legacy ? DEFAULT_TABULAR_OPTIONS : meta.tabular;
  return format === 'tsv' ? { ...options, delimiter: '\t' } : options;
}

/**
 * The records as a spec a store may render itself (item fields and constants, and a decimal
 * separator that is not the delimiter); null when only the JavaScript layout can. The store
 * decides which fields it can build (store/stored-fields.ts).
 */
export function recordSpec(columns: readonly ExportColumn[], options: TabularOptions): DelimitedRecordSpec | null {
  if (options.delimiter === options.decimal_separator) return null;
  // Formula escaping is not part of the spec: such a profile takes the JavaScript path (same bytes as ever).
  if (options.escape_formulas) return null;
  const quote = quoter(options.delimiter);
  const fields: RecordField[] = [];
  for (const column of columns) {
    if (column.field === null) {
      const constant = column.get(NO_ITEM);
      fields.push({ kind: 'literal', text: constant === null ? '' : quote(String(constant)) });
    } else if (isItemField(column.field) && column.kind === ITEM_FIELDS[column.field]) {
      fields.push({ kind: column.kind, field: column.field });
    } else {
      return null;
    }
  }
  return { format: 'delimited', fields, delimiter: options.delimiter, decimalSeparator: options.decimal_separator, recordEnd: RECORD_END };
}

/** What a constant column's `get` is given: it reads nothing. */

function delimitedWriter(format: 'csv' | 'tsv', mediaType: string): RecordSourceWriter {
  return {
    format,
    extension: format,
    needs: { fields: 'columns', categories: false },
    takesRecordSource: true,
    contentType: (meta) => `${mediaType}; charset=${optionsFor(meta, format).encoding}`,
    render(batches, meta, records) {
      const options = optionsFor(meta, format);
      const layout =
        meta.legacy && meta.columns === LEGACY_COLUMNS ? legacyLayout(options.delimiter) : delimitedLayout(meta.columns, options);
      // The store builds UTF-8 records only; windows-1251 (1C importers) takes the JavaScript path.
      const spec = records && options.encoding === 'utf-8' ? recordSpec(meta.columns, options) : null;
      const built = records && spec ? records(spec) : null;
      if (built) return renderBuiltRecords(options.bom ? `\uFEFF${layout.header}` : layout.header, built);
      return renderText(batches, layout, options);
    },
  };
}

export const csvWriter: RecordSourceWriter = delimitedWriter('csv', 'text/csv');
export const tsvWriter: RecordSourceWriter = delimitedWriter('tsv', 'text/tab-separated-values');
