// Screenshots of the key holder's pages for the README: docs/docs-page.png and docs/builder-page.png.
// Runs the real app on a throwaway SQLite database with the demo store, offline, in Debian's Chromium:
//   node --import tsx scripts/screenshots.ts
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { haveChromium, CHROMIUM_PATH, launchChromium, offlineContext, startDemoApp } from '../test/browser/browser-app.js';

const outDir = fileURLToPath(new URL('../docs/', import.meta.url));

if (!haveChromium()) {
  console.error(`${CHROMIUM_PATH} is missing: install Debian's chromium to take the screenshots.`);
  process.exit(1);
}

const app = await startDemoApp();
const browser = await launchChromium();
try {
  const { context, offsite } = await offlineContext(browser);
  const page = await context.newPage();
  mkdirSync(outDir, { recursive: true });

  await page.goto(`${app.base}/docs`);
  await page.locator('.opblock-summary').first().waitFor();
  await page.screenshot({ path: `${outDir}docs-page.png`, fullPage: true });

  await page.goto(`${app.base}/`);
  await page.fill('#key', app.demo.key);
  await page.click('#check-key');
  await page.waitForSelector('#builder:not([hidden])');
  await page.check('input[name=kind][value=export_latest]');
  await page.selectOption('#profile', String(app.demo.profile.id));
  await page.waitForSelector('#preview:not([hidden])');
  await page.screenshot({ path: `${outDir}builder-page.png`, fullPage: true });

  if (offsite.length > 0) throw new Error(`the pages asked for something off this machine: ${offsite.join(', ')}`);
  console.log(`wrote ${outDir}docs-page.png and ${outDir}builder-page.png`);
} finally {
  await browser.close();
  await app.close();
}
