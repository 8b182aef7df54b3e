/** Money parsing and formatting (src/model/money.ts): exact minor units, reasons for what is refused. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatMoney, moneyToNumber, parseMoney } from '../../src/model/money.js';

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
