/**
 * PostgreSQL's page reads (items.ts render): each page's COPY asks for the primary key's index
 * scan with SET LOCAL, which must end with the page's own message, not stay on the pooled
 * connection for whatever runs on it next.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { jsonRecordSpec } from '../../formats/json.js';
import { builtRecords, bytesOf, itemsAcrossPages } from '../../../test/support/built-records.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/dialects.js';
import { buildMeta, plainItem } from '../../../test/support/format-items.js';
import { PostgresItems } from './items.js';
import { copyRecordsModule } from './native-copy-records.js';

for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: a render's page reads`, () => {
    let testDb: TestDatabase;
    /** One connection, so the setting is looked at on the very connection every page used. */
    let pool: pg.Pool;
    before(async () => {
      testDb = await createTestDatabase(dialect);
      pool = new pg.Pool({ connectionString: testDb.url, max: 1 });
    });
    after(async () => {
      await pool?.end();
      await testDb?.drop();
    });

    const lists = builtRecords(() => testDb.db);
    const module = copyRecordsModule();
    for (const records of module ? [null, module] : [null]) {
      it(`leave the pooled connection with the settings it had (${records ? 'the C module' : 'SQL'} records)`, async () => {
        const items = Array.from({ length: itemsAcrossPages(dialect) }, (_, i) => plainItem({ offer_id: `P-${i}`, price: i }));
        const listId = await lists.publish(items);
        const store = new PostgresItems({
          pool,
          withClient: async (work) => {
            const client = await pool.connect();
            try {
              return await work(client);
            } finally {
              client.release();
            }
          },
          timed: (config) => config,
          records,
        });
        const spec = jsonRecordSpec(buildMeta(items).columns);
        assert.ok(spec);
        const rendered = await bytesOf(store.render(listId, spec, { onlyAvailable: false }));
        assert.ok(rendered.includes(`"offer_id":"P-${items.length - 1}"`), 'every page was read');
        const { rows } = await pool.query<{ bitmap: string }>("SELECT current_setting('enable_bitmapscan') AS bitmap");
        assert.equal(rows[0].bitmap, 'on');
      });
    }
  });
}
