import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { issueKey, revokeKey } from '../../src/domain/keys.js';
import { createStore } from '../../src/domain/stores.js';
import { ADDRESS_ERROR_CODES, PUBLIC_ERROR_CODES } from '../../src/errors/codes.js';
import { EXPORT_FORMATS } from '../../src/formats/registry.js';
import { publishJson } from '../support/test-app.js';
import { CHROMIUM_PATH, haveChromium, launchChromium, offlineContext, startDemoApp, type RunningApp } from './browser-app.js';

const skip = haveChromium() ? false : `${CHROMIUM_PATH} is missing: the browser tests of /docs and / are skipped (apt-get install chromium)`;
if (skip) {
  console.log(`SKIPPED: ${skip}`);
  if (process.env.PRICE_EXPORT_REQUIRE_SERVICES === '1') {
    test('Chromium is required (PRICE_EXPORT_REQUIRE_SERVICES=1)', () => assert.fail(skip));
  }
}

/** The public operations of CONTRACT §3, §12 and §14, by operation id, as /docs must list them. */
const OPERATIONS: Record<string, string> = {
  getMe: '/api/me',
  getDeliveries: '/api/me/deliveries',
  exportCheck: '/api/export/check',
  campaignDataLatestGet: '/WebApi/CampaignDataLatestGet/{api_key}',
  exportLatest: '/api/export/latest',
  summaryExportLatestGet: '/WebApi/SummaryExportLatestGet/{api_key}',
  exportChanges: '/api/export/changes',
};

const MEDIA_TYPES: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  json: 'application/json',
  xml: 'application/xml',
  yml: 'application/xml',
  commerceml: 'application/xml',
  google: 'application/xml',
};

/** CONTRACT §4: the charset follows the profile's encoding in csv/tsv; json, xml and yml are UTF-8; xlsx has none. */
function expectedContentType(format: string, encoding: string): string {
  if (format === 'xlsx') return MEDIA_TYPES.xlsx;
  return `${MEDIA_TYPES[format]}; charset=${format === 'csv' || format === 'tsv' ? encoding : 'utf-8'}`;
}

type Kind = 'campaign_data' | 'export_latest' | 'summary';
const KINDS: { kind: Kind; formats: readonly string[]; defaultFormat: string }[] = [
  { kind: 'campaign_data', formats: EXPORT_FORMATS, defaultFormat: 'csv' },
  { kind: 'export_latest', formats: EXPORT_FORMATS, defaultFormat: 'csv' },
  { kind: 'summary', formats: ['xlsx'], defaultFormat: 'xlsx' },
];

/** The address the builder must show: the template with the key, only non-default parameters, `?` or `&` as the template needs. */
function expectedAddress(app: RunningApp, kind: Kind, format: string, profileId: number | null, onlyAvailable: boolean): string {
  const key = encodeURIComponent(app.demo.key);
  const template = {
    campaign_data: `${app.base}/WebApi/CampaignDataLatestGet/${key}`,
    export_latest: `${app.base}/api/export/latest?key=${key}`,
    summary: `${app.base}/WebApi/SummaryExportLatestGet/${key}`,
  }[kind];
  const params = [
    ...(format !== KINDS.find((k) => k.kind === kind)!.defaultFormat ? [`format=${format}`] : []),
    ...(profileId !== null ? [`profile_id=${profileId}`] : []),
    ...(onlyAvailable ? ['only_available=true'] : []),
  ];
  return params.length === 0 ? template : `${template}${template.includes('?') ? '&' : '?'}${params.join('&')}`;
}

describe('the key holder’s pages in a real browser', { skip }, () => {
  let browser: Browser;
  let root: RunningApp;
  let prefixed: RunningApp;

  before(async () => {
    browser = await launchChromium();
    root = await startDemoApp();
    prefixed = await startDemoApp({ BASE_PATH: '/prices' });
  });
  after(async () => {
    await browser?.close();
    await root?.close();
    await prefixed?.close();
  });

  /** A fresh context per test; afterwards, nothing may have left 127.0.0.1 and no CSP rule may have fired. */
  async function withPage(run: (page: Page, requests: string[]) => Promise<void>): Promise<void> {
    const { context, requests, offsite } = await offlineContext(browser);
    const cspViolations: string[] = [];
    try {
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      await run(page, requests);
    } finally {
      await context.close();
    }
    assert.deepEqual(offsite, [], 'a request left 127.0.0.1');
    assert.deepEqual(cspViolations, [], 'the Content-Security-Policy refused something the page needs');
  }

  // ---- /docs ----

  async function openDocs(page: Page, app: RunningApp, hash = ''): Promise<void> {
    const response = await page.goto(`${app.base}/docs${hash}`);
    assert.equal(response?.status(), 200);
    await page.locator('.opblock-summary').first().waitFor();
  }

  async function checkDocs(app: RunningApp): Promise<void> {
    await withPage(async (page, requests) => {
      await openDocs(page, app);
      // The UI's assets and the spec come from this server, under the base path.
      assert.ok(requests.includes(`${app.base}/docs/static/swagger-ui-bundle.js`), requests.join('\n'));
      assert.ok(requests.includes(`${app.base}/docs/json`), requests.join('\n'));


      // Authorize with the key, then "Execute" /api/me: the request carries X-Api-Key and goes under the base path.
      await page.locator('.auth-wrapper button.authorize').click();
      // Two schemes (ApiKey, then Basic): authorize the first.
      const apiKeyForm = page.locator('.modal-ux .auth-container').first();
      await apiKeyForm.locator('#api_key_value').fill(app.demo.key);
      await apiKeyForm.locator('button.authorize').click();
      await page.locator('.modal-ux button.btn-done').first().click();
      const me = page.locator('#operations-Account-getMe').first();
      await me.locator('.opblock-summary-control').first().click();
      const sent = page.waitForRequest((request) => request.url() === `${app.base}/api/me`);
      await me.locator('.execute-wrapper button.execute').click();
      assert.equal((await sent).headers()['x-api-key'], app.demo.key);
      const live = me.locator('.live-responses-table');
      await live.waitFor();
      assert.equal((await live.locator('tbody .response-col_status').first().innerText()).trim(), '200');
      assert.match(await live.innerText(), /"id": "demo-shop"/);

      // A key-in-address operation, called with the key typed into its parameter.
      const legacy = page.locator('#operations-Exports-campaignDataLatestGet').first();
      await legacy.locator('.opblock-summary-control').first().click();
      await legacy.locator('tr[data-param-name="api_key"] input').fill(app.demo.key);
      await legacy.locator('.execute-wrapper button.execute').click();
      const legacyLive = legacy.locator('.live-responses-table');
      await legacyLive.waitFor();
      assert.equal((await legacyLive.locator('tbody .response-col_status').first().innerText()).trim(), '200');
      // An attachment: Swagger UI offers it as a download rather than showing the text.
      assert.match(await legacyLive.innerText(), /content-type: text\/csv; charset=utf-8/);
      assert.match(await legacyLive.innerText(), /Download file/);

      const listed = await page.$$eval('.opblock-summary', (summaries) =>
        summaries.map((s) => [s.querySelector('.opblock-summary-operation-id')?.textContent ?? '', s.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '']),
      );
      // Each once: GET only (HEAD answers the same and is not listed twice under one operation id).
      assert.deepEqual(listed.sort(), Object.entries(OPERATIONS).sort());
    });
  }

  test('/docs lists the public operations, and Authorize + Execute on /api/me answers 200 with the store', () => checkDocs(root));

  test('/docs works under BASE_PATH: assets, spec and "try it out" under /prices', () => checkDocs(prefixed));

  test('/docs documents every public error code, and a problem’s `type` lands on its row', async () => {
    await withPage(async (page) => {
      await openDocs(page, root);
      const anchors = await page.$$eval('[id^="error-"]', (nodes) => nodes.map((n) => n.id));
      assert.deepEqual(anchors, [...PUBLIC_ERROR_CODES, ...ADDRESS_ERROR_CODES].map((code) => `error-${code}`));
      for (const app of [root, prefixed]) {
        const problem = (await (await fetch(`${app.base}/api/me`)).json()) as { type: string; code: string };
        assert.equal(problem.code, 'missing_key');
        // A fresh load, in a window low enough that the row starts below the fold: the page must jump to it.
        const fresh = await page.context().newPage();
        await fresh.setViewportSize({ width: 1280, height: 360 });
        await fresh.goto(new URL(problem.type, app.origin).href);
        await fresh.waitForFunction(() => {
          const box = document.getElementById('error-missing_key')?.getBoundingClientRect();
          return box !== undefined && window.scrollY > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
        });
        assert.equal(await fresh.evaluate(() => document.querySelector('tr.error-target a[id]')?.id), 'error-missing_key');
        await fresh.close();
      }
    });
  });

  test('/openapi.json lists the base path under servers', async () => {
    assert.deepEqual(((await (await fetch(`${root.base}/openapi.json`)).json()) as { servers: unknown }).servers, [{ url: '/' }]);
    assert.deepEqual(((await (await fetch(`${prefixed.base}/openapi.json`)).json()) as { servers: unknown }).servers, [{ url: '/prices' }]);
  });

  // ---- the builder ----

  /** Opens the builder, types the key and presses "Check key"; returns the status message once it has settled. */
  async function checkKey(page: Page, app: RunningApp, key: string): Promise<{ text: string; kind: string }> {
    if (!page.url().startsWith(app.base)) await page.goto(`${app.base}/`);
    await page.fill('#key', key);
    await page.click('#check-key');
    await page.waitForFunction(() => {
      const status = document.getElementById('status')!;
      return !status.hidden && !status.textContent!.startsWith('Checking');
    });
    return { text: await page.innerText('#status'), kind: (await page.getAttribute('#status', 'class')) ?? '' };
  }

  async function settledPreview(page: Page): Promise<{ status: string; kind: string; text: string }> {
    await page.waitForFunction(() => {
      const status = document.getElementById('preview-status')!;
      return !status.hidden && !status.textContent!.startsWith('Loading');
    });
    return {
      status: await page.innerText('#preview-status'),
      kind: (await page.getAttribute('#preview-status', 'class')) ?? '',
      text: (await page.isVisible('#preview')) ? await page.innerText('#preview') : '',
    };
  }

  /** The feed check block once it has answered. */
  async function settledFeedCheck(page: Page): Promise<{ status: string; kind: string; text: string }> {
    await page.waitForFunction(() => {
      const status = document.getElementById('feed-check-status')!;
      return !status.hidden && !status.textContent!.startsWith('Checking');
    });
    return {
      status: await page.innerText('#feed-check-status'),
      kind: (await page.getAttribute('#feed-check-status', 'class')) ?? '',
      text: (await page.isVisible('#feed-check')) ? await page.innerText('#feed-check') : '',
    };
  }

  /** Every address × format × profile × filter: the exact address, 200 with the format's Content-Type when fetched, and a preview. */
  async function checkEveryCombination(page: Page, app: RunningApp): Promise<void> {
    const failures: string[] = [];
    let combinations = 0;
    for (const { kind, formats } of KINDS) {
      for (const format of formats) {
        for (const profileId of [null, app.demo.profile.id]) {
          for (const onlyAvailable of [false, true]) {
            combinations++;
            const label = `${kind} ${format} profile=${profileId ?? 'none'} only_available=${onlyAvailable}`;
            await page.check(`input[name=kind][value=${kind}]`);
            await page.selectOption('#format', format);
            await page.selectOption('#profile', profileId === null ? '' : String(profileId));
            await page.setChecked('#only-available', onlyAvailable);
            const address = await page.inputValue('#address');
            assert.equal(address, expectedAddress(app, kind, format, profileId, onlyAvailable), label);

            const response = await fetch(address);
            const body = Buffer.from(await response.arrayBuffer());
            const encoding = profileId === null ? 'utf-8' : app.demo.profile.encoding;
            if (response.status !== 200) failures.push(`${label}: ${response.status} ${body.toString().slice(0, 200)}`);
            else if (response.headers.get('content-type') !== expectedContentType(format, encoding)) {
              failures.push(`${label}: Content-Type ${response.headers.get('content-type')}, expected ${expectedContentType(format, encoding)}`);
            }

            const preview = await settledPreview(page);
            if (preview.kind.includes('error')) failures.push(`${label}: preview says "${preview.status}"`);
            else if (format === 'xlsx') {
              if (!/^Binary workbook, \d+ bytes/.test(preview.status)) failures.push(`${label}: preview says "${preview.status}"`);
            } else {
              const firstLine = preview.text.split('\n')[0];
              const expected = { csv: /^(offer_id,|Артикул;)/, tsv: /^(offer_id\t|Артикул\t)/, json: /^\{/, xml: /^</, yml: /^</, commerceml: /^</, google: /^</ }[format as 'csv'];
              if (!expected.test(firstLine)) failures.push(`${label}: preview starts with "${firstLine.slice(0, 80)}"`);
            }
            // The feed check block: the chosen format's rules, for the formats that have them.
            if (kind !== 'summary' && ['yml', 'google', 'commerceml', 'xlsx'].includes(format)) {
              const check = await settledFeedCheck(page);
              if (check.kind.includes('error') || !/^(\[ok\]|\[!\]) /.test(check.text)) failures.push(`${label}: feed check says "${check.status}" / "${check.text.slice(0, 80)}"`);
            }
          }
        }
      }
    }
    assert.equal(combinations, 2 * 2 * (2 * EXPORT_FORMATS.length + 1));
    assert.deepEqual(failures, []);
  }

  test('the builder: the demo key shows the store, its price list and profiles, and keeps the key to itself', async () => {
    await withPage(async (page) => {
      const response = await page.goto(`${root.base}/`);
      const headers = response!.headers();
      assert.match(headers['content-security-policy'], /default-src 'self'/);
      assert.match(headers['content-security-policy'], /script-src 'self'(;|$)/);
      assert.doesNotMatch(headers['content-security-policy'], /unsafe-inline|unsafe-eval/);
      assert.equal(headers['referrer-policy'], 'no-referrer');

      // Every control is reachable by its label; the key row tabs in reading order.
      for (const label of ['API key', 'Format', 'Profile', 'Only items in stock', 'Address to copy']) {
        assert.equal(await page.getByLabel(label, { exact: true }).count(), 1, label);
      }
      await page.focus('#key');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'show-key');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'check-key');

      // The key field: a password input without a name (never serialized), in a form that never GETs.
      assert.equal(await page.getAttribute('#key', 'type'), 'password');
      assert.equal(await page.getAttribute('#key', 'name'), null);
      assert.equal(await page.getAttribute('#key-form', 'method'), 'post');
      await page.click('#show-key');
      assert.equal(await page.getAttribute('#key', 'type'), 'text');
      assert.equal(await page.getAttribute('#show-key', 'aria-pressed'), 'true');
      await page.click('#show-key');
      assert.equal(await page.getAttribute('#key', 'type'), 'password');

      const empty = await checkKey(page, root, '');
      assert.match(empty.text, /Paste your API key/);

      await page.fill('#key', root.demo.key);
      await page.press('#key', 'Enter');
      await page.waitForSelector('#account:not([hidden])');
      assert.match(await page.innerText('#status'), /Key accepted: Demo Shop/);
      const account = await page.innerText('#account');
      assert.match(account, /Demo Shop \(demo-shop\)/);
      assert.match(account, new RegExp(`Version ${root.demo.priceList.version}, published .* · 12 items, \\d+ in stock`));
      assert.match(account, /1C import \(windows-1251\) \(id \d+\)/);

      // The legacy address, exactly, and a preview of the legacy CSV.
      assert.equal(await page.inputValue('#address'), `${root.base}/WebApi/CampaignDataLatestGet/${root.demo.key}`);
      const preview = await settledPreview(page);
      assert.match(preview.text, /^offer_id,name,price,old_price,currency,available,quantity,url\nA-100,/);
      assert.ok(preview.text.split('\n').length <= 20);

      // Copy puts the exact address on the clipboard.
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: root.origin });
      await page.click('#copy');
      await page.waitForFunction(() => document.getElementById('copy-status')!.textContent !== '');
      assert.equal(await page.innerText('#copy-status'), 'Copied.');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await page.inputValue('#address'));

      // Nothing kept: not in the page's address, not in storage, no cookie.
      assert.equal(page.url(), `${root.base}/`);
      assert.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [0, 0, '']);
      assert.deepEqual(await page.context().cookies(), []);

      // A changed key hides what belonged to the previous one.
      await page.fill('#key', `${root.demo.key}x`);
      assert.equal(await page.isVisible('#builder'), false);
    });
  });

  test('the builder shows who fetched the list: client, version, fetches and whether it is behind', async () => {
    const answer = await fetch(`${root.base}/api/export/latest?key=${encodeURIComponent(root.demo.key)}`, { headers: { 'user-agent': 'YandexMarket/2.0' } });
    assert.equal(answer.status, 200);
    await answer.arrayBuffer();
    await root.flushLedger();
    await withPage(async (page) => {
      await page.goto(`${root.base}/`);
      await page.fill('#key', root.demo.key);
      await page.press('#key', 'Enter');
      await page.waitForSelector('#consumers:not([hidden])');
      const rows = await page.$$eval('#consumers-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
      const yandex = rows.find((cells) => cells[0] === 'Yandex');
      assert.ok(yandex, JSON.stringify(rows));
      assert.equal(yandex[1], '127.0.0.1');
      assert.equal(yandex[3], `v${root.demo.priceList.version}`);
      assert.equal(yandex[4], '200');
      assert.equal(yandex[6], 'Up to date');
      // Another key forgets the table with the rest of the account.
      await page.fill('#key', `${root.demo.key}x`);
      assert.equal(await page.isVisible('#consumers'), false);
    });
  });

  test('the builder: every address × format × profile × filter gives an address that answers 200 with the format’s Content-Type', async () => {
    await withPage(async (page) => {
      const status = await checkKey(page, root, root.demo.key);
      assert.match(status.text, /Key accepted/);
      await checkEveryCombination(page, root);
    });
  });

  test('the builder: a scoped key shows its scopes and builds only the addresses, formats and profiles it opens, each answering 200', async () => {
    const scoped = await issueKey(root.db, root.demo.storeId, 'marketplace', { addresses: 'prices,me', formats: 'yml,csv', profiles: [root.demo.profile.id], expires: '2099-01-31T00:00:00Z' });
    const meOnly = await issueKey(root.db, root.demo.storeId, 'me only', { addresses: 'me' });
    const noMe = await issueKey(root.db, root.demo.storeId, 'feed only', { addresses: 'prices' });
    await withPage(async (page) => {
      const status = await checkKey(page, root, scoped.value);
      assert.match(status.text, /Key accepted/);
      assert.match(await page.innerText('#key-scopes'), /^addresses: prices, me · formats: yml, csv · profiles: \d+ \(one must be chosen\) · expires /);
      assert.equal(await page.isVisible('input[name=kind][value=summary]'), false);
      assert.equal(await page.isVisible('input[name=kind][value=export_latest]'), true);
      assert.deepEqual(await page.$$eval('#format option', (options) => options.map((o) => (o as HTMLOptionElement).value)), ['csv', 'yml']);
      assert.deepEqual(await page.$$eval('#profile option', (options) => options.map((o) => (o as HTMLOptionElement).value)), [String(root.demo.profile.id)]);
      for (const kind of ['campaign_data', 'export_latest']) {
        for (const format of ['csv', 'yml']) {
          await page.check(`input[name=kind][value=${kind}]`);
          await page.selectOption('#format', format);
          const address = await page.inputValue('#address');
          assert.equal((await fetch(address)).status, 200, `${kind} ${format}: ${address.replace(scoped.value, '…')}`);
          const preview = await settledPreview(page);
          assert.ok(!preview.kind.includes('error'), preview.status);
        }
      }

      const none = await checkKey(page, root, meOnly.value);
      assert.match(none.text, /opens no export address/);
      assert.equal(await page.isVisible('#builder'), false);
      assert.match(await page.innerText('#key-scopes'), /^addresses: me · every format · every profile$/);

      // The page reads api/me: a key that does not open it is told so, in the service's words.
      const feedOnly = await checkKey(page, root, noMe.value);
      assert.match(feedOnly.text, /^This key does not open api\/me \(403 key_scope\)/);
      assert.ok(!feedOnly.text.includes(noMe.value));
    });
  });

  test('the builder: wrong, revoked and rate-limited keys, and a store without a price list, say so', async () => {
    const revoked = await issueKey(root.db, root.demo.storeId, 'revoked in a test');
    await revokeKey(root.db, revoked.record.id);
    await createStore(root.db, { id: 'empty-shop', name: 'Empty Shop' });
    const emptyKey = (await issueKey(root.db, 'empty-shop', 'test')).value;
    const limited = await startDemoApp({ AUTH_FAIL_LIMIT_PER_MIN: '1' });
    try {
      await withPage(async (page) => {
        const wrong = await checkKey(page, root, 'pex_not-a-real-key');
        assert.match(wrong.text, /not valid \(401 invalid_key\)/);
        assert.match(wrong.kind, /error/);
        assert.equal(await page.isVisible('#account'), false);

        const gone = await checkKey(page, root, revoked.value);
        assert.match(gone.text, /revoked \(401 revoked_key\)/);
        assert.match(gone.kind, /error/);

        const none = await checkKey(page, root, emptyKey);
        assert.match(none.text, /has not published a price list yet/);
        assert.match(none.kind, /warning/);
        assert.match(await page.innerText('#account'), /Empty Shop \(empty-shop\)[\s\S]*None published yet/);
        assert.match((await settledPreview(page)).status, /No preview: this store has not published a price list yet/);
        assert.equal((await fetch(await page.inputValue('#address'))).status, 404);

        await checkKey(page, limited, 'pex_wrong-once');
        const throttled = await checkKey(page, limited, 'pex_wrong-twice');
        assert.match(throttled.text, /Too many requests \(429 rate_limited\)\. Wait \d+ seconds? and try again/);
      });
    } finally {
      await limited.close();
    }
  });

  test('the builder behind PUBLIC_URL: the address names the public host, the preview still comes from this server', async () => {
    const behindProxy = await startDemoApp({ BASE_PATH: '/prices', PUBLIC_URL: 'https://prices.example/prices' });
    try {
      await withPage(async (page) => {
        await page.goto(`${behindProxy.base}/`);
        await checkKey(page, behindProxy, behindProxy.demo.key);
        await page.check('input[name=kind][value=export_latest]');
        await page.selectOption('#format', 'json');
        assert.equal(await page.inputValue('#address'), `https://prices.example/prices/api/export/latest?key=${behindProxy.demo.key}&format=json`);
        const preview = await settledPreview(page);
        assert.doesNotMatch(preview.kind, /error/, preview.status);
        assert.match(preview.text, /^\{/);
      });
    } finally {
      await behindProxy.close();
    }
  });

  test('the builder offers the changes feed: since the chosen version, its own formats, a working preview', async () => {
    const app = await startDemoApp();
    try {
      const first = (await app.db.priceLists.latest(app.demo.storeId))!.version;
      const next = await publishJson(app.db, app.demo.storeId, [{ offer_id: 'CHANGED-1', name: 'New in the list', price: 10 }], 'json', { force: true });
      await withPage(async (page) => {
        await checkKey(page, app, app.demo.key);
        await page.check('input[name=kind][value=changes]');
        assert.equal(await page.innerText('#version-label'), 'Changes since version');
        assert.deepEqual(await page.$$eval('#format option', (options) => options.map((o) => (o as HTMLOptionElement).value)), ['json', 'ndjson', 'csv', 'tsv', 'xml', 'yml']);
        // No version chosen: since the latest (nothing changed yet); the price list's format is kept.
        assert.equal(await page.inputValue('#address'), `${app.base}/api/export/changes?key=${app.demo.key}&since=${next.version}&format=csv`);
        await page.selectOption('#version', String(first));
        await page.selectOption('#format', 'ndjson');
        const address = await page.inputValue('#address');
        assert.equal(address, `${app.base}/api/export/changes?key=${app.demo.key}&since=${first}&format=ndjson`);
        const answer = await fetch(address);
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get('x-price-list-version'), String(next.version));
        const preview = await settledPreview(page);
        assert.doesNotMatch(preview.kind, /error/, preview.status);
        assert.match(preview.text, /CHANGED-1/);
      });
    } finally {
      await app.close();
    }
  });

  test('the builder under BASE_PATH=/prices: /prices leads to the page, and every address works', async () => {
    await withPage(async (page) => {
      await page.goto(`${prefixed.origin}/prices`);
      assert.equal(page.url(), `${prefixed.origin}/prices/`);
      const status = await checkKey(page, prefixed, prefixed.demo.key);
      assert.match(status.text, /Key accepted: Demo Shop/);
      assert.equal(await page.inputValue('#address'), `${prefixed.origin}/prices/WebApi/CampaignDataLatestGet/${prefixed.demo.key}`);
      assert.equal(await page.getAttribute('footer a', 'href'), 'docs');
      await checkEveryCombination(page, prefixed);
    });
  });
});
