import { AppError } from '../errors/app-error.js';
import { textProblems } from '../model/text.js';
import type { Database, StoreRecord } from '../store/types.js';

const STORE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface CreateStoreInput {
  id: string;
  name: string;
  currency?: string;
  url?: string | null;
  company?: string | null;
}

export async function createStore(db: Database, input: CreateStoreInput): Promise<StoreRecord> {
  const problems: string[] = [];
  if (!STORE_ID.test(input.id)) problems.push('id must match [a-z0-9][a-z0-9-]{0,63}');
  if (typeof input.name !== 'string' || input.name.trim() === '') problems.push('name must not be empty');
  const currency = (input.currency ?? 'RUB').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) problems.push('currency must be an ISO 4217 code like RUB');
  if (input.url && !/^https?:\/\/\S+$/.test(input.url)) problems.push('url must be an absolute http(s) URL');
  problems.push(...textProblems({ name: input.name, url: input.url, company: input.company }));
  if (problems.length > 0) throw new AppError('invalid_input', problems.join('; '));
  if (await db.stores.get(input.id)) throw new AppError('store_exists', `a store with id "${input.id}" already exists`);
  return db.stores.create({ id: input.id, name: input.name.trim(), currency, url: input.url ?? null, company: input.company ?? null });
}

export async function getStoreOrFail(db: Database, id: string): Promise<StoreRecord> {
  const found = await db.stores.get(id);
  if (!found) throw new AppError('store_not_found', `no store with id "${id}"`);
  return found;
}
