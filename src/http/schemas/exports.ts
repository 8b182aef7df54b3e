import { Type } from 'typebox';
import { PUBLIC_ERROR_CODES, type ErrorCode } from '../../errors/codes.js';
import { problemResponses } from './problem.js';

const formatParam = (formats: readonly string[], fallback: string) =>
  Type.Optional(Type.String({ enum: [...formats], description: `One of ${formats.join(', ')}, any case. Absent or empty: ${fallback}.` }));

const commonQuery = (formats: readonly string[], fallback: string) => ({
  format: formatParam(formats, fallback),
  only_available: Type.Optional(
    Type.String({ enum: ['true', 'false', '1', '0', 'yes', 'no'], description: 'Keep only items with available = true. Also 1/0, yes/no, any case.' }),
  ),
  profile_id: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,18}$', description: "An export profile of this key's store; another store's profile, or an id above 9007199254740991, answers 404 like an unknown one." }),
  ),
});

/** `version=N` on addresses 2 and 4 (CONTRACT §10). */
const versionQuery = {
  version: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,8}$',
      description:
        'A retained version of the price list (GET /api/me lists them under `versions`), in any format, profile and filter, with its own ETag. ' +
        'Absent: the latest. An unknown, deleted or held version answers 404 `version_not_found`.',
    }),
  ),
};

/** Basic is optional where the key may also travel in `key=` (an empty requirement: no scheme needed). */
export const BASIC_OR_QUERY_KEY = [{ Basic: [] }, {}] as Record<string, string[]>[];

const FILE_TYPES = {
  'text/csv': { schema: { type: 'string' }, example: 'offer_id,name,price,old_price,currency,available,quantity,url\r\n' },
  'text/tab-separated-values': { schema: { type: 'string' } },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } },
  'application/json': { schema: { type: 'object' } },
  'application/xml': { schema: { type: 'string' } },
};

const fileResponses = (description: string, types: Record<string, unknown>, codes: readonly ErrorCode[] = PUBLIC_ERROR_CODES) => ({
  200: {
    description:
      `${description} Headers: ETag and Last-Modified (a conditional request answers 304), Content-Disposition: attachment, Cache-Control: private, no-cache; br/gzip on request (by q-value, br first when equal). ` +
      'Last-Modified is the later of the publication time and the last edit of the profile used (a profile edit changes the file); the file name and the YML `date` keep the publication time. ' +
      'Each content coding has its own strong ETag, and one ETag always names the same bytes (the first, streamed answer and every later one).',
    content: types,
  },
  206: {
    description:
      'Partial content: a single `Range: bytes=…` of a file the service has already rendered (`Accept-Ranges: bytes`, `Content-Range`; ' +
      '`If-Range` with the ETag). Several ranges, or a file still being rendered, get the whole file (200).',
  },
  304: { description: 'Not modified: the If-None-Match / If-Modified-Since copy is current (answered only after the key is checked).' },
  ...problemResponses(codes),
});

const PRICE_LIST_CODES: readonly ErrorCode[] = [...PUBLIC_ERROR_CODES, 'version_not_found'];

const notes =
  "Checks run in this order, the first failure answers: method (405), key (401), the key's scope (403 key_scope), parameters (400), profile (404), price list (404). " +
  "A key limited to formats is judged by the format asked for, or the address's default when none is; a key limited to profiles must name one of them in `profile_id`. " +
  'Unknown parameters are ignored; an empty value counts as absent; a parameter given twice counts with its first value.';

/** The schema of address 2; `formats` are the registry's (the export service's). */
export const campaignDataSchema = (formats: readonly string[]) => ({
  operationId: 'campaignDataLatestGet',
  tags: ['Exports'],
  summary: 'Latest price list (legacy address, key in the path)',
  description: `Without parameters: the frozen legacy CSV, byte for byte. The path matches in any letter case and with a trailing slash. ${notes}`,
  params: Type.Object({ api_key: Type.String({ description: 'The API key (a pex_… key or a key carried over from the predecessor)' }) }),
  querystring: Type.Object({ ...commonQuery(formats, 'legacy CSV'), ...versionQuery }),
  response: fileResponses('The price list file.', FILE_TYPES, PRICE_LIST_CODES),
});

/** The schema of address 4. */
export const exportLatestSchema = (formats: readonly string[]) => ({
  operationId: 'exportLatest',
  tags: ['Exports'],
  summary: 'Latest price list (key in the query)',
  description: `Without parameters: the frozen legacy CSV, byte for byte. ${notes}`,
  querystring: Type.Object({ key: Type.Optional(Type.String({ description: 'The API key (or send it as the Basic password)' })), ...commonQuery(formats, 'legacy CSV'), ...versionQuery }),
  // The key in `key=` (described above) or as the password of HTTP Basic; both at once must be the same key (else 400).
  security: BASIC_OR_QUERY_KEY,
  response: fileResponses('The price list file.', FILE_TYPES, PRICE_LIST_CODES),
});

export const summaryExportSchema = {
  operationId: 'summaryExportLatestGet',
  tags: ['Exports'],
  summary: 'Summary matrix workbook: our prices against competitors (key in the path)',
  description: `An XLSX workbook with the sheets Matrix, Offers and Summary, built from the latest price list's competitor prices. ${notes}`,
  params: Type.Object({ api_key: Type.String({ description: 'The API key' }) }),
  querystring: Type.Object(commonQuery(['xlsx'], 'xlsx')),
  response: fileResponses('The summary workbook.', {
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } },
  }),
};

const CHANGES_TYPES = {
  'application/json': { schema: { type: 'object' }, example: { since: 3, version: 5, published_at: '2026-11-22T07:00:00.000Z', changed: [], removed: ['A-17'] } },
  'application/x-ndjson': { schema: { type: 'string' } },
  'text/csv': { schema: { type: 'string' }, example: 'offer_id,name,price,old_price,currency,available,quantity,url,_action\r\nA-17,,,,,,,,delete\r\n' },
  'text/tab-separated-values': { schema: { type: 'string' } },
  'application/xml': { schema: { type: 'string' } },
};

/** The changes address (CONTRACT §11). */
export const exportChangesSchema = (formats: readonly string[]) => ({
  operationId: 'exportChanges',
  tags: ['Exports'],
  summary: 'What changed since a version you hold (key in the query)',
  description:
    'The items of the latest version that were added or changed since version `since`, and the offer_ids removed since then: an importer keeps ' +
    "`X-Price-List-Version` of each download and asks `since=` that version next time. \"Changed\" means a value the export shows differs (with a profile, its columns; the price always counts); " +
    'with `only_available=true` an item that became unavailable is a removal. A quarantined item counts by the value served. ' +
    'Headers `X-Price-List-Version` (the latest) and `X-Since-Version`. `since` = the latest: 200 with nothing changed; older than the kept history: 410 `since_too_old` ' +
    '(download the whole list); beyond the latest or not a positive integer: 400. ' +
    'json: `{since, version, published_at, changed: [items], removed: [offer_id…]}`; ndjson: an item per line, then `{"removed":[…]}`; csv/tsv: the columns plus `_action` ' +
    '(`upsert`, or `delete` with only the offer_id); xml: `<changes since version>` with `<item>` and `<removed offer_id/>`; yml: a whole YML feed of the changed offers, ' +
    'removed ones as `<offer available="false">` with the values of version `since`. Each line always carries the offer_id (a profile without it gets it as the first column). ' +
    `${notes}`,
  querystring: Type.Object({
    key: Type.Optional(Type.String({ description: 'The API key (or send it as the Basic password)' })),
    since: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'The version you hold: `X-Price-List-Version` of your last download (or `price_list.version` in json).' }),
    ...commonQuery(formats, 'json'),
  }),
  security: BASIC_OR_QUERY_KEY,
  response: fileResponses('The changes.', CHANGES_TYPES, [...PUBLIC_ERROR_CODES, 'since_too_old']),
});
