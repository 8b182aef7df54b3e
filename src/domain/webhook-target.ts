import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Server-side request forgery (CONTRACT §13): a webhook may not reach loopback, private,
 * link-local (or otherwise non-public) addresses unless WEBHOOK_ALLOW_PRIVATE=true. Checked
 * when the webhook is added and again on every connection, on the address DNS gave at that
 * moment (a name that resolved to a public address yesterday may not today). Redirects are
 * never followed, so a public target cannot send the request on inward.
 */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** True for an address a webhook may not reach without WEBHOOK_ALLOW_PRIVATE. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return FORBIDDEN.check(mapped[1], 'ipv4');
  const family = isIP(bare);
  if (family === 0) return true;
  return FORBIDDEN.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** Why a webhook address is refused, or null when it may be used (the name's addresses are checked at connect time too). */
export function targetProblem(url: string, policy: TargetPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the webhook url is not an absolute URL';
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? 'the webhook url must be https:// or http://' : 'the webhook url must be https:// (http:// only with WEBHOOK_ALLOW_HTTP=true)';
  }
  if (parsed.username || parsed.password) return 'the webhook url may not carry a user name or password';
  if (!policy.allowPrivate && isIP(parsed.hostname.replace(/^\[|\]$/g, '')) !== 0 && isForbiddenAddress(parsed.hostname)) {
    return 'the webhook url points at a loopback, private or link-local address (allowed only with WEBHOOK_ALLOW_PRIVATE=true)';
  }
  return null;
}

/** Resolves the url's host and refuses it when any address it resolves to now is forbidden. */
export async function resolvedTargetProblem(url: string, policy: TargetPolicy): Promise<string | null> {
  const problem = targetProblem(url, policy);
  if (problem || policy.allowPrivate) return problem;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return null;
  const addresses = await new Promise<LookupAddress[] | null>((resolve) => dnsLookup(host, { all: true }, (error, found) => resolve(error ? null : found)));
  // A name that does not resolve yet is accepted: every connection checks what it resolves to then.
  if (!addresses) return null;
  if (addresses.some((a) => isForbiddenAddress(a.address))) {
    return `the webhook host "${host}" resolves to a loopback, private or link-local address (allowed only with WEBHOOK_ALLOW_PRIVATE=true)`;
  }
  return null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses forbidden addresses at connect time: the check
 * runs on the very addresses the socket then connects to, so DNS cannot answer one thing to
 * the check and another to the connection.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (refused) {
        const denied: NodeJS.ErrnoException = new Error(`refused: ${hostname} resolves to a loopback, private or link-local address`);
        denied.code = 'EWEBHOOKPRIVATE';
        return callback(denied, []);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
