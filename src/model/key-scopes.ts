/**
 * What a key may open (CONTRACT §15): the shared vocabulary of the storage, the domain and
 * HTTP. A dimension that is `null` is not limited; a key whose every dimension is null (stored
 * as no scopes at all) opens everything, as keys did before scopes existed.
 */

/** The public addresses a key's scope names: 2 and 4 are `prices`, 3 `summary`, 1 `me`, §11 `changes`. */
export const KEY_ADDRESSES = ['prices', 'summary', 'changes', 'me'] as const;
export type KeyAddress = (typeof KEY_ADDRESSES)[number];

/**
 * Every format a scope may name: the export formats (formats/types.ts; a unit test keeps the
 * two lists in step) and the delta's `ndjson` (§11). Written out here because the model may
 * not import the writers.
 */
export const SCOPE_FORMATS = ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml', 'commerceml', 'google', 'ndjson'] as const;

export interface KeyScopes {
  addresses: KeyAddress[] | null;
  /** Lower-case format names from SCOPE_FORMATS. */
  formats: string[] | null;
  /** Profile ids of the key's store. A key limited to profiles must name one of them in every export. */
  profiles: number[] | null;
}

export const UNLIMITED: Readonly<KeyScopes> = Object.freeze({ addresses: null, formats: null, profiles: null });

export const isUnlimited = (scopes: KeyScopes | null): boolean =>
  scopes === null || (scopes.addresses === null && scopes.formats === null && scopes.profiles === null);

/** The stored form (one text column in both dialects): null when nothing is limited. */
export const scopesToJson = (scopes: KeyScopes | null): string | null => (isUnlimited(scopes) ? null : JSON.stringify(scopes));

export function scopesFromJson(text: unknown): KeyScopes | null {
  if (typeof text !== 'string' || text === '') return null;
  const parsed = JSON.parse(text) as Partial<KeyScopes>;
  return { addresses: parsed.addresses ?? null, formats: parsed.formats ?? null, profiles: parsed.profiles ?? null };
}
