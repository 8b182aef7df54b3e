/** The export addresses' query parameters (src/http/export-params.ts, CONTRACT §3), as a pure function. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isAppError } from '../../src/errors/app-error.js';
import { parseExportParams as parseWith } from '../../src/http/export-params.js';
import { firstString } from '../../src/http/public-route.js';
import { EXPORT_FORMATS } from '../../src/formats/registry.js';

const parseExportParams = (query: unknown, allowed: readonly string[] = EXPORT_FORMATS) => parseWith(query, allowed);

function refusal(query: Record<string, unknown>, allowed?: readonly ('csv' | 'xlsx')[]): string {
  try {
    parseExportParams(query, allowed);
  } catch (error) {
    assert.ok(isAppError(error));
    assert.equal(error.code, 'invalid_parameter');
    return error.detail;
  }
  return assert.fail(`accepted ${JSON.stringify(query)}`);
}

describe('parseExportParams', () => {
  test('nothing given: the defaults', () => {
    assert.deepEqual(parseExportParams({}), { format: null, onlyAvailable: false, profileId: null, version: null });
    assert.deepEqual(parseExportParams(undefined), { format: null, onlyAvailable: false, profileId: null, version: null });
  });

  test('format in any case; an empty value counts as absent; the first of repeated values counts', () => {
    assert.equal(parseExportParams({ format: 'XLSX' }).format, 'xlsx');
    assert.equal(parseExportParams({ format: '' }).format, null);
    assert.equal(parseExportParams({ format: ['json', 'csv'] }).format, 'json');
  });

  test('only_available takes true/false, 1/0, yes/no in any case', () => {
    for (const yes of ['true', 'TRUE', '1', 'yes', 'Yes']) assert.equal(parseExportParams({ only_available: yes }).onlyAvailable, true, yes);
    for (const no of ['false', '0', 'no', 'NO']) assert.equal(parseExportParams({ only_available: no }).onlyAvailable, false, no);
    assert.match(refusal({ only_available: 'maybe' }), /only_available must be true or false/);
  });

  test('profile_id is a positive integer of up to 18 digits', () => {
    assert.equal(parseExportParams({ profile_id: '42' }).profileId, 42);
    assert.equal(parseExportParams({ profile_id: '007' }).profileId, 7);
    for (const bad of ['0', '000', '-1', '1.5', 'abc', '1'.repeat(19)]) assert.match(refusal({ profile_id: bad }), /profile_id must be a positive integer/, bad);
  });

  test('an unknown format names the allowed ones, which the address may narrow', () => {
    assert.match(refusal({ format: 'pdf' }), /format must be one of csv, tsv, xlsx, json, xml, yml/);
    assert.match(refusal({ format: 'csv' }, ['xlsx']), /format must be one of xlsx \(any case\)/);
  });
});

describe('firstString', () => {
  test('the first text value of a header or parameter', () => {
    assert.equal(firstString('a'), 'a');
    assert.equal(firstString(['b', 'c']), 'b');
    assert.equal(firstString(undefined), undefined);
    assert.equal(firstString([1]), undefined);
  });
});
