import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { negotiateEncoding } from './content-coding.js';

describe('negotiateEncoding', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br;q=0.5, gzip;q=1', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.2, br;q=0.8', 'br'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0.5, br;q=0.1', 'gzip'],
    ['*;q=0', 'identity'],
    ['gzip;q=0.5, identity;q=1', 'identity'],
    ['gzip;q=1, identity;q=0.5', 'gzip'],
    ['GZIP; Q=0.9 , BR; Q=0.8', 'gzip'],
    ['deflate, compress', 'identity'],
    ['br;q=nonsense, gzip;q=0.1', 'gzip'],
    ['br;q=2, gzip;q=0.1', 'gzip'],
  ];
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} → ${expected}`, () => assert.equal(negotiateEncoding(header), expected));
  }
});
