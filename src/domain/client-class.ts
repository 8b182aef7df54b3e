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

/** The client's class from its User-Agent (absent or unknown: `other`). */
export function clientClassOf(userAgent: string | undefined): ClientClass {
  if (!userAgent) return 'other';
  const agent = userAgent.length > MAX_AGENT_CHARS ? userAgent.slice(0, MAX_AGENT_CHARS) : userAgent;
  for (const { name, pattern } of CLIENT_CLASSES) if (pattern.test(agent)) return name;
  return 'other';
}
