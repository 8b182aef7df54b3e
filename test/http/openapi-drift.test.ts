/**
 * openapi.json at the root is the checked-in description of the public surface: it must be
 * exactly what the app serves, so a change of a route schema shows up in review. When this
 * fails on purpose, run `npm run openapi` and commit the new file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { OPENAPI_FILE, renderOpenApi } from '../../scripts/openapi.js';

test('openapi.json is what the app serves (regenerate with npm run openapi)', async () => {
  const served = await renderOpenApi();
  const checkedIn = readFileSync(OPENAPI_FILE, 'utf8');
  assert.deepEqual(JSON.parse(checkedIn), JSON.parse(served), 'openapi.json has drifted from the app: run `npm run openapi` and commit it');
  assert.equal(checkedIn, served, 'openapi.json is not in the generated layout: run `npm run openapi`');
});
