import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';

/** RFC 4648 base64, padding optional (some clients leave it off). */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const malformed = () => new AppError('invalid_key', 'the Basic credentials are malformed: send base64 of "any-user:API-KEY"');

/**
 * The key in `Authorization: Basic base64(user:KEY)` (CONTRACT §15; RFC 7617): any user, the
 * key as the password. Undefined when the request carries no Basic credentials (another
 * scheme, such as a proxy's Bearer, is not ours to judge and is ignored); an empty password
 * counts as no key in the header. Credentials that cannot be read (not base64, no colon,
 * nothing after the scheme) are a wrong key: 401 invalid_key, counted like any wrong key.
 */
export function basicAuthKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^basic(?:\s+(.*))?$/is.exec(header.trim());
  if (!match) return undefined;
  const token = (match[1] ?? '').trim();
  if (token === '' || token.length % 4 === 1 || !BASE64.test(token)) throw malformed();
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed();
  const password = decoded.slice(colon + 1);
  return password === '' ? undefined : password;
}

/**
 * The key a request presents on an address that takes Basic too: from the header, the address
 * (or X-Api-Key), or both when they are the same key. Two different keys are a 400: which one
 * the caller meant cannot be guessed, and answering for either would hide a misconfiguration.
 */
export function presentedKey(request: FastifyRequest, fromAddress: string | undefined, acceptsBasic: boolean): string | undefined {
  const inAddress = fromAddress === '' ? undefined : fromAddress;
  if (!acceptsBasic) return inAddress;
  const inHeader = basicAuthKey(request.headers.authorization);
  if (inHeader !== undefined && inAddress !== undefined && inHeader !== inAddress) {
    throw new AppError('invalid_parameter', 'the key in the Authorization header differs from the key in the address; send one of them');
  }
  return inHeader ?? inAddress;
}
