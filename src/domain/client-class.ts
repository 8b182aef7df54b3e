/**
 * The client classes of CONTRACT §12, told from the User-Agent: ONE table, read top to
 * bottom, the first match wins. Order matters where agents overlap: Google's and Yandex's
 * fetchers and 1C/Bitrix importers name "Mozilla" too, so they come before `browser`.
 */
export const CLIENT_CLASSES = [
  // Googlebot, Google-Shopping, Google-Merchant…, Storebot-Google, AdsBot-Google, FeedFetcher-Google.
  { name: 'google', pattern: /googlebot|google-|-google\b|feedfetcher-google/i },
  // YandexMarket, YandexBot and the other Yandex* robots.
  { name: 'yandex', pattern: /yandex/i },
  // 1C:Enterprise's HTTP client ("1C+Enterprise/8.3").
  { name: '1c', pattern: /1c[:+ ]?enterprise|1c:предприятие/i },
  // 1C-Bitrix's site modules and importers.
  { name: 'bitrix', pattern: /bitrix/i },
  { name: 'curl', pattern: /^curl\//i },
  { name: 'wget', pattern: /^wget\//i },
  { name: 'python-requests', pattern: /^python-requests\//i },
  // Every desktop and mobile browser says Mozilla/5.0 and names its engine.
  { name: 'browser', pattern: /^mozilla\/5\.0 .*(gecko|applewebkit|trident)/i },
] as const;

export type ClientClass = (typeof CLIENT_CLASSES)[number]['name'] | 'other';

/** Longest User-Agent looked at: a hostile header costs no more than this. */
const MAX_AGENT_CHARS = 512;

/**
 * Agents classed lately. A fetcher sends the same User-Agent with every request, and trying the
 * table's patterns on a browser's or an unknown agent costs several hundred nanoseconds, every
 * answer. Bounded: agents longer than MAX_AGENT_CHARS are not kept, and it is emptied when full,
 * so a hostile variety of agents costs at most ~1 MB and the patterns again.
 */
const remembered = new Map<string, ClientClass>();
const MOST_REMEMBERED = 1_000;

/** The client's class from its User-Agent (absent or unknown: `other`). */
export function clientClassOf(userAgent: string | undefined): ClientClass {
  if (!userAgent) return 'other';
  if (userAgent.length > MAX_AGENT_CHARS) return classOf(userAgent.slice(0, MAX_AGENT_CHARS));
  const known = remembered.get(userAgent);
  if (known) return known;
  const found = classOf(userAgent);
  if (remembered.size >= MOST_REMEMBERED) remembered.clear();
  remembered.set(userAgent, found);
  return found;
}

function classOf(agent: string): ClientClass {
  for (const { name, pattern } of CLIENT_CLASSES) if (pattern.test(agent)) return name;
  return 'other';
}
