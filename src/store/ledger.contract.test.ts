/**
 * The delivery ledger's storage (CONTRACT §12), on every dialect: records go in as runs
 * (sql/ledger-runs.ts) and come out one by one — every record once, newest first, page after
 * page — and the consumers' figures are what the records say, whether a run holds one record
 * or a thousand and whatever lines (a cursor, the 24-hour line, the retention line) cut it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, executeRaw, type TestDatabase } from '../../test/support/dialects.js';
import { RUN_ID_SPACE } from './delivery-types.js';
import { DeliveryRuns, type DeliveryRecord, type StoredDelivery } from './types.js';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const DAY = 86_400_000;

const record = (storeId: string, atMs: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  store_id: storeId, key_id: 'key_a', at: new Date(atMs), address: 'prices', format: 'csv', profile_id: null, only_available: false,
  version: 1, status: 304, bytes_sent: 180, finished: true, duration_ms: 1, client_class: 'curl', client_address: '203.0.113.5', ...extra,
});

/** A seeded generator (mulberry32): the same "random" traffic on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What identifies a record apart from its id (the test's records all differ in it). */
const signature = (r: DeliveryRecord) => `${r.at.toISOString()} ${r.status} ${r.bytes_sent} ${r.duration_ms} ${r.client_class} ${r.client_address} ${r.finished} ${r.version}`;
const runsIn = (records: readonly StoredDelivery[]) => new Set(records.map((r) => Math.floor(r.id / RUN_ID_SPACE))).size;

for (const dialect of DIALECTS) {
  describe(`the delivery ledger in storage (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
    });
    after(async () => db.drop());

    it('stores a poller\'s answers as a few runs and pages through every record once, newest first', async () => {
      const next = random(7);
      const batches: DeliveryRecord[][] = [];
      const all: DeliveryRecord[] = [];
      let bytes = 0;
      for (let batch = 0; batch < 6; batch++) {
        const records: DeliveryRecord[] = [];
        for (let i = 0; i < 700; i++) {
          // Mostly one poller's 304s; now and then another consumer, a 200, a cut download; times
          // jitter (a record is queued when its answer ends, not when it began).
          const roll = next();
          const at = T0 + batch * 1_000 + Math.floor(next() * 1_000) + (roll < 0.01 ? -40_000 : 0);
          const extra: Partial<DeliveryRecord> = roll < 0.05 ? { client_class: 'yandex', client_address: '198.51.100.9' }
            : roll < 0.08 ? { status: 200, bytes_sent: 5_000 }
            : roll < 0.1 ? { status: 200, finished: false }
            : {};
          records.push(record('runs', at, { ...extra, bytes_sent: (extra.bytes_sent ?? 180) + bytes++ }));
        }
        batches.push(records);
        all.push(...records);
      }
      for (const records of batches) await db.db.deliveries.ledger.insert(DeliveryRuns.of(records));

      const everything = await db.db.deliveries.ledger.page('runs', 1000, null);
      assert.equal(everything.length, 1000);
      const runs = runsIn(everything);
      assert.ok(runs < 300, `1,000 records came from ${runs} runs`);

      // Pages of 7, and of 1,000 (more records than the runs read per statement): every record once, in order.
      for (const limit of [7, 1000]) {
        const seen: StoredDelivery[] = [];
        let cursor: { at: Date; id: number } | null = null;
        for (;;) {
          const page = await db.db.deliveries.ledger.page('runs', limit, cursor);
          seen.push(...page);
          if (page.length < limit) break;
          cursor = { at: page[limit - 1].at, id: page[limit - 1].id };
        }
        assert.equal(seen.length, all.length, `pages of ${limit}`);
        assert.equal(new Set(seen.map((r) => r.id)).size, all.length, 'no record twice');
        for (let i = 1; i < seen.length; i++) {
          const [a, b] = [seen[i - 1], seen[i]];
          assert.ok(a.at > b.at || (a.at.getTime() === b.at.getTime() && a.id > b.id), `newest first at ${i}`);
        }
        assert.deepEqual(seen.map(signature).sort(), all.map(signature).sort(), 'every record as it was recorded');
      }

      // A bare time: the records strictly before it.
      const line = new Date(T0 + 1_200);
      const older = await db.db.deliveries.ledger.page('runs', 1000, { at: line, id: 0 });
      const expected = all.filter((r) => r.at < line);
      assert.ok(expected.length < 1000);
      assert.deepEqual(older.map(signature).sort(), expected.map(signature).sort());
    });

    it('keeps a consumer\'s run going while other stores\' answers come in between (a fleet\'s batch interleaves them)', async () => {
      const t = T0 + 25 * DAY;
      // One poller at one address revalidating three stores in turn, as a fleet's fetcher does.
      const fleet = ['fleet-a', 'fleet-b', 'fleet-c'];
      const records = Array.from({ length: 300 }, (_, i) => record(fleet[i % 3], t + i));
      await db.db.deliveries.ledger.insert(DeliveryRuns.of(records));
      for (const storeId of fleet) {
        const page = await db.db.deliveries.ledger.page(storeId, 1000, null);
        assert.equal(page.length, 100);
        assert.equal(runsIn(page), 1, `${storeId}'s 100 answers are one run`);
        assert.deepEqual(page.map((r) => r.at.getTime()), records.filter((r) => r.store_id === storeId).map((r) => r.at.getTime()).reverse());
      }
    });

    it('finds a page\'s records in runs read later, when the runs read first hold more than a page', async () => {
      // A long run (1,000 records over 59 s), 199 one-record runs that end after it, and one
      // more, ending before all of them but newer than most of the long run's records.
      const t = T0 + 20 * DAY;
      const long = Array.from({ length: 1000 }, (_, i) => record('wide', t + ((i + 500) % 1000) * 59));
      const singles = Array.from({ length: 199 }, (_, i) => record('wide', t + 59_100 + i, { client_address: `192.0.2.${i}` }));
      const late = record('wide', t + 30_001, { client_class: 'google' });
      await db.db.deliveries.ledger.insert(DeliveryRuns.of([...long, ...singles, late]));
      const page = await db.db.deliveries.ledger.page('wide', 1000, null);
      assert.ok(page.some((r) => r.client_class === 'google'), 'the record at +30 s is among the newest 1,000');
      assert.equal(page.at(-1)?.at.getTime(), t + 200 * 59, 'and the page ends where 1,000 records end');
    });

    it('counts consumers\' fetches across the 24-hour line record by record, and their last three in order', async () => {
      const now = T0 + 10 * DAY;
      const dayAgo = now - DAY;
      // One run across the 24-hour line: 3 records before it, 4 after (all within a second).
      await db.db.deliveries.ledger.insert(DeliveryRuns.of([-3, -2, -1, 0, 1, 2, 3].map((ms) => record('consumers', dayAgo + ms))));
      // Later: five whole answers, then two cut ones: its last three are not all failures.
      const later = dayAgo + 60_000;
      await db.db.deliveries.ledger.insert(DeliveryRuns.of([
        ...[0, 1, 2, 3, 4].map((i) => record('consumers', later + i)),
        ...[5, 6].map((i) => record('consumers', later + i, { status: 200, finished: false })),
        // Another consumer's cut downloads in between change nothing for this one.
        ...[0, 1, 2].map((i) => record('consumers', later + i, { client_class: 'google', client_address: '192.0.2.1', status: 200, finished: false })),
      ]));
      const consumers = async () => db.db.deliveries.ledger.consumers('consumers', new Date(now - 30 * DAY), new Date(dayAgo), 100);
      let [curl, google] = await consumers();
      assert.equal(curl.client_class, 'curl');
      assert.equal(curl.fetches_24h, 4 + 7);
      assert.equal(curl.failing, false, 'a whole answer among its last three');
      assert.equal(curl.last_status, 200);
      assert.equal(curl.last_version, 1);
      assert.equal(curl.last_fetch_at.getTime(), later + 6);
      assert.equal(google.failing, true, 'three cut downloads');
      assert.equal(google.last_version, null);

      await db.db.deliveries.ledger.insert(DeliveryRuns.of([record('consumers', later + 7, { status: 200, finished: false })]));
      [curl] = await consumers();
      assert.equal(curl.failing, true, 'now its last three were cut');
      assert.equal(curl.fetches_24h, 4 + 8);
    });

    it('continues a consumer\'s stored run from later batches: a 15-minute poller makes a row an hour', async () => {
      const t = T0 + 30 * DAY;
      const minutes = [0, 15, 30, 45, 60, 75, 90, 105];
      const idsSeen = new Map<number, number>();
      for (const minute of minutes) {
        await db.db.deliveries.ledger.insert(DeliveryRuns.of([record('poller', t + minute * 60_000, { bytes_sent: 180 + minute })]));
        for (const r of await db.db.deliveries.ledger.page('poller', 100, null)) {
          const first = idsSeen.get(r.at.getTime()) ?? r.id;
          assert.equal(r.id, first, 'a record keeps its id as its run grows');
          idsSeen.set(r.at.getTime(), r.id);
        }
      }
      const page = await db.db.deliveries.ledger.page('poller', 100, null);
      assert.deepEqual(page.map((r) => [(r.at.getTime() - t) / 60_000, r.bytes_sent]).reverse(), minutes.map((m) => [m, 180 + m]));
      // Records start within RUN_SPAN_MS (an hour) of their run's first: 0–60, then 75–105.
      assert.equal(runsIn(page), 2);
      assert.equal(runsIn(page.filter((r) => r.at.getTime() <= t + 3_600_000)), 1);
      // A page after a cursor inside a continued run.
      const older = await db.db.deliveries.ledger.page('poller', 100, { at: new Date(t + 45 * 60_000), id: 0 });
      assert.deepEqual(older.map((r) => (r.at.getTime() - t) / 60_000), [30, 15, 0]);
      const [poller] = await db.db.deliveries.ledger.consumers('poller', new Date(t - DAY), new Date(t + 106 * 60_000 - DAY), 10);
      assert.equal(poller.fetches_24h, 8);
      assert.equal(poller.last_fetch_at.getTime(), t + 105 * 60_000);
    });

    it('starts a run of its own for another shape, an older record, a frequent consumer or a full run, and never goes back to an older run', async () => {
      const t = T0 + 31 * DAY;
      const minute = 60_000;
      const ledger = db.db.deliveries.ledger;
      await ledger.insert(DeliveryRuns.of([record('shapes', t)]));
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 2 * minute, { format: 'json' })]));
      // The csv run is no longer the consumer's newest: continuing it would interleave its runs.
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 4 * minute)]));
      // Older than its newest run's last record (a download that began before): a run of its own.
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 3 * minute)]));
      let page = await ledger.page('shapes', 100, null);
      assert.equal(page.length, 4);
      assert.equal(runsIn(page), 4);
      // Later records of the newest run's shape, a minute or more after its last, join it.
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 5 * minute), record('shapes', t + 5 * minute + 1)]));
      page = await ledger.page('shapes', 100, null);
      assert.equal(runsIn(page), 4);
      assert.deepEqual(page.map((r) => (r.at.getTime() - t) / minute), [5 + 1 / minute, 5, 4, 3, 2, 0]);
      assert.equal(Math.floor(page[0].id / RUN_ID_SPACE), Math.floor(page[2].id / RUN_ID_SPACE), 'the t+4 run took them');
      // Under a minute after its last answer (a frequent consumer): a run of its own.
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 5 * minute + 59_000)]));
      assert.equal(runsIn(await ledger.page('shapes', 100, null)), 5);
      // Another instance's answer, 30 s before this writer's next (which knows only its own
      // answers, minutes older): the database tells the consumer is frequent, a run of its own.
      const raw = (ms: number) => (db.dialect === 'sqlite' ? ms : new Date(ms));
      await executeRaw(db, `INSERT INTO delivery_ledger (store_id, key_id, at, address, format, only_available, version, status, bytes_sent,
          finished, duration_ms, client_class, client_address, last_at, repeats) VALUES ('shapes', 'key_a', $1, 'prices', 'csv', $2, 1, 304, 180, $3, 1, 'curl', '203.0.113.5', $4, 0)`,
      [raw(t + 8 * minute), db.dialect === 'sqlite' ? 0 : false, db.dialect === 'sqlite' ? 1 : true, raw(t + 8 * minute)]);
      await ledger.insert(DeliveryRuns.of([record('shapes', t + 8 * minute + 30_000)]));
      page = await ledger.page('shapes', 100, null);
      assert.equal(page.length, 9);
      assert.equal(runsIn(page), 7);

      // A run of RUN_ID_SPACE records is full.
      const full = Array.from({ length: RUN_ID_SPACE }, (_, i) => record('full', t + i));
      await ledger.insert(DeliveryRuns.of(full));
      await ledger.insert(DeliveryRuns.of([record('full', t + 2 * minute)]));
      const all = await ledger.page('full', 2 * RUN_ID_SPACE, null);
      assert.equal(all.length, RUN_ID_SPACE + 1);
      assert.equal(runsIn(all), 2);
      assert.equal(new Set(all.map((r) => r.id)).size, all.length);
    });

    it('continues hundreds of consumers\' runs in one batch, each with its own records', async () => {
      const t = T0 + 32 * DAY;
      const consumers = Array.from({ length: 600 }, (_, i) => `198.51.${Math.floor(i / 250)}.${i % 250}`);
      const stores = ['many-a', 'many-b'];
      const batch = (offset: number) => DeliveryRuns.of(consumers.flatMap((address, i) =>
        [record(stores[i % 2], t + offset + i, { client_address: address, bytes_sent: offset + i })]));
      await db.db.deliveries.ledger.insert(batch(0));
      await db.db.deliveries.ledger.insert(batch(600_000));
      for (const storeId of stores) {
        const page = await db.db.deliveries.ledger.page(storeId, 1000, null);
        assert.equal(page.length, 600);
        assert.equal(runsIn(page), 300, `${storeId}: one run a consumer`);
        for (const address of consumers.filter((_, i) => stores[i % 2] === storeId)) {
          const mine = page.filter((r) => r.client_address === address).map((r) => r.bytes_sent - (r.at.getTime() - t));
          assert.deepEqual(mine, [0, 0], `${address}: its own two records`);
        }
      }
    });

    it('keeps what a record holds, whatever its texts hold, in a new run and in a continued one', async () => {
      // PostgreSQL binds a batch's rows as arrays (postgres/dialect.ts rowsQuery): an element's
      // quotes, backslashes, braces, commas, the word NULL and an empty text must come back as sent.
      const t = T0 + 33 * DAY;
      const odd: Partial<DeliveryRecord>[] = [
        { key_id: 'key "a" \\ {b}', address: '/p/{x},y"z\\w', client_class: 'NULL', client_address: '' },
        { format: null, profile_id: 2 ** 40 + 3, only_available: null, version: null, client_class: 'Опрос, "1С"', client_address: '{}' },
        { only_available: true, status: 206, finished: false, client_class: '\\', client_address: 'a,b' },
      ];
      const records = (offset: number) => odd.map((extra, i) => record('odd', t + offset + i, { ...extra, bytes_sent: offset + i }));
      await db.db.deliveries.ledger.insert(DeliveryRuns.of(records(0)));
      await db.db.deliveries.ledger.insert(DeliveryRuns.of(records(900_000)));
      const page = await db.db.deliveries.ledger.page('odd', 10, null);
      const written = [...records(0), ...records(900_000)];
      const fields = (r: DeliveryRecord) => ({ ...r, at: r.at.toISOString() });
      assert.deepEqual(page.map(({ id: _, ...r }) => fields(r)).sort((a, b) => a.bytes_sent - b.bytes_sent), written.map(fields));
      assert.equal(runsIn(page), 3, 'each consumer\'s second record continued its run');
    });

    it('writes a busy batch as sent, whatever its texts, numbers and times, each store\'s answers of one millisecond in the order they came', async () => {
      // Every consumer of busy-b answered under a minute before: none is tried, and its runs go in
      // plainly (PostgreSQL: one binary COPY, sql/ledger-writes.ts); busy-a has a new consumer too,
      // tried, so its runs go by the guarded INSERT. (Times before PostgreSQL's epoch:
      // postgres/binary-copy-rows.test.ts; retention below wants nothing older than its records.)
      const t = T0 + 34 * DAY;
      const ledger = db.db.deliveries.ledger;
      const stores = ['busy-b', 'busy-a'];
      const odd: Partial<DeliveryRecord>[] = [
        { key_id: 'key "a" \\ {b}\t', address: '/p/{x},y"z\\w\nv', client_class: 'NULL', client_address: '' },
        { format: null, profile_id: 2 ** 40 + 3, only_available: null, version: null, client_class: 'Опрос, "1С"', client_address: '{}' },
        { only_available: true, status: 206, finished: false, client_class: '\\', client_address: 'a,b' },
      ];
      await ledger.insert(DeliveryRuns.of(stores.flatMap((storeId) => odd.map((extra) => record(storeId, t, extra)))));
      // All at one millisecond, each a run of its own (its profile): only the rows' ids order them.
      const busy = Array.from({ length: 12 }, (_, i) => record(stores[i % 2], t + 1_000, { ...odd[i % 3], profile_id: (odd[i % 3].profile_id ?? 0) + i, bytes_sent: 2 ** 33 + i, duration_ms: i }));
      busy.splice(5, 0, record('busy-a', t + 1_000, { client_class: 'new', bytes_sent: 5 }));
      await ledger.insert(DeliveryRuns.of(busy));
      const fields = (r: DeliveryRecord) => ({ ...r, at: r.at.toISOString() });
      for (const storeId of stores) {
        const page = (await ledger.page(storeId, 100, null)).map(({ id: _, ...r }) => r);
        const written = page.filter((r) => r.at.getTime() !== t);
        assert.deepEqual(written.reverse().map(fields), busy.filter((r) => r.store_id === storeId).map(fields), `${storeId}: newest first is the reverse of the order they came`);
      }
    });

    it('writes a busy batch larger than a slice whole, each store\'s answers of one millisecond in the order they came', async () => {
      // 2,500 consumers over three stores, each answered 30 s before: none is tried, and the batch
      // is built (and on PostgreSQL copied) 1,000 runs a slice, stores cut across slices.
      const t = T0 + 35 * DAY;
      const ledger = db.db.deliveries.ledger;
      const stores = ['slice-a', 'slice-b', 'slice-c'];
      const answers = (at: number) => Array.from({ length: 2_500 }, (_, i) =>
        record(stores[i % 3], at, { client_address: `10.0.${i >> 8}.${i & 255}`, bytes_sent: i, duration_ms: i % 7 }));
      await ledger.insert(DeliveryRuns.of(answers(t - 30_000)));
      const busy = answers(t);
      await ledger.insert(DeliveryRuns.of(busy));
      for (const storeId of stores) {
        const page = (await ledger.page(storeId, 2_000, null)).filter((r) => r.at.getTime() === t);
        assert.deepEqual(page.reverse().map((r) => r.bytes_sent), busy.filter((r) => r.store_id === storeId).map((r) => r.bytes_sent), `${storeId}: every answer, in the order it came`);
      }
    });

    it('reads runs written before `repeated` held offsets (times since the epoch) as it reads new ones', async () => {
      const now = T0 + 20 * DAY;
      const dayAgo = now - DAY;
      const times = [-20, -10, 10, 20, 30].map((ms) => dayAgo + ms);
      await db.db.deliveries.ledger.insert(DeliveryRuns.of(times.map((ms) => record('old-runs', ms))));
      const read = async () => ({
        times: (await db.db.deliveries.ledger.page('old-runs', 100, null)).map((r) => r.at.getTime()).reverse(),
        fetches24h: (await db.db.deliveries.ledger.consumers('old-runs', new Date(now - 30 * DAY), new Date(dayAgo), 100))[0].fetches_24h,
      });
      const asWritten = await read();
      assert.deepEqual(asWritten, { times, fetches24h: 3 });
      // As the ledger wrote it before 2026-11-26: [at ms since the epoch, bytes, duration] triples.
      const older = JSON.stringify(times.slice(1).flatMap((ms) => [ms, 180, 1]));
      await executeRaw(db, "UPDATE delivery_ledger SET repeated = $1 WHERE store_id = 'old-runs'", [older]);
      assert.deepEqual(await read(), asWritten);
    });

    it('retention deletes a run once its newest record is past the line', async () => {
      // Older than every other test's records: retention is not per store.
      const t = T0 - 100 * DAY;
      await db.db.deliveries.ledger.insert(DeliveryRuns.of([0, 10, 20].map((ms) => record('retention', t + ms))));
      // Another shape: a run of its own (the same shape would continue the run above).
      await db.db.deliveries.ledger.insert(DeliveryRuns.of([record('retention', t + 5_000, { status: 200 })]));
      assert.equal(await db.db.deliveries.ledger.deleteOlderThan(new Date(t + 15), 100), 0, 'the run still holds a newer record');
      assert.equal(await db.db.deliveries.ledger.deleteOlderThan(new Date(t + 21), 100), 1);
      const left = await db.db.deliveries.ledger.page('retention', 100, null);
      assert.deepEqual(left.map((r) => r.at.getTime()), [t + 5_000]);
    });
  });
}
