import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../model/webhook-events.js';
import type { Database, WebhookRecord } from '../store/types.js';
import { resolvedTargetProblem, type TargetPolicy } from './webhook-target.js';
import { newWebhookSecret } from './webhook-signature.js';

export interface NewWebhookInput {
  storeId: string;
  url: string;
  /** Event names; empty or absent: all of them. */
  events?: readonly string[];
}

/** A new webhook and its signing secret, shown this once. */
export interface AddedWebhook {
  record: WebhookRecord;
  secret: string;
}

/** Parses `--events a,b` / the API's list: every name must be one of CONTRACT §13's. */
export function parseEvents(names: readonly string[] | undefined): WebhookEvent[] {
  const wanted = (names ?? []).map((n) => n.trim()).filter((n) => n !== '');
  if (wanted.length === 0) return [...WEBHOOK_EVENTS];
  const unknown = wanted.filter((n) => !(WEBHOOK_EVENTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new AppError('invalid_input', `unknown event ${unknown.map((n) => `"${n}"`).join(', ')}; events are ${WEBHOOK_EVENTS.join(', ')}`);
  return WEBHOOK_EVENTS.filter((e) => wanted.includes(e));
}

/** Adds a webhook (CONTRACT §13) after the target check; the secret is returned once and never listed. */
export async function addWebhook(db: Database, input: NewWebhookInput, policy: TargetPolicy, now: Date = new Date()): Promise<AddedWebhook> {
  const events = parseEvents(input.events);
  const problem = await resolvedTargetProblem(input.url, policy);
  if (problem) throw new AppError('invalid_input', problem);
  if (!(await db.stores.get(input.storeId))) throw new AppError('store_not_found', `no store with id "${input.storeId}"`);
  const secret = newWebhookSecret();
  const record = await db.deliveries.webhooks.create({
    id: `wh_${randomBytes(9).toString('base64url')}`, store_id: input.storeId, url: input.url, events, secret, created_at: now,
  });
  return { record, secret };
}

export async function listWebhooks(db: Database, storeId: string): Promise<WebhookRecord[]> {
  if (!(await db.stores.get(storeId))) throw new AppError('store_not_found', `no store with id "${storeId}"`);
  return db.deliveries.webhooks.list(storeId);
}

export async function removeWebhook(db: Database, id: string): Promise<void> {
  if (!(await db.deliveries.webhooks.remove(id))) throw new AppError('webhook_not_found', `no webhook with id "${id}"`);
}
