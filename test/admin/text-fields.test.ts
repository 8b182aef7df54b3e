/**
 * #20 findings 12 and 14: every text field follows one rule (no C0 control but tab, LF, CR; no
 * unpaired surrogate) and a refusal is 422 on both databases — a NUL in a store name used to be
 * a PostgreSQL 500, an ESC sequence in a key label reached the terminal through `key list`.
 * A profile's delimiter is one of the documented set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../support/dialects.js';
import { ADMIN_TOKEN, startAdminHarness, type AdminHarness } from './admin-harness.js';

const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };
const HOSTILE_TEXT = ['nul\u0000here', 'bell\u0007', 'esc \u001b[31mred\u001b[0m', 'lone \ud800 surrogate'];
const COLUMNS = [{ field: 'offer_id', title: 'SKU' }];

for (const dialect of DIALECTS) {
  describe(`text fields and profile delimiters are checked alike (${dialect})`, () => {
    let h: AdminHarness;
    const call = async (method: 'POST' | 'PUT', url: string, payload: object) => {
      const response = await h.admin.inject({ method, url, headers: AUTH, payload });
      return { status: response.statusCode, body: response.json() };
    };
    const assertRefused = (answer: { status: number; body: { code: string; detail: string } }, field: RegExp) => {
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 'invalid_input');
      assert.match(answer.body.detail, field);
    };

    before(async () => {
      h = await startAdminHarness(dialect);
      assert.equal((await call('POST', '/admin/stores', { id: 'texts', name: 'Texts' })).status, 201);
    });
    after(async () => {
      await h.close();
    });

    test('#14 store names, companies and URLs: control characters and lone surrogates are 422, never 500', async () => {
      for (const text of HOSTILE_TEXT) {
        assertRefused(await call('POST', '/admin/stores', { id: 'bad-name', name: text }), /^name contains/);
        assertRefused(await call('POST', '/admin/stores', { id: 'bad-company', name: 'ok', company: text }), /company contains/);
      }
      assertRefused(await call('POST', '/admin/stores', { id: 'bad-url', name: 'ok', url: 'https://x.example/\u0007' }), /url contains a control character/);
    });

    test('#14 key labels, issued or imported: control characters are 422', async () => {
      for (const text of HOSTILE_TEXT) {
        assertRefused(await call('POST', '/admin/stores/texts/keys', { label: text }), /^label contains/);
        assertRefused(await call('POST', '/admin/stores/texts/keys/import', { value: 'legacy-key-0123456789', label: text }), /^label contains/);
      }
      assert.equal((await call('POST', '/admin/stores/texts/keys', { label: 'tab\tis fine' })).status, 201);
    });

    test('#14 profile names, titles, keys and constants: control characters are 422', async () => {
      for (const text of HOSTILE_TEXT) {
        assertRefused(await call('PUT', '/admin/stores/texts/profiles', { name: text, columns: COLUMNS }), /^name contains/);
        assertRefused(await call('PUT', '/admin/stores/texts/profiles', { name: 'p', columns: [{ field: 'offer_id', title: text }] }), /columns\[0\]\.title contains/);
        assertRefused(await call('PUT', '/admin/stores/texts/profiles', { name: 'p', columns: [{ value: text, title: 'c' }] }), /columns\[0\]\.value contains/);
      }
    });

    test('#12 a profile delimiter is one of , ; | or tab; a digit, a letter, a space or two characters are refused', async () => {
      for (const delimiter of ['1', 'a', ' ', '.', '"', ';;', '\u0000', '€']) {
        assertRefused(await call('PUT', '/admin/stores/texts/profiles', { name: 'p', columns: COLUMNS, delimiter }), /delimiter must be one of/);
      }
      for (const delimiter of [',', ';', '|', '\t']) {
        const created = await call('PUT', '/admin/stores/texts/profiles', { name: 'p', columns: COLUMNS, delimiter, decimal_separator: '.' });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal(created.body.delimiter, delimiter);
      }
    });
  });
}
