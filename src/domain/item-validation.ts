import { DEFAULT_MAX_FIELD_CHARS } from '../config/config.js';
import { parseMoney, type Cents } from '../model/money.js';
import type { Competitor, PriceItem } from '../model/price-item.js';
import { textProblem } from '../model/text.js';

/**
 * What one row's checks share. The checks are module functions over it, not closures made per
 * row: a publication normalizes every item, and the closures (five per row) and the names of
 * fields that were fine (`competitors[2].name`, `attributes.colour`, built before any check)
 * were garbage for the collector (bench/RESULTS.md, "2026-11-26, night").
 */
interface RowCheck {
  row: Record<string, unknown>;
  text: boolean;
  maxFieldChars: number;
  problems: string[];
}

/** Why `value` breaks the one rule for every piece of text in an item, or null. */
function textIssue(check: RowCheck, value: string): string | null {
  return textProblem(value) ?? (value.length > check.maxFieldChars ? `longer than ${check.maxFieldChars} characters (MAX_FIELD_CHARS)` : null);
}

/** Pushes `<name> <why>` and answers false when `value` breaks the text rule. */
function checkText(check: RowCheck, name: string, value: string): boolean {
  const issue = textIssue(check, value);
  if (issue !== null) check.problems.push(`${name} ${issue}`);
  return issue === null;
}

const present = (check: RowCheck, name: string): boolean => {
  const value = check.row[name];
  return value !== undefined && value !== null && !(check.text && value === '');
};

function stringField(check: RowCheck, name: string, required = false, max = Infinity): string | null {
  if (!present(check, name)) {
    if (required) check.problems.push(`${name} is required`);
    return null;
  }
  let value = check.row[name];
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') {
    check.problems.push(`${name} must be a string`);
    return null;
  }
  if (!checkText(check, name, value)) return value;
  if (required && value.trim() === '') check.problems.push(`${name} must not be empty`);
  else if (value.length > max) check.problems.push(`${name} must be at most ${max} characters`);
  return value;
}

function moneyField(check: RowCheck, name: string, required = false): Cents | null {
  if (!present(check, name)) {
    if (required) check.problems.push(`${name} is required`);
    return null;
  }
  const cents = parseMoney(check.row[name]);
  if (typeof cents === 'string') {
    check.problems.push(`${name} ${cents}`);
    return null;
  }
  return cents;
}

function httpUrlField(check: RowCheck, name: string): string | null {
  const value = stringField(check, name);
  if (value !== null && !isHttpUrl(value)) check.problems.push(`${name} must be an absolute http(s) URL`);
  return value;
}

/**
 * Turns one published row into a PriceItem, or lists every reason it is bad (CONTRACT §2).
 * `text` rows come from CSV: every value is a string, '' means absent, and
 * `competitors` / `attributes` may hold JSON.
 */
export function normalizeItem(
  raw: unknown,
  storeCurrency: string,
  text = false,
  maxFieldChars = DEFAULT_MAX_FIELD_CHARS,
): { item: PriceItem; problems?: undefined } | { item?: undefined; problems: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problems: ['must be an object'] };
  const row = raw as Record<string, unknown>;
  const problems: string[] = [];
  const check: RowCheck = { row, text, maxFieldChars, problems };

  const offerId = stringField(check, 'offer_id', true, 120);
  const name = stringField(check, 'name', true);
  const price = moneyField(check, 'price', true);
  const oldPrice = moneyField(check, 'old_price');
  const purchasePrice = moneyField(check, 'purchase_price');

  let currency = storeCurrency;
  const currencyText = stringField(check, 'currency');
  if (currencyText !== null) {
    if (/^[A-Za-z]{3}$/.test(currencyText)) currency = currencyText.toUpperCase();
    else problems.push('currency must be an ISO 4217 code like RUB');
  }

  let quantity: number | null = null;
  if (present(check, 'quantity')) {
    const value = text && typeof row.quantity === 'string' && /^\d+$/.test(row.quantity) ? Number(row.quantity) : row.quantity;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) quantity = value;
    else problems.push('quantity must be an integer ≥ 0');
  }

  let available = quantity === null ? true : quantity > 0;
  if (present(check, 'available')) {
    const value = parseBoolean(row.available);
    if (value === null) problems.push('available must be true or false');
    else available = value;
  }

  const category = stringField(check, 'category');
  const competitors = parseCompetitors(check, text ? fromJsonText(row.competitors) : row.competitors, present(check, 'competitors'));
  const attributes = parseAttributes(check, text ? fromJsonText(row.attributes) : row.attributes, present(check, 'attributes'));
  if (text) collectAttributeColumns(check, attributes);

  const item: PriceItem = {
    offer_id: offerId ?? '',
    name: name ?? '',
    price: price ?? 0,
    old_price: oldPrice,
    purchase_price: purchasePrice,
    currency,
    available,
    quantity,
    url: httpUrlField(check, 'url'),
    picture: httpUrlField(check, 'picture'),
    vendor: stringField(check, 'vendor'),
    vendor_code: stringField(check, 'vendor_code'),
    barcode: stringField(check, 'barcode'),
    description: stringField(check, 'description'),
    category: category === null ? null : normalizeCategory(category),
    competitors,
    attributes: attributes.size > 0 ? Object.fromEntries(attributes) : null,
  };
  if (item.category === '') item.category = null;
  return problems.length > 0 ? { problems } : { item };
}

/**
 * A path already spelled as normalizeCategory spells it: levels without `/` or white space at
 * either end (`\s` is what trim() removes), joined by ` / `. Most are, and are kept as they are:
 * splitting and joining every item's path was ~1.5 % of a publication's main thread
 * (bench/RESULTS.md, "2026-11-27, later morning").
 */
const NORMAL_PATH = /^[^/\s](?:[^/]*[^/\s])?(?: \/ [^/\s](?:[^/]*[^/\s])?)*$/;

/** `Electronics /Phones ` → `Electronics / Phones`: one spelling per path, so category ids stay stable. */
export const normalizeCategory = (path: string): string =>
  NORMAL_PATH.test(path) ? path : path.split('/').map((level) => level.trim()).filter((level) => level !== '').join(' / ');

/**
 * URLs as catalogues write them (`https://shop.example/p/1?x=2`): lower-case http(s), a host of
 * lower-case letters, digits and hyphens whose last label begins with a letter (so never an IPv4
 * number) and no label punycode (`xn--`, which the URL parser decodes and may refuse), a port of
 * at most four digits, then printable ASCII. The URL parser accepts each such text as an http(s)
 * URL (test/unit/item-normalisation.test.ts holds the two to the same answers), so it is asked
 * only about the rest: `new URL()` for the three or four URLs of a rich item was ~4.6 % of a
 * PostgreSQL publication's main thread (bench/RESULTS.md, "2026-11-27, later morning").
 */
const PLAIN_HTTP_URL = /^https?:\/\/(?:(?!xn--)[a-z0-9-]+\.)*(?!xn--)[a-z][a-z0-9-]*(?::\d{1,4})?(?:[/?#][\x21-\x7e]*)?$/;

/** Whether `value` is an absolute http(s) URL, spelled with its scheme in lower case. */
export const isHttpUrl = (value: string): boolean => PLAIN_HTTP_URL.test(value) || parsesAsHttpUrl(value);

/** The URL parser's answer (isHttpUrl's reference, for the URLs PLAIN_HTTP_URL leaves). */
export const parsesAsHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && value.startsWith(url.protocol);
  } catch {
    return false;
  }
};

const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };

function parseBoolean(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string') return BOOLEAN_TEXT[value.trim().toLowerCase()] ?? null;
  return null;
}

function fromJsonText(value: unknown): unknown {
  if (typeof value !== 'string' || value === '') return value === '' ? undefined : value;
  try {
    return JSON.parse(value);
  } catch {
    return Symbol.for('bad-json');
  }
}

function parseCompetitors(check: RowCheck, value: unknown, present: boolean): Competitor[] | null {
  if (!present || value === undefined || value === null) return null;
  const { problems } = check;
  if (!Array.isArray(value)) {
    problems.push('competitors must be a list of {name, price, url?, available?}');
    return null;
  }
  const competitors: Competitor[] = [];
  // The entry's name in a message (`competitors[2]`) is made only when there is a problem to tell.
  for (let index = 0; index < value.length; index++) {
    const entry: unknown = value[index];
    if (entry === null || typeof entry !== 'object') {
      problems.push(`competitors[${index}] must be an object`);
      continue;
    }
    const c = entry as Record<string, unknown>;
    if (typeof c.name !== 'string' || c.name.trim() === '') {
      problems.push(`competitors[${index}].name is required`);
      continue;
    }
    const nameIssue = textIssue(check, c.name);
    if (nameIssue !== null) {
      problems.push(`competitors[${index}].name ${nameIssue}`);
      continue;
    }
    const price = parseMoney(c.price);
    if (typeof price === 'string') {
      problems.push(`competitors[${index}].price ${price}`);
      continue;
    }
    const url = c.url === undefined || c.url === null ? null : c.url;
    if (url !== null && (typeof url !== 'string' || !isHttpUrl(url))) {
      problems.push(`competitors[${index}].url must be an absolute http(s) URL`);
      continue;
    }
    const urlIssue = url === null ? null : textIssue(check, url);
    if (urlIssue !== null) {
      problems.push(`competitors[${index}].url ${urlIssue}`);
      continue;
    }
    const available = c.available === undefined || c.available === null ? null : parseBoolean(c.available);
    if (available === null && c.available !== undefined && c.available !== null) {
      problems.push(`competitors[${index}].available must be true or false`);
      continue;
    }
    competitors.push({ name: c.name.trim(), price, url: url as string | null, available });
  }
  return competitors.length > 0 ? competitors : null;
}

function parseAttributes(check: RowCheck, value: unknown, present: boolean): Map<string, string> {
  const attributes = new Map<string, string>();
  if (!present || value === undefined || value === null) return attributes;
  if (typeof value !== 'object' || Array.isArray(value)) {
    check.problems.push('attributes must be an object of string values');
    return attributes;
  }
  const entries = value as Record<string, unknown>;
  for (const key of Object.keys(entries)) {
    const entry = entries[key];
    if (!checkAttributeKey(check, key)) continue;
    if (typeof entry === 'string') {
      const issue = textIssue(check, entry);
      if (issue === null) attributes.set(key, entry);
      else check.problems.push(`attributes.${key} ${issue}`);
    } else if (typeof entry === 'number' || typeof entry === 'boolean') attributes.set(key, String(entry));
    else if (entry !== null) check.problems.push(`attributes.${key} must be a string`);
  }
  return attributes;
}

/** CSV spells attributes as columns named `attributes.<key>`. */
function collectAttributeColumns(check: RowCheck, attributes: Map<string, string>): void {
  // for…in, not Object.entries: an array of pairs per row was garbage for the collector (~3 % of
  // a CSV publication's main thread); the own-property test keeps Object.entries' answer.
  for (const column in check.row) {
    if (!column.startsWith('attributes.') || !Object.hasOwn(check.row, column)) continue;
    const value = check.row[column];
    if (typeof value !== 'string' || value === '') continue;
    const key = column.slice('attributes.'.length);
    if (key === '') check.problems.push('a column named "attributes." needs a key after the dot');
    else if (checkAttributeKey(check, key) && checkText(check, column, value)) attributes.set(key, value);
  }
}

/** An attribute's name becomes a JSON property, an XML element and a CSV header: the same text rule as its value. */
function checkAttributeKey(check: RowCheck, key: string): boolean {
  return checkText(check, 'an attribute name', key);
}
