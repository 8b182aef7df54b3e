import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rememberRecent } from './recent-results.js';

describe('rememberRecent', () => {
  it('computes once per argument while it is remembered, and starts over past its bound', () => {
    const computed: number[] = [];
    const double = rememberRecent((n: number) => (computed.push(n), n * 2), 2);
    assert.deepEqual([double(1), double(2), double(1), double(2)], [2, 4, 2, 4]);
    assert.deepEqual(computed, [1, 2]);
    assert.equal(double(3), 6);
    assert.equal(double(1), 2);
    assert.deepEqual(computed, [1, 2, 3, 1]);
  });
});
