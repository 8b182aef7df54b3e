/*
 * Issue #18, goal 6: renders per publication in a fleet of three instances on one PostgreSQL
 * database behind nginx, routed by key (`hash $price_export_route consistent`, WARM_SCOPE=instance;
 * docs/running-several-instances.md) versus round robin. Each round: a new store and key, a first
 * publication, four variants fetched three times each by the key, the fetchers' demand written,
 * a second publication warmed by the fleet, the same fetches again; the figure is the fleet's
 * renders ("export rendered" log lines) of the second publication. A count, not a timing.
 * Round robin, every instance has served every variant, so WARM_SCOPE=fleet (the default) would
 * warm the same renders.
 *
 *   PRICE_EXPORT_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/figures/fleet-routing.ts [--rounds 5]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { alternatingRounds, emitResult } from '../lib/bench-result.js';
import { createEmptyDatabase, freePort, startServer, type ServerProcess } from '../../test/multi-instance/processes.js';
import { startNginxFront, type NginxFront } from '../../test/support/nginx-front.js';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 5;
const PG = process.env.PRICE_EXPORT_TEST_PG_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = `fleet-${randomBytes(12).toString('hex')}`;
const VARIANTS = [
  (key: string) => `/api/export/latest?key=${key}&format=csv`,
  (key: string) => `/api/export/latest?key=${key}&format=json`,
  (key: string) => `/api/export/latest?key=${key}&format=xlsx&only_available=true`,
  (key: string) => `/WebApi/CampaignDataLatestGet/${key}?format=yml`,
];
const INSTANCES = 3;

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const dir = mkdtempSync(join(tmpdir(), 'pe-bench-fleet-'));
const db = await createEmptyDatabase(PG);
const fleet: ServerProcess[] = [];
const fronts: NginxFront[] = [];
try {
  const ports = await Promise.all(Array.from({ length: INSTANCES + 1 }, () => freePort()));
  const adminPort = ports[INSTANCES];
  const env = { DATABASE_URL: db.url, LOG_LEVEL: 'info', NODE_ENV: 'production', RATE_LIMIT_PER_MIN: '1000000', AUTH_FAIL_LIMIT_PER_MIN: '1000000', WARM_SCOPE: 'instance' };
  fleet.push(await startServer(ports[0], { ...env, ADMIN_TOKEN, ADMIN_PORT: String(adminPort) }, [adminPort]));
  fleet.push(...await Promise.all(ports.slice(1, INSTANCES).map((port) => startServer(port, env))));
  const upstreams = ports.slice(0, INSTANCES).map((port) => `127.0.0.1:${port}`);
  const routed = await startNginxFront(join(dir, 'routed'), { upstreams, routeByKey: true });
  const roundRobin = await startNginxFront(join(dir, 'round-robin'), { upstreams });
  fronts.push(routed, roundRobin);

  const admin = async (method: string, path: string, body: string, contentType = 'application/json') => {
    const response = await fetch(`http://127.0.0.1:${adminPort}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType }, body });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const publish = (shop: string, tag: string) =>
    admin('POST', `/admin/stores/${shop}/price-lists?force=true`,
      Array.from({ length: 2000 }, (_, i) => JSON.stringify({ offer_id: `${tag}-${i}`, name: `Item ${i}`, price: (10 + i / 100).toFixed(2), quantity: i % 3 })).join('\n') + '\n',
      'application/x-ndjson');
  const lines = () => fleet.flatMap((server) => server.output().split('\n'));
  const renders = (shop: string, version: number) => lines().filter((l) => l.includes('"msg":"export rendered"') && l.includes(`"store":"${shop}"`) && l.includes(`"version":${version},`)).length;
  const warmed = (shop: string) => lines().filter((l) => l.includes('hot variants warmed') && l.includes(`"storeId":"${shop}"`)).length;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();

  const rendersOfNextPublication = async (front: NginxFront, label: string): Promise<number> => {
    const shop = `${label}-${randomBytes(4).toString('hex')}`;
    await admin('POST', '/admin/stores', JSON.stringify({ id: shop, name: shop }));
    const key = (await admin('POST', `/admin/stores/${shop}/keys`, JSON.stringify({ label: 'fetcher' }))).value as string;
    await publish(shop, 'one');
    await until('the first publication noticed', () => warmed(shop) === INSTANCES);
    const fetchAll = async () => {
      for (const variant of VARIANTS) for (let i = 0; i < 3; i++) await (await fetch(`${front.base}${variant(key)}`)).arrayBuffer();
    };
    await fetchAll();
    await until('demand written', async () => (await client.query('SELECT count(*)::int AS n FROM variant_demand WHERE store_id = $1', [shop])).rows[0].n === VARIANTS.length);
    await publish(shop, 'two');
    await until('the second publication warmed', () => warmed(shop) === 2 * INSTANCES);
    await fetchAll();
    // A log line waits up to 50 ms for others (src/http/log-destination.ts).
    await until('the renders logged', () => renders(shop, 2) >= VARIANTS.length);
    const count = renders(shop, 2);
    console.error(`${label}: ${count} renders of ${VARIANTS.length} variants (first publication: ${renders(shop, 1)})`);
    return count;
  };

  const load = loadavg()[0];
  const measured = await alternatingRounds(rounds, () => rendersOfNextPublication(routed, 'routed'), () => rendersOfNextPublication(roundRobin, 'round-robin'));
  await client.end();
  emitResult({
    figure: `renders per publication of ${VARIANTS.length} variants fetched by one key, ${INSTANCES} instances behind nginx, routed by key (WARM_SCOPE=instance)`,
    unit: 'renders',
    higherIsBetter: false,
    ours: measured.ours,
    reference: measured.reference,
    referenceName: 'round robin over the same instances',
    goal: `= ${VARIANTS.length} (one per variant)`,
    met: measured.ours.every((renders) => renders === VARIANTS.length),
    notes: `a count, not a timing; PostgreSQL, tsx; load average ${load.toFixed(2)}`,
  });
} finally {
  await Promise.all(fronts.map((front) => front.stop()));
  await Promise.all(fleet.map((server) => server.stop()));
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
}
