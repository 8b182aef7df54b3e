import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { buildPublicApp } from '../../src/composition.js';
import type { PublicationDraft, Database } from '../../src/store/types.js';
import { createTestDatabase, type Dialect, type TestDatabase } from '../support/dialects.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** The admin app listening on a real port, the public app beside it on the same database, and every log line both wrote. */
export interface AdminHarness {
  admin: FastifyInstance;
  publicApp: FastifyInstance;
  testDb: TestDatabase;
  /** http://127.0.0.1:PORT of the admin app. */
  adminUrl: string;
  logLines: string[];
  /** How many times a publication draft received a batch of items, so far. */
  appendCalls(): number;
  /** How many publication drafts were dropped, so far. */
  abortCalls(): number;
  close(): Promise<void>;
}

/** `env` adds or overrides configuration (a small MAX_LINE_BYTES, say). */
export async function startAdminHarness(dialect: Dialect, env: Record<string, string> = {}): Promise<AdminHarness> {
  const testDb = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: testDb.url, ADMIN_TOKEN, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000', ...env,
  });
  const logLines: string[] = [];
  const logStream = new Writable({ write(chunk, _encoding, done) { logLines.push(chunk.toString()); done(); } });
  let appends = 0;
  let aborts = 0;
  const db = countingDraftCalls(testDb.db, { append: () => appends++, abort: () => aborts++ });
  const admin = await buildAdminApp({ config, db, logStream });
  const publicApp = await buildPublicApp({ config, db: testDb.db, logStream });
  await publicApp.ready();
  const adminUrl = await admin.listen({ port: 0, host: '127.0.0.1' });
  return {
    admin, publicApp, testDb, adminUrl, logLines,
    appendCalls: () => appends,
    abortCalls: () => aborts,
    close: async () => { await admin.close(); await publicApp.close(); await testDb.drop(); },
  };
}

/**
 * The store, with every draft's `append` and `abort` counted: a test can then tell that rows
 * reached the database while the request body was still being sent (the body is streamed, not
 * buffered), and that a cut-off upload's draft was dropped.
 */
function countingDraftCalls(db: Database, on: { append: () => void; abort: () => void }): Database {
  const priceLists = new Proxy(db.priceLists, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'beginPublication') {
        return async (storeId: string): Promise<PublicationDraft> => {
          const draft = await target.beginPublication(storeId);
          return {
            id: draft.id,
            append: (items, rows) => { on.append(); return draft.append(items, rows); },
            rowReader: draft.rowReader,
            appended: () => draft.appended(),
            commit: (summary, outcome) => draft.commit(summary, outcome),
            abort: () => { on.abort(); return draft.abort(); },
          };
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  // The drafts are begun through db.priceLists: that repository is the one wrapped.
  return { ...db, priceLists };
}
