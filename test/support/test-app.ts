import { Readable, Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config/config.js';
import { issueKey } from '../../src/domain/keys.js';
import type { SourceFormat } from '../../src/domain/publication-source.js';
import { publishPriceList, readPublication, type PublishOptions } from '../../src/domain/publishing.js';
import { createStore } from '../../src/domain/stores.js';
import { buildPublicApp } from '../../src/composition.js';
import type { AppDependencies } from '../../src/http/app.js';
import type { PriceListRecord, Database } from '../../src/store/types.js';
import { createTestDatabase, type Dialect, type TestDatabase } from './dialects.js';

/** Every log line any test app wrote, so a suite can check that no key ever appears in one. */
export const ALL_LOG_LINES: string[] = [];

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  testDb: TestDatabase;
  logLines: string[];
  close(): Promise<void>;
}

/** A log destination keeping every line in `lines` and in ALL_LOG_LINES (for the leak check). */
export function collectingLogStream(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      const text = chunk.toString();
      lines.push(text);
      ALL_LOG_LINES.push(text);
      done();
    },
  });
}

export async function createTestApp(dialect: Dialect, env: Record<string, string> = {}, deps: Pick<AppDependencies, 'metrics' | 'now'> = {}): Promise<TestApp> {
  const testDb = await createTestDatabase(dialect);
  const config: Readonly<Config> = loadConfig({ DATABASE_URL: testDb.url, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000', ...env });
  const logLines: string[] = [];
  const app = await buildPublicApp({ config, db: testDb.db, logStream: collectingLogStream(logLines), ...deps });
  await app.ready();
  return { app, db: testDb.db, testDb, logLines, close: async () => { await app.close(); await testDb.drop(); } };
}

/** Every key the tests issued: no log line, response header or error body may ever contain one. */
export const ISSUED_KEYS: string[] = [];
/** Other secrets the tests configured (admin tokens, database passwords): held to the same rule, /metrics included. */
export const SECRETS: string[] = [];
/** Every response the tests saw, headers and body as text. */
export const SEEN_RESPONSES: string[] = [];

/** A store with a fresh key; returns the key value. */
export async function storeWithKey(db: Database, id: string, name = `Store ${id}`): Promise<string> {
  await createStore(db, { id, name, url: `https://${id}.example` });
  return newKey(db, id);
}

export async function newKey(db: Database, storeId: string): Promise<string> {
  const { value } = await issueKey(db, storeId, 'test');
  ISSUED_KEYS.push(value);
  return value;
}

/** app.inject that remembers what came back, for the leak check. */
export async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' | 'DELETE' | 'PUT' = 'GET') {
  const response = await app.inject({ method, url, headers });
  SEEN_RESPONSES.push(JSON.stringify(response.headers) + response.body);
  return response;
}

/** Fails when any issued key or configured secret shows up in a log line or a response seen so far (in any encoding the address could carry it). */
export function findKeyLeaks(): string[] {
  const leaks: string[] = [];
  for (const key of ISSUED_KEYS) {
    const forms = [key, encodeURIComponent(key), key.slice(4)];
    for (const text of [...ALL_LOG_LINES, ...SEEN_RESPONSES]) {
      if (forms.some((form) => text.includes(form))) leaks.push(`${key.slice(0, 8)}… in ${text.slice(0, 200)}`);
    }
  }
  for (const secret of SECRETS) {
    for (const text of [...ALL_LOG_LINES, ...SEEN_RESPONSES]) {
      if (text.includes(secret)) leaks.push(`a configured secret (${secret.slice(0, 4)}…) in ${text.slice(0, 200)}`);
    }
  }
  return leaks;
}

export async function publishJson(db: Database, storeId: string, items: unknown, format: SourceFormat = 'json', options: PublishOptions = {}): Promise<PriceListRecord> {
  const text = typeof items === 'string' ? items : JSON.stringify(items);
  return publishPriceList(db, storeId, readPublication(db, Readable.from([Buffer.from(text)]), format), options);
}
