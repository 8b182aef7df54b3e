// `npm run openapi`: writes openapi.json at the root of the checkout from the app's own route
// schemas (what GET /openapi.json answers with the default configuration). The file is checked
// in so a change of the public surface shows in review; test/http/openapi-drift.test.ts fails
// when the app and the file disagree.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/config.js';
import { buildPublicApp } from '../src/composition.js';
import { openDatabase } from '../src/store/factory.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

/** The document as the app serves it with no BASE_PATH or PUBLIC_URL, pretty-printed, with a final newline. */
export async function renderOpenApi(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'price-export-openapi-'));
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'openapi.db')}`, LOG_LEVEL: 'silent' });
  const db = await openDatabase(config.databaseUrl);
  try {
    await db.migrate();
    const app = await buildPublicApp({ config, db });
    try {
      const response = await app.inject({ url: '/openapi.json' });
      if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
      return `${JSON.stringify(JSON.parse(response.body), null, 2)}\n`;
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(OPENAPI_FILE, await renderOpenApi());
  console.log(`wrote ${OPENAPI_FILE}`);
}
