import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { KeyScopes } from '../../model/key-scopes.js';
import { queriesOf as countQueries } from '../../../test/support/count-queries.js';
import { publishOneItem } from '../../../test/support/publish-one-item.js';
import { changeSignal, everyCommit, type ChangeSignal } from './change-signal.js';
import { KeyLookupCache } from './key-lookup-cache.js';
import { sqlDatabase } from '../sql/sql-database.js';
import { DeliveryRuns, type Database as Db, type KeyLookup } from '../types.js';
import { SqliteDialect } from './dialect.js';


/** Two connections on one file: the server's, and another process's (the CLI). */
describe('remembered key look-ups never outlive a change', () => {
  const dir = mkdtempSync(join(tmpdir(), 'key-cache-'));
  const serverDialect = new SqliteDialect(join(dir, 'db.sqlite'));
  const server = sqlDatabase(serverDialect);
  const cli = sqlDatabase(new SqliteDialect(join(dir, 'db.sqlite')));
  before(async () => {
    await server.migrate();
    await server.stores.create({ id: 's', name: 'S', currency: 'RUB', url: null, company: null });
    await server.keys.insert({ id: 'k1', store_id: 's', label: null, prefix: 'p', hash: 'h1' });
  });
  /** What `run` answers, and how many statements the server's connection ran for it. */
  const queriesOf = <T>(run: () => Promise<T>) => countQueries(serverDialect, run);
  after(async () => {
    await server.close();
    await cli.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a repeat look-up from memory while nothing changed', async () => {
    const first = await server.keys.findByHash('h1');
    assert.equal(await server.keys.findByHash('h1'), first);
  });

  it('asks the database once for the look-ups of one turn after a change, not once each', async () => {
    await cli.keys.insert({ id: 'k-other', store_id: 's', label: null, prefix: 'p', hash: 'h-other' });
    const { value: found, asked } = await queriesOf(() => Promise.all(Array.from({ length: 10 }, () => server.keys.findByHash('h1'))));
    assert.ok(found.every((lookup) => lookup?.key.id === 'k1'));
    assert.equal(asked, 1);
  });

  it('keeps what it remembers across commits that change no look-up: ledger batches and keys\' last use, by any connection', async () => {
    const remembered = await server.keys.findByHash('h1');
    const record = { store_id: 's', key_id: 'k1', at: new Date(), address: 'prices', format: 'csv', profile_id: null, only_available: false,
      version: null, status: 200, bytes_sent: 10, finished: true, duration_ms: 1, client_class: 'curl', client_address: '192.0.2.1' };
    await cli.deliveries.ledger.insert(DeliveryRuns.of([record]));
    await server.deliveries.ledger.insert(DeliveryRuns.of([record]));
    await cli.keys.touch('k1', new Date(Date.now() - 5_000));
    const { value: found, asked } = await queriesOf(() => server.keys.findByHash('h1'));
    assert.equal(found, remembered);
    assert.equal(asked, 0, 'no look-up asked the database again');
  });

  it('sees a change of scopes, expiry or store made by another connection on the next look-up', async () => {
    await server.keys.insert({ id: 'k-scoped', store_id: 's', label: null, prefix: 'p', hash: 'h-scoped' });
    assert.equal((await server.keys.findByHash('h-scoped'))?.key.scopes, null);
    await cli.keys.updateAccess('k-scoped', { scopes: { addresses: null, formats: ['csv'], profiles: null } as KeyScopes });
    assert.deepEqual((await server.keys.findByHash('h-scoped'))?.key.scopes?.formats, ['csv']);
    const expires = new Date('2031-01-01T00:00:00Z');
    await cli.keys.updateAccess('k-scoped', { expires_at: expires });
    assert.equal((await server.keys.findByHash('h-scoped'))?.key.expires_at?.getTime(), expires.getTime());
    await cli.stores.create({ id: 's2', name: 'S2', currency: 'RUB', url: null, company: null });
    await cli.keys.insert({ id: 'k-s2', store_id: 's2', label: null, prefix: 'p', hash: 'h-s2' });
    assert.equal((await server.keys.findByHash('h-s2'))?.latest, null);
    const published = await publishOneItem(cli, 's2');
    assert.equal((await server.keys.findByHash('h-s2'))?.latest?.version, published.version);
    await publishOneItem(cli, 's2');
    // A rollback only inserts a list and points the store at it: the store's own trigger must say so.
    const rolledBack = await cli.versions.rollback('s2', published.version, 10);
    assert.ok(rolledBack);
    assert.equal((await server.keys.findByHash('h-s2'))?.latest?.id, rolledBack.id);
    // Any other writer that points a store elsewhere, with no list changed.
    const raw = new Database(join(dir, 'db.sqlite'));
    try {
      raw.prepare("UPDATE stores SET latest_price_list_id = NULL WHERE id = 's2'").run();
    } finally {
      raw.close();
    }
    assert.equal((await server.keys.findByHash('h-s2'))?.latest, null);
  });

  it("drops only the republished store's look-ups when another connection publishes, and all of them when it cannot tell", async () => {
    await server.stores.create({ id: 't', name: 'T', currency: 'RUB', url: null, company: null });
    await server.keys.insert({ id: 'k-t', store_id: 't', label: null, prefix: 'p', hash: 'h-t' });
    const remembered = await server.keys.findByHash('h1');
    await server.keys.findByHash('h-t');
    const published = await publishOneItem(cli, 't');
    const other = await queriesOf(() => server.keys.findByHash('h1'));
    assert.equal(other.value, remembered);
    assert.equal(other.asked, 0, "another store's look-up is not asked again");
    assert.equal((await server.keys.findByHash('h-t'))?.latest?.version, published.version);
    // More store changes since the last check than are read, or rows pruned since it: everything is asked again.
    const raw = new Database(join(dir, 'db.sqlite'));
    try {
      raw.transaction(() => {
        for (let i = 0; i < 1001; i++) raw.prepare("INSERT INTO key_lookup_changes (store_id) VALUES ('nobody')").run();
      })();
      assert.equal((await queriesOf(() => server.keys.findByHash('h1'))).asked, 1, 'over 1,000 changes: all dropped');
      raw.prepare("INSERT INTO key_lookup_changes (store_id) VALUES ('nobody'), ('nobody')").run();
      raw.prepare('DELETE FROM key_lookup_changes WHERE seq = (SELECT max(seq) - 1 FROM key_lookup_changes)').run();
      assert.equal((await queriesOf(() => server.keys.findByHash('h1'))).asked, 1, 'a gap since the last check: all dropped');
      raw.prepare("INSERT INTO key_lookup_changes (store_id) VALUES ('nobody')").run();
      assert.equal((await queriesOf(() => server.keys.findByHash('h1'))).asked, 0, "one change of another store: kept");
    } finally {
      raw.close();
    }
  });

  it('sees a revocation made by another connection on the next look-up', async () => {
    await server.keys.findByHash('h1');
    await cli.keys.revoke('k1', new Date());
    assert.ok((await server.keys.findByHash('h1'))?.key.revoked_at);
  });

  it('sees a publication made by another connection, and by its own', async () => {
    assert.equal((await server.keys.findByHash('h1'))?.latest, null);
    const one = await publishOneItem(cli, 's');
    assert.equal((await server.keys.findByHash('h1'))?.latest?.version, one.version);
    const two = await publishOneItem(server, 's');
    assert.equal((await server.keys.findByHash('h1'))?.latest?.version, two.version);
  });

  it('sees every revocation by another connection, across WAL checkpoints and restarts', async () => {
    const raw = new Database(join(dir, 'db.sqlite'));
    try {
      for (let i = 0; i < 60; i++) {
        await server.keys.insert({ id: `loop-${i}`, store_id: 's', label: null, prefix: 'p', hash: `loop-${i}` });
        assert.equal((await server.keys.findByHash(`loop-${i}`))?.key.revoked_at, null);
        if (i % 7 === 3) raw.pragma('wal_checkpoint(TRUNCATE)');
        if (i % 7 === 5) raw.pragma('wal_checkpoint(RESTART)');
        await cli.keys.revoke(`loop-${i}`, new Date());
        assert.ok((await server.keys.findByHash(`loop-${i}`))?.key.revoked_at, `revocation ${i} seen`);
      }
    } finally {
      raw.close();
    }
  });

  it('sees its own revocation, and keeps touches without a round trip', async () => {
    await server.keys.insert({ id: 'k2', store_id: 's', label: null, prefix: 'p', hash: 'h2' });
    const at = new Date(Date.now() + 1000);
    await server.keys.findByHash('h2');
    await server.keys.touch('k2', at);
    assert.equal((await server.keys.findByHash('h2'))?.key.last_used_at?.getTime(), at.getTime());
    await server.keys.revoke('k2', new Date());
    assert.ok((await server.keys.findByHash('h2'))?.key.revoked_at);
  });
});

describe('the change signal', () => {
  it('reads the WAL-index header of a file database, and falls back to data_version in memory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'change-signal-'));
    const path = join(dir, 'db.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x)');
    const other = new Database(path);
    const memory = new Database(':memory:');
    try {
      for (const [name, signal, writer] of [
        ['file', changeSignal(db, path), other],
        ['memory', changeSignal(memory, ':memory:'), null],
      ] as const) {
        assert.equal(signal.changed(), true, `${name}: the first ask`);
        assert.equal(signal.changed(), false, `${name}: nothing committed`);
        if (writer) {
          writer.exec('INSERT INTO t VALUES (1)');
          assert.equal(signal.changed(), true, `${name}: another connection committed`);
          assert.equal(signal.changed(), false, `${name}: and nothing since`);
        }
        signal.close();
      }
    } finally {
      other.close();
      db.close();
      memory.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A signal a test commits to by hand, counting how often it is read. */
class ManualSignal implements ChangeSignal {
  reads = 0;
  committed = false;
  changed(): boolean {
    this.reads++;
    const was = this.committed;
    this.committed = false;
    return was;
  }
  close(): void {}
}

describe('one check of the change signal per event-loop turn', () => {
  const lookup = { key: { id: 'k' }, store: { id: 's' } } as unknown as KeyLookup;

  it('serves every look-up of a turn from one read, made after they all asked', async () => {
    const signal = new ManualSignal();
    const cache = new KeyLookupCache(everyCommit(signal));
    cache.set('h', lookup);
    const asked = Array.from({ length: 20 }, () => cache.checked().then(() => cache.get('h')));
    // A commit after the look-ups asked but before the turn's check: all of them must see it.
    signal.committed = true;
    assert.deepEqual(await Promise.all(asked), Array(20).fill(undefined));
    assert.equal(signal.reads, 1);
  });

  it('makes a look-up that asks after the check wait for a new one, which sees a commit made since', async () => {
    const signal = new ManualSignal();
    const cache = new KeyLookupCache(everyCommit(signal));
    cache.set('h', lookup);
    await cache.checked();
    assert.equal(cache.get('h'), lookup);
    assert.equal(signal.reads, 1);
    signal.committed = true;
    await cache.checked();
    assert.equal(cache.get('h'), undefined, 'the commit made after the first check is seen');
    assert.equal(signal.reads, 2);
  });

  it('trusts nothing remembered when the signal cannot be read', async () => {
    const cache = new KeyLookupCache(everyCommit({ changed: () => { throw new Error("EIO"); }, close: () => undefined }));
    cache.set('h', lookup);
    await cache.checked();
    assert.equal(cache.get('h'), undefined);
  });
});
