import type { ExportColumn } from './columns.js';
import { formatMoney } from './money.js';
import type { PriceItem } from './price-item.js';
import { MAX_CELL_TEXT } from './sheet-row.js';

/*
 * The feed check's rules (CONTRACT §14): known limits of each target, as pure functions over
 * items. They live in model/, not next to the writers, because two layers that may not import
 * formats run them: the domain's check over a stored list (GET /api/export/check) and
 * publishing (its warnings, CLI and internal API). They warn; nothing is refused for them.
 */

export const FEED_CHECK_TARGETS = ['yml', 'google', 'commerceml', 'xlsx'] as const;
export type FeedCheckTarget = (typeof FEED_CHECK_TARGETS)[number];

/** One rule over the items: the offending value, or null when the item passes. */
export interface ItemRule {
  id: string;
  description: string;
  /** `index` is the item's position in the export (0-based), for per-sheet row limits. */
  test(item: PriceItem, index: number): string | null;
}

/** One rule over the store itself (YML's shop name). */
export interface StoreRule {
  id: string;
  description: string;
  test(store: { name: string }): string | null;
}

export interface FeedRules {
  target: FeedCheckTarget;
  store: readonly StoreRule[];
  items: readonly ItemRule[];
}

/** Offending text is shown cut to this many characters (with `…`): a 50,000-character description helps no one. */
const SHOWN_CHARACTERS = 200;

const shown = (text: string): string => {
  const points = [...text.slice(0, SHOWN_CHARACTERS * 2)];
  return points.length <= SHOWN_CHARACTERS && text.length <= SHOWN_CHARACTERS * 2 ? text : `${points.slice(0, SHOWN_CHARACTERS).join('')}…`;
};

/** Characters as a marketplace counts them: code points (an emoji is one). */
const characters = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

/** True when the text is longer than `limit` characters; cheap for the usual short text. */
const longerThan = (text: string, limit: number): boolean => text.length > limit && characters(text) > limit;

function maxLength(id: string, what: string, limit: number, read: (item: PriceItem) => string | null): ItemRule {
  return {
    id,
    description: `${what} at most ${limit.toLocaleString('en-US')} characters`,
    test(item) {
      const text = read(item);
      return text !== null && longerThan(text, limit) ? `${characters(text)} characters: ${shown(text)}` : null;
    },
  };
}

function present(id: string, what: string, read: (item: PriceItem) => string | null): ItemRule {
  return { id, description: `${what} present`, test: (item) => (read(item) === null || read(item) === '' ? '(missing)' : null) };
}

/** YML barcodes: EAN-8, UPC-A (12) or EAN-13, digits only (CONTRACT §6.1). */
const YML_BARCODE = /^(?:\d{8}|\d{12}|\d{13})$/;

/** Yandex: letters (Latin or Cyrillic), digits and `. , / \ ( ) [ ] - = _`, up to 80 (CONTRACT §6.1). */
const YML_OFFER_ID = /^[A-Za-zА-Яа-яЁё0-9.,/\\()[\]\-=_]{1,80}$/;

/** The currencies YML's shops.dtd knows (`RUR` is how the writer spells RUB). */
export const YML_CURRENCIES: readonly string[] = ['RUR', 'RUB', 'UAH', 'BYR', 'BYN', 'KZT', 'USD', 'EUR'];

/**
 * The discount a marketplace shows, in whole percent of the old price, exactly from minor
 * units; null when there is none (no old price above the price: YML and Google drop it).
 */
function discountOutside(item: PriceItem, lowPct: number, highPct: number): string | null {
  const { old_price: old, price } = item;
  if (old === null || old <= price) return null;
  const off = (old - price) * 100;
  if (off >= lowPct * old && off <= highPct * old) return null;
  const pct = Math.round((off * 100) / old) / 100;
  return `${pct.toFixed(2)} % (${formatMoney(old)} → ${formatMoney(price)})`;
}

/** GS1 check digit of a GTIN-8/12/13/14 (the last digit). */
export function validGtin(code: string): boolean {
  if (!/^(?:\d{8}|\d{12}|\d{13}|\d{14})$/.test(code)) return false;
  let sum = 0;
  for (let i = code.length - 2, weight = 3; i >= 0; i--, weight = 4 - weight) sum += Number(code[i]) * weight;
  return (10 - (sum % 10)) % 10 === Number(code[code.length - 1]);
}

/** Excel's limits: 32,767 characters in a cell (the XLSX writer's own), 1,048,576 rows a sheet (one is the header). */
export const XLSX_MAX_CELL_TEXT = MAX_CELL_TEXT;
export const XLSX_MAX_DATA_ROWS = 1_048_575;

const YML_RULES: FeedRules = {
  target: 'yml',
  store: [
    {
      id: 'shop_name_length',
      description: 'shop name at most 20 characters',
      test: (store) => (longerThan(store.name, 20) ? `${characters(store.name)} characters: ${shown(store.name)}` : null),
    },
  ],
  items: [
    maxLength('offer_name_length', 'offer name', 150, (item) => item.name),
    maxLength('description_length', 'description', 3000, (item) => item.description),
    { id: 'barcode_digits', description: 'barcode of 8, 12 or 13 digits', test: (item) => (item.barcode === null || YML_BARCODE.test(item.barcode) ? null : shown(item.barcode)) },
    { id: 'discount_range', description: 'discount (oldprice above price) between 5 % and 95 %', test: (item) => discountOutside(item, 5, 95) },
    {
      id: 'offer_id',
      description: 'offer id at most 80 characters of letters, digits and . , / \\ ( ) [ ] - = _',
      test: (item) => (YML_OFFER_ID.test(item.offer_id) ? null : shown(item.offer_id)),
    },
    { id: 'currency', description: `currency one of ${YML_CURRENCIES.join(', ')} (shops.dtd)`, test: (item) => (YML_CURRENCIES.includes(item.currency) ? null : item.currency) },
  ],
};

const GOOGLE_RULES: FeedRules = {
  target: 'google',
  store: [],
  items: [
    maxLength('id_length', 'g:id', 50, (item) => item.offer_id),
    maxLength('title_length', 'g:title', 150, (item) => item.name),
    maxLength('description_length', 'g:description', 5000, (item) => item.description),
    present('link_present', 'g:link (url)', (item) => item.url),
    present('image_link_present', 'g:image_link (picture)', (item) => item.picture),
    { id: 'gtin_check_digit', description: 'g:gtin (barcode) a GTIN-8/12/13/14 with a valid check digit', test: (item) => (item.barcode === null || validGtin(item.barcode) ? null : shown(item.barcode)) },
  ],
};

/** CONTRACT §14 names no CommerceML limits; these are the 2.08 schema's (Идентификатор80, НаименованиеТип). */
const COMMERCEML_RULES: FeedRules = {
  target: 'commerceml',
  store: [],
  items: [
    maxLength('id_length', 'Ид (offer id)', 80, (item) => item.offer_id),
    maxLength('name_length', 'Наименование (name; cut to 255 in the file)', 255, (item) => item.name),
  ],
};

/** XLSX rules read the export's columns: the profile's, or the legacy ones. */
function xlsxRules(columns: readonly ExportColumn[]): FeedRules {
  const textColumns = columns.filter((column) => column.kind === 'text');
  return {
    target: 'xlsx',
    store: [],
    items: [
      {
        id: 'cell_text_length',
        description: `cell text at most ${XLSX_MAX_CELL_TEXT.toLocaleString('en-US')} characters`,
        test(item) {
          for (const column of textColumns) {
            const value = column.get(item);
            if (typeof value === 'string' && longerThan(value, XLSX_MAX_CELL_TEXT)) return `${column.title}: ${characters(value)} characters: ${shown(value)}`;
          }
          return null;
        },
      },
      {
        id: 'sheet_rows',
        description: `at most ${XLSX_MAX_DATA_ROWS.toLocaleString('en-US')} rows a sheet (later rows continue on "Prices (2)")`,
        test: (_item, index) => (index >= XLSX_MAX_DATA_ROWS ? `row ${index + 2}` : null),
      },
    ],
  };
}

/** The rules of one target; `columns` are the export's (they matter to XLSX only). */
export function feedRules(target: FeedCheckTarget, columns: readonly ExportColumn[]): FeedRules {
  switch (target) {
    case 'yml':
      return YML_RULES;
    case 'google':
      return GOOGLE_RULES;
    case 'commerceml':
      return COMMERCEML_RULES;
    case 'xlsx':
      return xlsxRules(columns);
  }
}
