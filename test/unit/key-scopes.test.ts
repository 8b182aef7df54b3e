import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { basicAuthKey } from '../../src/http/basic-auth.js';
import { checkKeyScope, describeScopes, parseExpiry, parseOverlap, parseScopes } from '../../src/domain/key-scopes.js';
import { EXPORT_FORMATS } from '../../src/formats/registry.js';
import { SCOPE_FORMATS } from '../../src/model/key-scopes.js';

const code = (run: () => unknown) => {
  try {
    run();
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? 'thrown';
  }
};

describe('key scopes, pure parts', () => {
  test('a scope may name every export format (the model lists them apart from the writers)', () => {
    for (const format of EXPORT_FORMATS) assert.ok((SCOPE_FORMATS as readonly string[]).includes(format), format);
  });

  test('parseScopes: lists from text or arrays, any case, duplicates dropped; nothing given is no scope', () => {
    assert.deepEqual(parseScopes({ addresses: ' Prices, me ,prices', formats: ['YML'], profiles: '7' }, [7]), { addresses: ['prices', 'me'], formats: ['yml'], profiles: [7] });
    assert.equal(parseScopes({}, []), null);
    assert.equal(parseScopes({ addresses: null, formats: undefined }, []), null);
    assert.equal(code(() => parseScopes({ addresses: '' }, [])), 'invalid_input');
    assert.equal(code(() => parseScopes({ profiles: '0' }, [0])), 'invalid_input');
  });

  test('checkKeyScope: each dimension at its boundary; undefined dimensions are not judged', () => {
    const scopes = { addresses: ['prices' as const], formats: ['yml'], profiles: [3] };
    assert.equal(code(() => checkKeyScope(scopes, { address: 'prices', format: 'yml', profileId: 3 })), 'ok');
    assert.equal(code(() => checkKeyScope(scopes, { address: 'summary', format: 'yml', profileId: 3 })), 'key_scope');
    assert.equal(code(() => checkKeyScope(scopes, { address: 'prices', format: 'csv', profileId: 3 })), 'key_scope');
    assert.equal(code(() => checkKeyScope(scopes, { address: 'prices', format: 'yml', profileId: 4 })), 'key_scope');
    assert.equal(code(() => checkKeyScope(scopes, { address: 'prices', format: 'yml', profileId: null })), 'key_scope');
    assert.equal(code(() => checkKeyScope(scopes, { address: 'prices' })), 'ok');
    assert.equal(code(() => checkKeyScope(null, { address: 'summary', format: 'csv', profileId: null })), 'ok');
    assert.equal(describeScopes(null), 'every address, format and profile');
  });

  test('parseOverlap and parseExpiry', () => {
    assert.equal(parseOverlap(undefined), 7 * 86_400_000);
    assert.equal(parseOverlap('0'), 0);
    assert.equal(parseOverlap('90s'), 90_000);
    assert.equal(parseOverlap('12h'), 12 * 3_600_000);
    assert.equal(parseOverlap('366d'), 366 * 86_400_000);
    for (const bad of ['367d', '7', '-1d', '1w', '7 days', '1.5h']) assert.equal(code(() => parseOverlap(bad)), 'invalid_input', bad);
    const now = new Date('2026-11-23T12:00:00Z');
    assert.equal(parseExpiry('2026-11-23T12:00:00.001Z', now)?.getTime(), now.getTime() + 1);
    assert.equal(parseExpiry('2026-11-23T15:00:00+03:00', new Date('2026-11-23T11:59:59Z'))?.toISOString(), '2026-11-23T12:00:00.000Z');
    for (const bad of ['2026-11-23T12:00:00Z', '2027-01-31', '2027-01-31T00:00:00', 'tomorrow', '2027-02-30T00:00:00Z']) {
      assert.equal(code(() => parseExpiry(bad, now)), 'invalid_input', bad);
    }
  });

  test('basicAuthKey: the password after the first colon; unreadable credentials are invalid_key', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    assert.equal(basicAuthKey(undefined), undefined);
    assert.equal(basicAuthKey('Bearer abc'), undefined);
    assert.equal(basicAuthKey(`Basic ${b64('user:pex_key:with:colons')}`), 'pex_key:with:colons');
    assert.equal(basicAuthKey(`basic   ${b64(':k')}`), 'k');
    assert.equal(basicAuthKey(`Basic ${b64('user:')}`), undefined);
    assert.equal(basicAuthKey(`Basic ${b64('user:k').replace(/=+$/, '')}`), 'k');
    for (const bad of ['Basic', 'Basic ', 'Basic %%%', `Basic ${b64('nocolon')}`, 'Basic a', 'Basic a===']) {
      assert.equal(code(() => basicAuthKey(bad)), 'invalid_key', bad);
    }
  });
});
