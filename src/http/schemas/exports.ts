import { Type } from 'typebox';
import { PUBLIC_ERROR_CODES } from '../../errors/codes.js';
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

const FILE_TYPES = {
  'text/csv': { schema: { type: 'string' }, example: 'offer_id,name,price,old_price,currency,available,quantity,url\r\n' },
  'text/tab-separated-values': { schema: { type: 'string' } },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } },
  'application/json': { schema: { type: 'object' } },
  'application/xml': { schema: { type: 'string' } },
};

const fileResponses = (description: string, types: Record<string, unknown>) => ({
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
  ...problemResponses(PUBLIC_ERROR_CODES),
});

const notes =
  'Checks run in this order, the first failure answers: method (405), key (401), parameters (400), profile (404), price list (404). ' +
  'Unknown parameters are ignored; an empty value counts as absent; a parameter given twice counts with its first value.';

/** The schema of address 2; `formats` are the registry's (the export service's). */
export const campaignDataSchema = (formats: readonly string[]) => ({
  operationId: 'campaignDataLatestGet',
  tags: ['Exports'],
  summary: 'Latest price list (legacy address, key in the path)',
  description: `Without parameters: the frozen legacy CSV, byte for byte. The path matches in any letter case and with a trailing slash. ${notes}`,
  params: Type.Object({ api_key: Type.String({ description: 'The API key (a pex_… key or a key carried over from the predecessor)' }) }),
  querystring: Type.Object(commonQuery(formats, 'legacy CSV')),
  response: fileResponses('The price list file.', FILE_TYPES),
});

/** The schema of address 4. */
export const exportLatestSchema = (formats: readonly string[]) => ({
  operationId: 'exportLatest',
  tags: ['Exports'],
  summary: 'Latest price list (key in the query)',
  description: `Without parameters: the frozen legacy CSV, byte for byte. ${notes}`,
  querystring: Type.Object({ key: Type.String({ description: 'The API key' }), ...commonQuery(formats, 'legacy CSV') }),
  response: fileResponses('The price list file.', FILE_TYPES),
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
