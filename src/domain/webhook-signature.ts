import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks' symmetric scheme (spec "Signature scheme"): the secret is `whsec_` +
 * base64 of 24–64 random bytes; the signature is `v1,` + base64 HMAC-SHA256, keyed with the
 * base64-decoded secret, of `{webhook-id}.{webhook-timestamp}.{body}`.
 */

const SECRET_PREFIX = 'whsec_';
/** 32 bytes: inside the spec's 24–64. */
const SECRET_BYTES = 32;

export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');

/** The three headers of one attempt; `timestamp` is the attempt's, in whole seconds. */
export function signatureHeaders(secret: string, messageId: string, timestamp: Date, body: string): Record<string, string> {
  const seconds = Math.floor(timestamp.getTime() / 1000);
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${messageId}.${seconds}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': String(seconds), 'webhook-signature': `v1,${signature}` };
}
