/** Money parsing and formatting (src/model/money.ts): exact minor units, reasons for what is refused. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decimalMoney, formatMoney, moneyToNumber, parseMoney } from '../../src/model/money.js';

describe('parseMoney', () => {
  test('numbers and decimal strings become exact minor units', () => {
    const cases: [unknown, number][] = [
      [0, 0], [1, 100], [349.9, 34990], [1990.5, 199050], [0.01, 1], [0.1, 10], [19.99, 1999],
      ['1990.50', 199050], [' 12 ', 1200], ['7.', NaN], ['0.10', 10], ['5.000', 500], ['00012.3', 1230],
    ];
    for (const [input, cents] of cases) {
      if (Number.isNaN(cents)) assert.equal(typeof parseMoney(input), 'string', String(input));
      else assert.equal(parseMoney(input), cents, String(input));
    }
  });

  test('what is refused comes with its reason', () => {
    assert.equal(parseMoney(-1), 'must be ≥ 0');
    assert.equal(parseMoney('-1.00'), 'must be ≥ 0');
    assert.equal(parseMoney(Number.NaN), 'must be a finite number');
    assert.equal(parseMoney(Number.POSITIVE_INFINITY), 'must be a finite number');
    assert.equal(parseMoney(1e21), 'is out of range');
    assert.equal(parseMoney('9'.repeat(20)), 'is out of range');
    assert.equal(parseMoney(1.505), 'has more than two fractional digits');
    assert.equal(parseMoney('1.505'), 'has more than two fractional digits');
    assert.equal(parseMoney('1,50'), 'must be a decimal number like 1990.50');
    assert.equal(parseMoney('1e3'), 'must be a decimal number like 1990.50');
    assert.equal(parseMoney(''), 'must be a decimal number like 1990.50');
    assert.equal(parseMoney(null), 'must be a number or a decimal string');
    assert.equal(parseMoney(true), 'must be a number or a decimal string');
  });
});

describe('formatMoney and moneyToNumber', () => {
  test('two fractional digits, no grouping, the separator asked for', () => {
    assert.equal(formatMoney(199050), '1990.50');
    assert.equal(formatMoney(1), '0.01');
    assert.equal(formatMoney(0), '0.00');
    assert.equal(formatMoney(123456789, ','), '1234567,89');
  });

  test('formatting reads back as the same amount', () => {
    for (const cents of [0, 1, 9, 10, 99, 100, 101, 34990, 199050, 9_007_199_254_740_991]) {
      assert.equal(parseMoney(formatMoney(cents)), cents);
    }
  });

  test('as a JSON number', () => {
    assert.equal(moneyToNumber(199050), 1990.5);
    assert.equal(moneyToNumber(100), 1);
    assert.equal(moneyToNumber(1), 0.01);
  });
});

describe('parseMoney against its definition (decimalMoney)', () => {
  const same = (value: unknown) => assert.equal(parseMoney(value), decimalMoney(value), `${typeof value} ${String(value)}`);
  test('every number gives the same answer', () => {
    fc.assert(fc.property(fc.oneof(fc.double(), fc.double({ min: 0, max: 1e15 }), fc.integer({ min: -10, max: 2 ** 53 }).map((n) => n / 100), fc.integer({ min: 0, max: 1e6 }).map((n) => n / 1000)), same), { numRuns: 50_000 });
    for (const value of [0, -0, 0.29, 1.005, 1e13 - 0.01, 1e13, 9007199254740.99, 0.1 + 0.2, 5e-324]) same(value);
    assert.ok(Object.is(parseMoney(-0), 0));
  });
  test('every text gives the same answer', () => {
    const unit = fc.constantFrom('0', '1', '5', '9', '.', ' ', '-', '+', 'e', ',', '\u00a0', '٣', '１');
    fc.assert(fc.property(fc.oneof(fc.string({ unit, maxLength: 20 }), fc.stringMatching(/^\d{1,17}(\.\d{0,4})?$/)), same), { numRuns: 50_000 });
    for (const text of ['9999999999999.99', '99999999999999.99', '90071992547409.91', '0.5', '.5', '5.', '05.05']) same(text);
  });
});
