/**
 * The one error table: every code the service answers with, its HTTP status and title.
 * The problem+json renderer, the OpenAPI responses and the CLI all read from here.
 */
export const ERROR_CODES = {
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  missing_key: { status: 401, title: 'API key missing' },
  invalid_key: { status: 401, title: 'API key invalid' },
  revoked_key: { status: 401, title: 'API key revoked' },
  expired_key: { status: 401, title: 'API key expired' },
  key_scope: { status: 403, title: 'Outside the API key\'s scope' },
  profile_not_found: { status: 404, title: 'Export profile not found' },
  price_list_not_found: { status: 404, title: 'No price list published yet' },
  version_not_found: { status: 404, title: 'Price list version not found' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
  // The internal side (CLI and admin API) only.
  unauthorized: { status: 401, title: 'Admin token missing or wrong' },
  store_not_found: { status: 404, title: 'Store not found' },
  key_not_found: { status: 404, title: 'API key not found' },
  webhook_not_found: { status: 404, title: 'Webhook not found' },
  store_exists: { status: 409, title: 'Store already exists' },
  key_exists: { status: 409, title: 'API key already exists' },
  invalid_input: { status: 422, title: 'Invalid input' },
  invalid_publication: { status: 422, title: 'Price list rejected' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  // Versions, the guard and rollback (CONTRACT §10).
  version_not_held: { status: 409, title: 'Version is not held' },
  version_is_latest: { status: 409, title: 'Version is already the latest' },
  not_quarantined: { status: 409, title: 'Items not quarantined' },
  invalid_guard: { status: 422, title: 'Guard value out of range' },
  // Changes since a version (CONTRACT §11): `since` is older than the retained history.
  since_too_old: { status: 410, title: 'Version too old for changes; download the full list' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes a public (key-holder) address can answer with; the OpenAPI document lists these. */
export const PUBLIC_ERROR_CODES: readonly ErrorCode[] = [
  'invalid_parameter', 'missing_key', 'invalid_key', 'revoked_key', 'expired_key', 'key_scope', 'profile_not_found',
  'price_list_not_found', 'not_found', 'method_not_allowed', 'range_not_satisfiable', 'rate_limited', 'internal_error', 'unavailable',
];

/** Codes only some public addresses answer: `version=N` (addresses 2 and 4) and the changes feed's `since`. */
export const ADDRESS_ERROR_CODES: readonly ErrorCode[] = ['version_not_found', 'since_too_old'];
