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
