import { DEFAULT_MAX_FIELD_CHARS } from '../config/config.js';
import { parseMoney, type Cents } from '../model/money.js';
import type { Competitor, PriceItem } from '../model/price-item.js';
import { textProblem } from '../model/text.js';

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
  /** One rule for every piece of text in an item: pushes `<name> <why>` and answers false when it breaks it. */
  const checkText = (name: string, value: string): boolean => {
    const problem = textProblem(value) ?? (value.length > maxFieldChars ? `longer than ${maxFieldChars} characters (MAX_FIELD_CHARS)` : null);
    if (problem !== null) problems.push(`${name} ${problem}`);
    return problem === null;
  };
  const present = (name: string): boolean => row[name] !== undefined && row[name] !== null && !(text && row[name] === '');

  const string = (name: string, required = false, max = Infinity): string | null => {
    if (!present(name)) {
      if (required) problems.push(`${name} is required`);
      return null;
    }
    let value = row[name];
    if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
    if (typeof value !== 'string') {
      problems.push(`${name} must be a string`);
      return null;
    }
    if (!checkText(name, value)) return value;
    if (required && value.trim() === '') problems.push(`${name} must not be empty`);
    else if (value.length > max) problems.push(`${name} must be at most ${max} characters`);
    return value;
  };
  const money = (name: string, required = false): Cents | null => {
    if (!present(name)) {
      if (required) problems.push(`${name} is required`);
      return null;
    }
    const cents = parseMoney(row[name]);
    if (typeof cents === 'string') {
      problems.push(`${name} ${cents}`);
      return null;
    }
    return cents;
  };
  const httpUrl = (name: string): string | null => {
    const value = string(name);
    if (value !== null && !isHttpUrl(value)) problems.push(`${name} must be an absolute http(s) URL`);
    return value;
  };

  const offerId = string('offer_id', true, 120);
  const name = string('name', true);
  const price = money('price', true);
  const oldPrice = money('old_price');
  const purchasePrice = money('purchase_price');

  let currency = storeCurrency;
  const currencyText = string('currency');
  if (currencyText !== null) {
    if (/^[A-Za-z]{3}$/.test(currencyText)) currency = currencyText.toUpperCase();
    else problems.push('currency must be an ISO 4217 code like RUB');
  }

  let quantity: number | null = null;
  if (present('quantity')) {
    const value = text && typeof row.quantity === 'string' && /^\d+$/.test(row.quantity) ? Number(row.quantity) : row.quantity;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) quantity = value;
    else problems.push('quantity must be an integer ≥ 0');
  }

  let available = quantity === null ? true : quantity > 0;
  if (present('available')) {
    const value = parseBoolean(row.available);
    if (value === null) problems.push('available must be true or false');
    else available = value;
  }

  const category = string('category');
  const competitors = parseCompetitors(text ? fromJsonText(row.competitors) : row.competitors, present('competitors'), problems, checkText);
  const attributes = parseAttributes(text ? fromJsonText(row.attributes) : row.attributes, present('attributes'), problems, checkText);
  if (text) collectAttributeColumns(row, attributes, problems, checkText);

  const item: PriceItem = {
    offer_id: offerId ?? '',
    name: name ?? '',
    price: price ?? 0,
    old_price: oldPrice,
    purchase_price: purchasePrice,
    currency,
    available,
    quantity,
    url: httpUrl('url'),
    picture: httpUrl('picture'),
    vendor: string('vendor'),
    vendor_code: string('vendor_code'),
    barcode: string('barcode'),
    description: string('description'),
    category: category === null ? null : normalizeCategory(category),
    competitors,
    attributes: attributes.size > 0 ? Object.fromEntries(attributes) : null,
  };
  if (item.category === '') item.category = null;
  return problems.length > 0 ? { problems } : { item };
}

type CheckText = (name: string, value: string) => boolean;

/** `Electronics /Phones ` → `Electronics / Phones`: one spelling per path, so category ids stay stable. */
export const normalizeCategory = (path: string): string =>
  path.split('/').map((level) => level.trim()).filter((level) => level !== '').join(' / ');

const isHttpUrl = (value: string): boolean => {
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

function parseCompetitors(value: unknown, present: boolean, problems: string[], checkText: CheckText): Competitor[] | null {
  if (!present || value === undefined || value === null) return null;
  if (!Array.isArray(value)) {
    problems.push('competitors must be a list of {name, price, url?, available?}');
    return null;
  }
  const competitors: Competitor[] = [];
  value.forEach((entry: unknown, index) => {
    const at = `competitors[${index}]`;
    if (entry === null || typeof entry !== 'object') return void problems.push(`${at} must be an object`);
    const c = entry as Record<string, unknown>;
    if (typeof c.name !== 'string' || c.name.trim() === '') return void problems.push(`${at}.name is required`);
    if (!checkText(`${at}.name`, c.name)) return;
    const price = parseMoney(c.price);
    if (typeof price === 'string') return void problems.push(`${at}.price ${price}`);
    const url = c.url === undefined || c.url === null ? null : c.url;
    if (url !== null && (typeof url !== 'string' || !isHttpUrl(url))) return void problems.push(`${at}.url must be an absolute http(s) URL`);
    if (url !== null && !checkText(`${at}.url`, url)) return;
    const available = c.available === undefined || c.available === null ? null : parseBoolean(c.available);
    if (available === null && c.available !== undefined && c.available !== null) return void problems.push(`${at}.available must be true or false`);
    competitors.push({ name: c.name.trim(), price, url: url as string | null, available });
  });
  return competitors.length > 0 ? competitors : null;
}

function parseAttributes(value: unknown, present: boolean, problems: string[], checkText: CheckText): Map<string, string> {
  const attributes = new Map<string, string>();
  if (!present || value === undefined || value === null) return attributes;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push('attributes must be an object of string values');
    return attributes;
  }
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (!checkAttributeKey(key, checkText)) continue;
    if (typeof entry === 'string') {
      if (checkText(`attributes.${key}`, entry)) attributes.set(key, entry);
    } else if (typeof entry === 'number' || typeof entry === 'boolean') attributes.set(key, String(entry));
    else if (entry !== null) problems.push(`attributes.${key} must be a string`);
  }
  return attributes;
}

/** CSV spells attributes as columns named `attributes.<key>`. */
function collectAttributeColumns(row: Record<string, unknown>, attributes: Map<string, string>, problems: string[], checkText: CheckText): void {
  for (const [column, value] of Object.entries(row)) {
    if (!column.startsWith('attributes.') || typeof value !== 'string' || value === '') continue;
    const key = column.slice('attributes.'.length);
    if (key === '') problems.push('a column named "attributes." needs a key after the dot');
    else if (checkAttributeKey(key, checkText) && checkText(column, value)) attributes.set(key, value);
  }
}

/** An attribute's name becomes a JSON property, an XML element and a CSV header: the same text rule as its value. */
function checkAttributeKey(key: string, checkText: CheckText): boolean {
  return checkText('an attribute name', key);
}
