import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { loadConfig } from '../../src/config/config.js';
import { setUpDemo, type DemoSetup } from '../../src/domain/demo.js';
import { buildPublicApp } from '../../src/composition.js';
import type { Database } from '../../src/store/types.js';
import { createTestDatabase } from '../support/dialects.js';

/** Debian's Chromium; the tests never download a browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const haveChromium = (): boolean => existsSync(CHROMIUM_PATH);

/**
 * Headless, and quiet: no background, component-update or sync traffic, so every request the
 * browser makes is one the page made. `launch` gives every browser a fresh, temporary user data
 * directory of its own (removed on close): nothing carries over from run to run.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A context that refuses, and records, every request leaving 127.0.0.1: the pages must work
 * offline (no CDN, no web font, no validator badge). `offsite` lists what was refused.
 */
export async function offlineContext(browser: Browser): Promise<{ context: BrowserContext; requests: string[]; offsite: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const offsite: string[] = [];
  const isLocal = (url: string) => /^(data|blob|about):/.test(url) || new URL(url).hostname === '127.0.0.1';
  context.on('request', (request) => {
    requests.push(request.url());
    if (!isLocal(request.url())) offsite.push(request.url());
  });
  await context.route('**/*', (route) => (isLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
  return { context, requests, offsite };
}

export interface RunningApp {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The origin with BASE_PATH: where the public routes live. */
  base: string;
  db: Database;
  demo: DemoSetup;
  close(): Promise<void>;
}

/** The real app on a real port, over a fresh SQLite database holding the demo store (a price list and a profile). */
export async function startDemoApp(env: Record<string, string> = {}): Promise<RunningApp> {
  const testDb = await createTestDatabase('sqlite');
  const demo = await setUpDemo(testDb.db);
  const config = loadConfig({ DATABASE_URL: testDb.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000', ...env });
  const app = await buildPublicApp({ config, db: testDb.db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    origin,
    base: origin + config.basePath,
    db: testDb.db,
    demo,
    close: async () => {
      await app.close();
      await testDb.drop();
    },
  };
}
