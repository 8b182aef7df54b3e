import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME } from '../model/profile.js';
import { validateProfile } from './profiles.js';

const BASE = { name: 'p', columns: [{ field: 'offer_id', title: 'id' }] };

describe('profile options of CONTRACT §14', () => {
  it('default to no formula escaping and the documented price type', () => {
    const profile = validateProfile(BASE);
    assert.equal(profile.escape_formulas, false);
    assert.equal(profile.price_type_id, DEFAULT_PRICE_TYPE_ID);
    assert.equal(profile.price_type_name, DEFAULT_PRICE_TYPE_NAME);
    assert.ok(DEFAULT_PRICE_TYPE_ID.length <= 40);
  });

  it('take the given values', () => {
    const profile = validateProfile({ ...BASE, escape_formulas: true, price_type_id: 'bd72d8f9-55bc-11d9-848a-00112f43529a', price_type_name: 'Оптовая' });
    assert.deepEqual([profile.escape_formulas, profile.price_type_id, profile.price_type_name], [true, 'bd72d8f9-55bc-11d9-848a-00112f43529a', 'Оптовая']);
  });

  it('refuse a non-boolean escape_formulas, and a price type the 2.08 schema cannot carry (id over 40, empty), naming each', () => {
    assert.throws(() => validateProfile({ ...BASE, escape_formulas: 'yes', price_type_id: 'x'.repeat(41), price_type_name: ' ' }), (error: Error & { detail?: string }) => {
      const detail = error.detail ?? error.message;
      return /escape_formulas/.test(detail) && /price_type_id/.test(detail) && /price_type_name/.test(detail);
    });
    assert.equal(validateProfile({ ...BASE, price_type_id: 'x'.repeat(40) }).price_type_id?.length, 40);
  });
});
