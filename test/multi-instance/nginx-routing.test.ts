import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { nginxInstalled, startNginxFront, type NginxFront } from '../support/nginx-front.js';
import { until } from '../support/until.js';
import { untilDemandWritten } from '../support/variant-demand.js';
import { createEmptyDatabase, freePort, startServer, type ServerProcess } from './processes.js';
import { adminCaller } from '../support/admin-client.js';

/**
 * Issue #18, goal 6: three instances on one PostgreSQL database behind a real nginx. Routed by
 * key (`hash $price_export_route consistent`, docs/running-several-instances.md) and with
 * WARM_SCOPE=instance, a publication costs one render per variant in the whole fleet — the
 * variants fetched by the key before it, and the same ones after it (warmed by the one
 * instance that serves the key). Round robin, the same fetches render each variant on every
 * instance. Renders are counted from the instances' "export rendered" log lines.
 */
const PG = process.env.PRICE_EXPORT_TEST_PG_URL;
const skip = !PG ? 'needs PostgreSQL: set PRICE_EXPORT_TEST_PG_URL (npm test sets it when PostgreSQL answers)'
  : !nginxInstalled() ? 'needs nginx (Debian nginx-light, /usr/sbin/nginx)' : false;
const ADMIN_TOKEN = `route-${randomBytes(12).toString('hex')}`;

/** What a fetcher asks for with one key: addresses 2 and 4 (the key in the path, then in the query). */
const VARIANTS = [
  (key: string) => `/api/export/latest?key=${key}&format=csv`,
  (key: string) => `/api/export/latest?key=${key}&format=json`,
  (key: string) => `/api/export/latest?key=${key}&format=xlsx&only_available=true`,
  (key: string) => `/WebApi/CampaignDataLatestGet/${key}?format=yml`,
];
const FETCHES_PER_VARIANT = 3;

describe('routing by key: one render per variant per publication in a fleet of three (PostgreSQL, nginx)', { skip }, () => {
  let dir: string;
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let fleet: ServerProcess[] = [];
  let routed: NginxFront;
  let roundRobin: NginxFront;
  let adminBase: string;
  const keys: string[] = [];

  const admin = adminCaller(() => adminBase, ADMIN_TOKEN);
  const publish = (shop: string, tag: string) =>
    admin('POST', `/admin/stores/${shop}/price-lists?force=true`,
      Array.from({ length: 1000 }, (_, i) => JSON.stringify({ offer_id: `${tag}-${i}`, name: `Item ${i}`, price: (10 + i / 100).toFixed(2), quantity: i % 3 })).join('\n') + '\n',
      'application/x-ndjson') as Promise<{ version: number }>;

  /** `export rendered` lines of the store's `version`, in the whole fleet. */
  const renders = (shop: string, version: number) =>
    fleet.flatMap((server) => server.output().split('\n')).filter((line) => line.includes('"msg":"export rendered"') && line.includes(`"store":"${shop}"`) && line.includes(`"version":${version},`)).length;
  const warmed = (shop: string) =>
    fleet.flatMap((server) => server.output().split('\n')).filter((line) => line.includes('hot variants warmed') && line.includes(`"storeId":"${shop}"`)).length;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pe-route-'));
    db = await createEmptyDatabase(PG!);
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const adminPort = ports[3];
    const env = { DATABASE_URL: db.url, LOG_LEVEL: 'info', NODE_ENV: 'production', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000', WARM_SCOPE: 'instance' };
    // One after the other: the first migrates the empty database, and the machine is shared.
    fleet.push(await startServer(ports[0], { ...env, ADMIN_TOKEN, ADMIN_PORT: String(adminPort) }, [adminPort]));
    fleet.push(...await Promise.all([startServer(ports[1], env), startServer(ports[2], env)]));
    adminBase = `http://127.0.0.1:${adminPort}`;
    const upstreams = ports.slice(0, 3).map((port) => `127.0.0.1:${port}`);
    routed = await startNginxFront(join(dir, 'routed'), { upstreams, routeByKey: true });
    roundRobin = await startNginxFront(join(dir, 'round-robin'), { upstreams });
  });

  after(async () => {
    await Promise.all([routed?.stop(), roundRobin?.stop()]);
    await Promise.all(fleet.map((server) => server.stop()));
    for (const key of keys) {
      assert.ok(!routed.accessLog().includes(key) && !roundRobin.accessLog().includes(key), 'a key appeared in nginx’s access log');
      for (const server of fleet) assert.ok(!server.output().includes(key), 'a key appeared in a server log');
    }
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Renders of the store in the fleet for its first publication, and for the next one (warmed, then fetched). */
  async function rendersPerPublication(front: NginxFront, shop: string): Promise<[number, number]> {
    await admin('POST', '/admin/stores', JSON.stringify({ id: shop, name: shop }));
    const key = (await admin('POST', `/admin/stores/${shop}/keys`, JSON.stringify({ label: 'fetcher' }))).value as string;
    keys.push(key);
    assert.equal((await publish(shop, 'one')).version, 1);
    // Every instance hears of it (nothing to warm yet): then the fetches come.
    await until(`${shop}: version 1 noticed by the fleet`, () => warmed(shop) === fleet.length);
    const fetchAll = async () => {
      for (const variant of VARIANTS) {
        for (let i = 0; i < FETCHES_PER_VARIANT; i++) assert.equal((await fetch(`${front.base}${variant(key)}`).then(async (r) => (await r.arrayBuffer(), r.status))), 200);
      }
    };
    await fetchAll();
    // A log line waits up to 50 ms for others: every variant's render is logged by then.
    await until(`${shop}: the renders of version 1 logged`, () => renders(shop, 1) >= VARIANTS.length);
    const first = renders(shop, 1);
    // The demand reaches the database (each instance writes what it served within a second).
    await untilDemandWritten(db.url, shop, (rows) => rows === VARIANTS.length);
    assert.equal((await publish(shop, 'two')).version, 2);
    await until(`${shop}: version 2 warmed by the fleet`, () => warmed(shop) === 2 * fleet.length);
    await fetchAll();
    await until(`${shop}: the renders of version 2 logged`, () => renders(shop, 2) >= VARIANTS.length);
    return [first, renders(shop, 2)];
  }

  test('routed by key: each variant rendered once in the fleet, before and after a publication', async () => {
    const [first, second] = await rendersPerPublication(routed, `routed-${randomBytes(4).toString('hex')}`);
    assert.equal(first, VARIANTS.length, 'the first publication: one render per variant');
    assert.equal(second, VARIANTS.length, 'the next publication: one render per variant, by the instance that serves the key');
  });

  test('round robin: the same fetches render the variants on several instances', async () => {
    const [first, second] = await rendersPerPublication(roundRobin, `rr-${randomBytes(4).toString('hex')}`);
    assert.ok(first > VARIANTS.length, `the first publication: ${first} renders for ${VARIANTS.length} variants`);
    assert.ok(second > VARIANTS.length, `the next publication: ${second} renders for ${VARIANTS.length} variants`);
  });
});
