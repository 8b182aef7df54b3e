import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PostgresDialect } from '../../src/store/postgres/dialect.js';
import { adminCaller } from '../support/admin-client.js';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { until } from '../support/until.js';
import { untilDemandWritten } from '../support/variant-demand.js';
import { createEmptyDatabase, freePort, runCli, startServer, type ServerProcess } from './processes.js';

/**
 * README's "Deployment on PostgreSQL" lets a connection pooler in session mode stand between
 * the instances and PostgreSQL. PgBouncer (Debian's, 1.18) takes only the startup parameters it
 * knows: a connection that asks for `options` (as the pool's did from a472cd4, for `-c jit=off`)
 * is refused before it starts, so no instance could start behind it. The session's settings are
 * made by SET after connecting instead.
 */
const PG = process.env.PRICE_EXPORT_TEST_PG_URL;
const skip = !PG
  ? 'needs PostgreSQL: set PRICE_EXPORT_TEST_PG_URL (npm test sets it when the server answers)'
  : pgbouncerInstalled()
    ? false
    : 'needs PgBouncer (Debian pgbouncer, /usr/sbin/pgbouncer)';
if (skip && PG) {
  console.log(`SKIPPED: ${skip}`);
  if (process.env.PRICE_EXPORT_REQUIRE_SERVICES === '1') {
    test('PgBouncer is required (PRICE_EXPORT_REQUIRE_SERVICES=1)', () => assert.fail(skip));
  }
}

const ADMIN_TOKEN = `pgbouncer-${randomBytes(12).toString('hex')}`;
const SHOP = `pgbouncer-${randomBytes(4).toString('hex')}`;

describe('behind PgBouncer in session mode', { skip }, () => {
  let bouncer: PgBouncer;
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let via: string;
  let server: ServerProcess | undefined;
  let adminBase = '';
  let tmp = '';
  const admin = adminCaller(() => adminBase, ADMIN_TOKEN);

  before(async () => {
    bouncer = await startPgBouncer(PG!);
    db = await createEmptyDatabase(PG!);
    via = bouncer.through(db.url);
    tmp = mkdtempSync(join(tmpdir(), 'price-export-pgbouncer-test-'));
  });
  after(async () => {
    await server?.stop();
    await bouncer?.stop();
    await db?.drop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("the pool's connections open through it, and run without JIT", async () => {
    const pool = new PostgresDialect(via);
    try {
      // Asked at once, with no idle connection yet: the pool opens one for each.
      const answers = await Promise.all([1, 2, 3].map(() => pool.query({ sql: "SELECT current_setting('jit') AS jit", params: [] })));
      assert.deepEqual(answers.map((answer) => answer.rows[0].jit), ['off', 'off', 'off'], bouncer.output());
    } finally {
      await pool.close();
    }
  });

  test('an instance migrates, publishes and serves exports through it, and hears of a publication by the command line through it', async () => {
    const [port, adminPort] = await Promise.all([freePort(), freePort()]);
    server = await startServer(port, { DATABASE_URL: via, ADMIN_TOKEN, ADMIN_PORT: String(adminPort), LOG_LEVEL: 'info', NODE_ENV: 'production' }, [adminPort]);
    adminBase = `http://127.0.0.1:${adminPort}`;
    await admin('POST', '/admin/stores', JSON.stringify({ id: SHOP, name: 'Behind PgBouncer' }));
    const key = (await admin('POST', `/admin/stores/${SHOP}/keys`, JSON.stringify({ label: 'pgbouncer test' }))).value as string;
    const lines = ['{"offer_id":"A-1","name":"Чайник","price":1990.5}', '{"offer_id":"B-2","name":"Kettle","price":1}'];
    await admin('POST', `/admin/stores/${SHOP}/price-lists`, `${lines.join('\n')}\n`, 'application/x-ndjson');

    // The JSON and CSV pages are read by COPY on a pooled connection.
    const json = await fetch(`${server.base}/api/export/latest?key=${key}&format=json`);
    assert.equal(json.status, 200, server.output());
    const { items } = (await json.json()) as { items: { offer_id: string; price: number }[] };
    assert.deepEqual(items.map((item) => [item.offer_id, item.price]), [['A-1', 1990.5], ['B-2', 1]]);
    const csv = await fetch(`${server.base}/api/export/latest?key=${key}`);
    assert.equal(csv.status, 200);
    assert.match(await csv.text(), /A-1,Чайник,1990\.50/);

    // A second publication is seen on the next request.
    await admin('POST', `/admin/stores/${SHOP}/price-lists`, `${[...lines, '{"offer_id":"C-3","name":"Cup","price":5}'].join('\n')}\n`, 'application/x-ndjson');
    const me = await fetch(`${server.base}/api/me`, { headers: { 'x-api-key': key } });
    assert.equal(((await me.json()) as { price_list: { version: number } }).price_list.version, 2);

    // Another process publishes through PgBouncer too, and the instance hears of it on its LISTEN
    // connection: it warms the variant asked for above (once its demand is written, within a second).
    await untilDemandWritten(db.url, SHOP, (rows) => rows >= 1, 'the demand in the database');
    const file = join(tmp, 'third.ndjson');
    writeFileSync(file, `${[...lines, '{"offer_id":"C-3","name":"Cup","price":6}'].join('\n')}\n`);
    assert.match((await runCli(['publish', '--store', SHOP, file], { DATABASE_URL: via })).stdout, /^version 3: published/);
    const warmed = (line: string) => line.includes('hot variants warmed') && line.includes(`"storeId":"${SHOP}"`) && line.includes('"version":3');
    await until('the instance to warm version 3', () => server!.output().split('\n').some(warmed));
    assert.ok(!server.output().includes(key), 'the key appeared in the log');
  });

  test('the delivery ledger writes through it: a consumer\'s first answer tried for its run, the next batch by binary COPY', async () => {
    assert.ok(server, 'the instance the test above started');
    const base = server.base;
    const store = `${SHOP}-ledger`;
    await admin('POST', '/admin/stores', JSON.stringify({ id: store, name: 'The ledger behind PgBouncer' }));
    const key = (await admin('POST', `/admin/stores/${store}/keys`, JSON.stringify({ label: 'ledger' }))).value as string;
    await admin('POST', `/admin/stores/${store}/price-lists`, '{"offer_id":"A-1","name":"Чайник","price":10}\n', 'application/x-ndjson');
    const download = async () => {
      const answer = await fetch(`${base}/api/export/latest?key=${key}&format=json`);
      await answer.arrayBuffer();
      return answer.status;
    };
    const recorded = async () => {
      const answer = await fetch(`${base}/api/me/deliveries?limit=100`, { headers: { 'x-api-key': key } });
      return ((await answer.json()) as { deliveries: { status: number; format: string; finished: boolean }[] }).deliveries;
    };
    assert.equal(await download(), 200);
    await until('the first answer in the ledger', async () => (await recorded()).length === 1);
    // Answered under a minute before (sql/ledger-writes.ts SELDOM_AFTER_MS): not tried again, so the
    // next batch is a busy server's, which PostgreSQL takes as one binary COPY through the pooler.
    assert.deepEqual([await download(), await download()], [200, 200]);
    await until('the next two answers in the ledger', async () => (await recorded()).length === 3);
    assert.deepEqual((await recorded()).map((d) => [d.status, d.format, d.finished]), [[200, 'json', true], [200, 'json', true], [200, 'json', true]]);
    assert.doesNotMatch(server.output(), /delivery ledger write failed/);
  });
});
