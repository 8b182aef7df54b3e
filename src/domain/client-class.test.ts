import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLIENT_CLASSES, clientClassOf, type ClientClass } from './client-class.js';

/** Real User-Agent strings, at least one per class of the table. */
const AGENTS: [string | undefined, ClientClass][] = [
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'google'],
  ['Google-Shopping', 'google'],
  ['Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.88 Safari/537.36', 'google'],
  ['Mozilla/5.0 (compatible; YandexMarket/2.0; +http://yandex.com/bots)', 'yandex'],
  ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'yandex'],
  ['1C+Enterprise/8.3', '1c'],
  ['1C:Enterprise/8.3.22', '1c'],
  ['Bitrix site manager (2b0a7e6a1c6f1d0c.1)', 'bitrix'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'browser'],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'browser'],
  ['curl/8.5.0', 'curl'],
  ['Wget/1.21.4', 'wget'],
  ['python-requests/2.32.3', 'python-requests'],
  ['Java/17.0.2', 'other'],
  ['', 'other'],
  [undefined, 'other'],
];

test('every class of the table has a User-Agent that lands in it', () => {
  const covered = new Set(AGENTS.map(([, expected]) => expected));
  for (const { name } of CLIENT_CLASSES) assert.ok(covered.has(name), `no test agent for ${name}`);
});

for (const [agent, expected] of AGENTS) {
  // Twice: the second answer comes from the agents remembered.
  test(`${JSON.stringify(agent)} → ${expected}`, () => assert.deepEqual([clientClassOf(agent), clientClassOf(agent)], [expected, expected]));
}

test('agents stay classed right once more agents were seen than are remembered', () => {
  for (let i = 0; i < 2_500; i++) assert.equal(clientClassOf(`${i % 2 ? 'curl' : 'Wget'}/${i}`), i % 2 ? 'curl' : 'wget');
  for (const [agent, expected] of AGENTS) assert.equal(clientClassOf(agent), expected);
});

test('a very long User-Agent is judged by its first characters only', () => {
  assert.equal(clientClassOf(`curl/8 ${'x'.repeat(100_000)}`), 'curl');
  assert.equal(clientClassOf(`${'x'.repeat(600)} YandexBot`), 'other');
});
