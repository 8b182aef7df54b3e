import { AppError } from '../errors/app-error.js';
import { KEY_ADDRESSES, SCOPE_FORMATS, isUnlimited, type KeyAddress, type KeyScopes } from '../model/key-scopes.js';

/** What a key holder asks for, as far as a scope can judge it. */
export interface ScopedRequest {
  address: KeyAddress;
  /**
   * The format the answer would have (the parameter, or the address's default); undefined
   * when the address has no format, or the parameter is malformed (its 400 follows the scope check).
   */
  format?: string;
  /** The profile asked for; null for none; undefined when the address takes none or the parameter is malformed. */
  profileId?: number | null;
}

/** A list given on the command line (`a,b`) or in the admin API (`["a","b"]`); absent or null: not limited. */
export type ScopeListInput = string | readonly (string | number)[] | null | undefined;

export interface ScopeInput {
  addresses?: ScopeListInput;
  formats?: ScopeListInput;
  profiles?: ScopeListInput;
}

function items(input: ScopeListInput): string[] | null {
  if (input === null || input === undefined) return null;
  const list = typeof input === 'string' ? input.split(',') : input.map(String);
  return list.map((item) => item.trim().toLowerCase()).filter((item) => item !== '');
}

/**
 * Checks the scopes a key is issued (or updated) with; every problem is named at once. Profile
 * ids must be the store's own (`knownProfileIds`), so a typo cannot make a key that opens nothing.
 */
export function parseScopes(input: ScopeInput, knownProfileIds: readonly number[]): KeyScopes | null {
  const problems: string[] = [];
  const listOf = <T>(name: string, raw: ScopeListInput, valid: (item: string) => T | undefined, allowed: string): T[] | null => {
    const list = items(raw);
    if (list === null) return null;
    if (list.length === 0) {
      problems.push(`${name} must name at least one of ${allowed} (leave it out to allow every one)`);
      return null;
    }
    const parsed: T[] = [];
    for (const item of list) {
      const value = valid(item);
      if (value === undefined) problems.push(`${name}: "${item}" is not one of ${allowed}`);
      else if (!parsed.includes(value)) parsed.push(value);
    }
    return parsed;
  };
  const scopes: KeyScopes = {
    addresses: listOf('addresses', input.addresses, (a) => (KEY_ADDRESSES as readonly string[]).includes(a) ? (a as KeyAddress) : undefined, KEY_ADDRESSES.join(', ')),
    formats: listOf('formats', input.formats, (f) => (SCOPE_FORMATS as readonly string[]).includes(f) ? f : undefined, SCOPE_FORMATS.join(', ')),
    profiles: listOf(
      'profiles',
      input.profiles,
      (p) => (/^[1-9]\d{0,17}$/.test(p) && knownProfileIds.includes(Number(p)) ? Number(p) : undefined),
      knownProfileIds.length > 0 ? `this store's profile ids (${knownProfileIds.join(', ')})` : "this store's profile ids (it has none)",
    ),
  };
  if (problems.length > 0) throw new AppError('invalid_input', problems.join('; '));
  return isUnlimited(scopes) ? null : scopes;
}

/** "addresses prices, me; formats yml; profiles 3": what the key may do, for a 403 and `key list`. */
export function describeScopes(scopes: KeyScopes | null): string {
  if (isUnlimited(scopes)) return 'every address, format and profile';
  const parts = [
    `addresses ${scopes!.addresses?.join(', ') ?? 'all'}`,
    `formats ${scopes!.formats?.join(', ') ?? 'all'}`,
    `profiles ${scopes!.profiles?.join(', ') ?? 'all (or none)'}`,
  ];
  return parts.join('; ');
}

/**
 * Refuses a request outside the key's scopes with `403 key_scope`, naming what the key may do.
 * Runs after the key check and before the parameter checks (CONTRACT §3, §15), so it judges
 * only what it can read: a dimension left undefined in `asked` is not judged here.
 */
export function checkKeyScope(scopes: KeyScopes | null, asked: ScopedRequest): void {
  if (isUnlimited(scopes)) return;
  const refuse = (what: string) => new AppError('key_scope', `this key does not open ${what}; it opens ${describeScopes(scopes)}`);
  if (scopes!.addresses && !scopes!.addresses.includes(asked.address)) throw refuse(`the ${asked.address} address`);
  if (asked.format !== undefined && scopes!.formats && !scopes!.formats.includes(asked.format)) throw refuse(`format ${asked.format}`);
  if (asked.profileId !== undefined && scopes!.profiles) {
    if (asked.profileId === null) throw refuse('exports without a profile_id');
    if (!scopes!.profiles.includes(asked.profileId)) throw refuse(`profile ${asked.profileId}`);
  }
}

/** Whether a key may open this address at all (the builder and /api/me list only those). */
export const opensAddress = (scopes: KeyScopes | null, address: KeyAddress): boolean =>
  isUnlimited(scopes) || scopes!.addresses === null || scopes!.addresses.includes(address);

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether YYYY-MM-DD names a day of the calendar (Date would roll 2027-02-30 into March). */
function realDate(ymd: string): boolean {
  const [year, month, day] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** `--expires`: an RFC 3339 time with its offset (a bare date or local time would mean different instants on different machines). */
export function parseExpiry(text: string | null | undefined, now: Date): Date | null {
  if (text === null || text === undefined || text === '') return null;
  const at = ISO_INSTANT.test(text) && realDate(text.slice(0, 10)) ? new Date(text) : null;
  if (!at || Number.isNaN(at.getTime())) throw new AppError('invalid_input', 'expires must be an RFC 3339 time with its offset, e.g. 2027-01-31T00:00:00Z');
  if (at.getTime() <= now.getTime()) throw new AppError('invalid_input', 'expires must be in the future');
  return at;
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A rotation's overlap may not outlive a year: a forgotten old key must stop working some day. */
const MAX_OVERLAP_MS = 366 * UNIT_MS.d;

/** `--overlap 7d` (also `12h`, `30m`, `90s`, `0`): how long the old key keeps working after a rotation. */
export function parseOverlap(text: string | null | undefined): number {
  if (text === null || text === undefined || text === '') return 7 * UNIT_MS.d;
  const match = /^(\d{1,6})([smhd])?$/.exec(text.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] ?? 's'] : NaN;
  if (!match || (match[2] === undefined && match[1] !== '0') || ms > MAX_OVERLAP_MS) {
    throw new AppError('invalid_input', 'overlap must be a duration like 7d, 12h, 30m, 90s or 0, at most 366d');
  }
  return ms;
}

/** Whether a key may ask for this format on some address (/api/me lists only those). */
export const allowsFormat = (scopes: KeyScopes | null, format: string): boolean => !scopes?.formats || scopes.formats.includes(format);

/** Whether a key may ask for this profile (/api/me lists only those). */
export const allowsProfile = (scopes: KeyScopes | null, profileId: number): boolean => !scopes?.profiles || scopes.profiles.includes(profileId);
