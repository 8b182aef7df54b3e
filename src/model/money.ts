/**
 * Money is kept as integer minor units (kopecks, cents): exact, and cheap to format.
 * 2^53 minor units is ~90 trillion in major units, far above any price.
 */
export type Cents = number;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Reads a JSON number or a decimal string into minor units.
 * Returns a reason string when the value is not a money amount of at most two fractional digits.
 */
export function parseMoney(value: unknown): Cents | string {
  const cents = typeof value === 'string' ? plainTextCents(value) : typeof value === 'number' ? plainNumberCents(value) : -1;
  return cents >= 0 ? cents : decimalMoney(value);
}

/** Integer digits plainTextCents reads: 13 of them and two more make at most 10^15 minor units, a safe integer. */
const PLAIN_DIGITS = 13;

/**
 * The minor units of a text as prices are mostly written (`1990`, `1990.5`, `1990.50`), read a
 * character at a time; -1 for any other text, which decimalMoney reads. The regular expression
 * and the strings it makes, for five or six amounts of a rich item, were ~2 % of a
 * publication's main thread (bench/RESULTS.md, "2026-11-27, later morning").
 */
function plainTextCents(text: string): number {
  const length = text.length;
  let units = 0;
  let at = 0;
  for (; at < length; at++) {
    const digit = text.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) break;
    units = units * 10 + digit;
  }
  if (at === 0 || at > PLAIN_DIGITS) return -1;
  if (at === length) return units * 100;
  const decimals = length - at - 1;
  if (text.charCodeAt(at) !== 46 || decimals < 1 || decimals > 2) return -1;
  const tenths = text.charCodeAt(at + 1) - 48;
  const hundredths = decimals === 2 ? text.charCodeAt(at + 2) - 48 : 0;
  if (tenths < 0 || tenths > 9 || hundredths < 0 || hundredths > 9) return -1;
  return units * 100 + tenths * 10 + hundredths;
}

/**
 * The minor units of a number below 10^13 that is its minor units ÷ 100 (349.9, 19.99, 7);
 * -1 for any other number, which decimalMoney reads. Such a number prints (String) as those
 * minor units' decimal, of at most two fractional digits, so decimalMoney would answer the same.
 */
function plainNumberCents(value: number): number {
  if (!(value > 0 && value < 1e13)) return -1;
  const cents = Math.round(value * 100);
  return cents / 100 === value ? cents : -1;
}

/** parseMoney by its definition: the value's decimal text, of at most two fractional digits once trailing zeros go. */
export function decimalMoney(value: unknown): Cents | string {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'must be a finite number';
    if (value < 0) return 'must be ≥ 0';
    // String(349.9) is "349.9": JS prints the shortest text that reads back as the same double,
    // so a price written with two decimals in JSON comes back exactly as written.
    text = String(value);
    if (text.includes('e')) return 'is out of range';
  } else if (typeof value === 'string') {
    text = value.trim();
    if (text.startsWith('-')) return 'must be ≥ 0';
  } else {
    return 'must be a number or a decimal string';
  }
  const match = DECIMAL.exec(text);
  if (!match) return 'must be a decimal number like 1990.50';
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > 2) return 'has more than two fractional digits';
  const cents = Number(match[1]) * 100 + Number(fraction.padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) return 'is out of range';
  return cents;
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

/** `199050` → `"1990.50"`: exactly two fractional digits, no grouping. */
export function formatMoney(cents: Cents, decimalSeparator = '.'): string {
  const units = Math.floor(cents / 100);
  return `${units}${decimalSeparator}${TWO_DIGITS[cents - units * 100]}`;
}

/** Minor units as a JSON/XML number: `199050` → `1990.5`, `100` → `1`. */
export function moneyToNumber(cents: Cents): number {
  return cents / 100;
}
