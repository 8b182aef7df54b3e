import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkKeyScope, type ScopedRequest } from '../domain/key-scopes.js';
import { authenticate } from '../domain/keys.js';
import type { KeyAddress } from '../model/key-scopes.js';
import { presentedKey } from './basic-auth.js';
import { first as firstParam } from './export-params.js';
import type { RequestGate } from './request-gate.js';

/** The storage seam and a key's look-up, named through the domain (http does not import the store). */
type Database = Parameters<typeof authenticate>[0];
type KeyLookup = Awaited<ReturnType<typeof authenticate>>;

/** How one public address takes its key and what a scope can judge of its requests. */
export interface KeyAccess {
  address: KeyAddress;
  /** The key in the address: the path segment, `key`, or (for /api/me) the X-Api-Key header. */
  fromAddress: string | undefined;
  /** Address 4 (and its siblings with `key=`) and /api/me also take HTTP Basic. */
  basic: boolean;
  /** Addresses with `format` and `profile_id`: the formats they answer and their default (null: none). */
  exportParams?: { formats: readonly string[]; defaultFormat: string | null };
}

/** The clock keys expire by; tests move it instead of waiting (`AppDependencies.clock`). */
export function registerKeyClock(app: FastifyInstance, clock: () => Date): void {
  app.decorate('keyClock', clock);
}

/**
 * What the scope check can read before the parameters are checked: the format and profile when
 * their values are valid (a malformed one is left to the parameter check's 400, which follows).
 */
function scopedRequest(access: KeyAccess, query: unknown): ScopedRequest {
  if (!access.exportParams) return { address: access.address };
  const q = (query ?? {}) as Record<string, unknown>;
  const formatText = firstParam(q, 'format')?.toLowerCase() ?? access.exportParams.defaultFormat;
  const format = formatText !== null && access.exportParams.formats.includes(formatText) ? formatText : undefined;
  const profileText = firstParam(q, 'profile_id');
  const profileId = profileText === null ? null : /^\d{1,18}$/.test(profileText) && !/^0+$/.test(profileText) ? Number(profileText) : undefined;
  return { address: access.address, format, profileId };
}

/**
 * Admits a key holder's request in the contract's order: the key (401, counted by the gate),
 * then the key's scope (403 key_scope). A scope refusal comes from a right key, so the gate has
 * already counted it against the store's quota and never against the client's failed keys; and
 * as it runs before any export is resolved, no 304 is ever answered outside the scope.
 */
export async function admitKey(request: FastifyRequest, db: Database, gate: RequestGate, access: KeyAccess): Promise<KeyLookup> {
  const now = request.server.keyClock?.() ?? new Date();
  const lookup = await gate.admit(request, () => authenticate(db, presentedKey(request, access.fromAddress, access.basic), now));
  checkKeyScope(lookup.key.scopes, scopedRequest(access, request.query));
  return lookup;
}

declare module 'fastify' {
  interface FastifyInstance {
    keyClock?: () => Date;
  }
}
