/** The key format and its checksum (src/domain/api-key.ts, CONTRACT §2), without a database. */
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { describe, test } from 'node:test';
import { displayPrefix, generateApiKey, hashApiKey, isImportableLegacyKey, keyShape } from '../../src/domain/api-key.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The checksum as CONTRACT §2 spells it, written independently of the code under test. */
function contractChecksum(body: string): string {
  let value = crc32(body);
  let text = '';
  do {
    text = BASE62[value % 62] + text;
    value = Math.floor(value / 62);
  } while (value > 0);
  return text.padStart(6, '0');
}

describe('API keys', () => {
  test('a new key is pex_ + 30 base62 chars + the CRC32 of those 30 in base62, padded to 6', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      assert.match(key, /^pex_[0-9A-Za-z]{36}$/);
      assert.equal(key.slice(34), contractChecksum(key.slice(4, 34)));
      assert.equal(keyShape(key), 'new');
    }
  });

  test('a known body gives its known checksum', () => {
    const body = 'A'.repeat(30);
    const key = `pex_${body}${contractChecksum(body)}`;
    assert.equal(keyShape(key), 'new');
  });

  test('any single changed character breaks the checksum', () => {
    const key = generateApiKey();
    for (const at of [4, 20, 33, 34, 39]) {
      const swapped = key[at] === 'x' ? 'y' : 'x';
      assert.equal(keyShape(key.slice(0, at) + swapped + key.slice(at + 1)), 'malformed', `position ${at}`);
    }
  });

  test('pex_ with the wrong length or alphabet is malformed, never legacy', () => {
    const key = generateApiKey();
    assert.equal(keyShape(key.slice(0, -1)), 'malformed');
    assert.equal(keyShape(`${key}0`), 'malformed');
    assert.equal(keyShape(`pex_${'-'.repeat(36)}`), 'malformed');
    assert.equal(isImportableLegacyKey('pex_whatever'), false);
  });

  test('legacy keys: 1–256 chars of A-Z a-z 0-9 - _ . ~', () => {
    assert.equal(keyShape('old-site-key.2019~x'), 'legacy');
    assert.equal(keyShape('a'.repeat(256)), 'legacy');
    assert.equal(keyShape('a'.repeat(257)), 'malformed');
    assert.equal(keyShape(''), 'malformed');
    assert.equal(keyShape('has space'), 'malformed');
    assert.equal(isImportableLegacyKey('old-site-key.2019~x'), true);
  });

  test('the hash is SHA-256 hex; the display prefix never shows enough to use the key', () => {
    assert.equal(hashApiKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateApiKey();
    assert.equal(displayPrefix(key), key.slice(0, 8));
    assert.equal(displayPrefix('legacy-key'), 'lega');
    assert.equal(displayPrefix('ab'), 'a');
  });
});
