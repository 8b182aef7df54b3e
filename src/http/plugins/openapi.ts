import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../../config/config.js';
import { ADDRESS_ERROR_CODES, ERROR_CODES, PUBLIC_ERROR_CODES, type ErrorCode } from '../../errors/codes.js';
import { ProblemSchema } from '../schemas/problem.js';
import { FeedCheckSchema } from '../schemas/feed-check.js';
import { MeSchema } from '../schemas/me.js';
import { ConsumerSchema, DeliveriesSchema } from '../schemas/deliveries.js';

/** When each public code answers: CONTRACT §4's table, in the words a key holder needs. */
const WHEN: Partial<Record<ErrorCode, string>> = {
  invalid_parameter: 'bad `format`, `only_available`, `profile_id`, `version` or `since` (missing, not a positive integer, or beyond the latest version); `detail` names the parameter and the allowed values',
  missing_key: 'no key given (no `X-Api-Key` header, an empty path segment, no `key` parameter, no Basic password); every 401 carries `WWW-Authenticate: ApiKey, Basic realm="price-export", charset="UTF-8"`',
  invalid_key: 'no such key (malformed, wrong checksum, unknown), or Basic credentials that cannot be read (not base64, no colon, nothing after `Basic`)',
  revoked_key: 'the key was revoked; ask the store for a new one',
  expired_key: 'the key has expired (its `expires_at`, or the end of a rotation\'s overlap); ask the store for a new one',
  key_scope: "the key is right but does not open this: another address, format or profile than its scopes allow (`/api/me` shows them); `detail` names what the key may do",
  profile_not_found: "unknown profile, or another store's (answered alike)",
  price_list_not_found: 'the store has not published a price list yet',
  version_not_found: 'addresses 2 and 4 with `version=N`: that version is unknown, no longer kept, or held',
  since_too_old: '`/api/export/changes`: the version in `since` is no longer kept (or was published before the changes feed existed); download the whole list and ask for changes since its `X-Price-List-Version` next time',
  not_found: 'no such address',
  method_not_allowed: 'anything but GET or HEAD; the `Allow` header lists them',
  range_not_satisfiable: 'a `Range` that starts past the end of the file; `Content-Range: bytes */<size>` gives the size',
  rate_limited: 'too many requests for this store, or too many wrong keys from one client; wait `Retry-After` seconds',
  internal_error: 'never expected; logged with a request id',
  unavailable: 'shutting down or the database is unreachable; retry after `Retry-After` seconds',
};

/** The rows problem `type` URLs point at (`/docs#error-<code>`): only the codes a key holder can meet. */
const ERROR_TABLE = [...PUBLIC_ERROR_CODES, ...ADDRESS_ERROR_CODES].map(
  (code) => `| <a id="error-${code}"></a>\`${code}\` | ${ERROR_CODES[code].status} | ${ERROR_CODES[code].title} | ${WHEN[code] ?? ''} |`,
).join('\n');

const DESCRIPTION =
  "Download a store's latest price list (CSV, TSV, XLSX, JSON, XML, YML, CommerceML, Google Merchant) and the summary matrix with the store's API key. " +
  'Every address answers GET, and HEAD the same without a body.\n\n' +
  '**Only what changed.** Every file carries `X-Price-List-Version`. Keep it, and next time ask `/api/export/changes?key=…&since=<that version>` ' +
  '(same `format`, `profile_id` and `only_available`): the items added or changed since, and the offer_ids removed. On 410 `since_too_old`, download the whole list again and go on from its version.\n\n' +
  'The key travels in the `X-Api-Key` header (`/api/me`: press **Authorize**), in the last path segment (legacy addresses) or in the `key` query parameter ' +
  '(type it into the operation\'s parameters); `/api/me` and the `key=` addresses also take it as the password of HTTP Basic, which keeps it out of the address and out of proxy logs. ' +
  'A key may be limited to some addresses (`prices`, `summary`, `changes`, `me`), formats and profiles, and may expire: outside its scopes it gets 403 `key_scope`. The page at `/` builds these addresses for a key and previews what they return.\n\n' +
  'Every error is RFC 9457 problem details (`application/problem+json`) with a `code`; its `type` points at the row below.\n\n' +
  '| code | status | title | when |\n|---|---|---|---|\n' +
  ERROR_TABLE +
  '\n\n**Where the contract leaves a choice** (also in the README):\n\n' +
  [
    'A key starting with `pex_` must be a well-formed new key with a valid checksum, or it is refused (401 `invalid_key`) without a database look-up.',
    'ETags are strong and differ per content coding (`"v3-…"`, `"v3-…-gzip"`, `"v3-…-br"`); `If-None-Match` matches any of them. `If-None-Match` wins over `If-Modified-Since`.',
    'Rate limits count whole clock minutes. Only a wrong, revoked or expired key (or unreadable Basic credentials) counts against the client address; a missing key does not. A client over its wrong-key limit is refused even with a right key. A 403 `key_scope` comes from a right key: it counts against the store\'s quota, never as a wrong key.',
    'Key scopes: the scope check runs after the key and before the parameters. A valid `format` is judged by the scope (absent: the address\'s default, so a key limited to `yml` gets 403 for the legacy CSV); a malformed `format` or `profile_id` is judged by the parameter check (400) once the address is allowed. A key limited to profiles must name one in `profile_id`. The feed check (`/api/export/check`) is part of the `prices` address. A key limited to formats without `xlsx` cannot open the summary.',
    'HTTP Basic: `/api/me` and the addresses with `key=` take the key as the Basic password (any user name). A key in both the header and the address (or `X-Api-Key`) must be the same key, else 400 `invalid_parameter`. An empty password counts as no key in the header; other `Authorization` schemes are ignored.',
    'A key expires at its `expires_at` exactly: from that instant on it gets 401 `expired_key`.',
    'XML and YML drop characters XML 1.0 cannot carry; publishing refuses them in the first place (only tab, LF and CR among control characters).',
    'YML: items without a category go under one default category named `Other`; category ids never change for a path.',
    'YML follows Yandex\'s `shops.dtd` (element order, required elements): a store without a url gets an empty shop `<url>`. An `only_available` YML with nothing available has an empty `<offers>`, and a currency outside the DTD\'s list is written as published.',
    'XLSX: booleans are TRUE/FALSE cells; a sheet past Excel\'s 1,048,575 data rows continues on `Prices (2)` (`Matrix (2)`, `Offers (2)`).',
    'Summary: rank and gap are empty for a product without competitor prices; `difference` is our price minus theirs, `difference_%` relative to theirs; price indices skip products whose price is 0.',
    'Changes feed: every line names its offer_id (a profile without an offer_id column gets it first); a removed offer is printed with the values of version `since`; ndjson always ends with its `{"removed":[…]}` line; a version published before the feed existed answers 410 `since_too_old`.',
    'While shutting down, the service answers new requests 503 with `Retry-After` and finishes downloads in progress.',
  ]
    .map((line) => `- ${line}`)
    .join('\n');

/**
 * Swagger UI draws the description after the page has loaded, so the browser's own jump to
 * the `#error-<code>` a problem's `type` names finds nothing: jump once the row is there.
 */
const ERROR_ANCHOR_JS = `(function () {
  function jump() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!/^error-[a-z_]+$/.test(id)) return;
    var tries = 0;
    (function look() {
      var target = document.getElementById(id);
      if (!target) {
        if (++tries < 100) setTimeout(look, 100);
        return;
      }
      // Not :target: the browser set none, the row did not exist when it looked.
      document.querySelectorAll('tr.error-target').forEach(function (row) { row.classList.remove('error-target'); });
      var row = target.closest('tr');
      if (row) row.classList.add('error-target');
      target.scrollIntoView({ block: 'center' });
    })();
  }
  window.addEventListener('hashchange', jump);
  jump();
})();
`;
const ERROR_ANCHOR_CSS = [
  // Swagger UI's own table rules leave the description's columns touching.
  '.swagger-ui .info .renderedMarkdown table thead tr th, .swagger-ui .info .renderedMarkdown table tbody tr td { padding: 6px 16px 6px 0; vertical-align: top; }',
  '.swagger-ui .info .renderedMarkdown tr.error-target { background: #fff3bf; }',
  '',
].join('\n');

/**
 * The docs page's policy: every asset from this server (the UI ships in the package, no CDN),
 * "Try it out" only against this origin or PUBLIC_URL's. Scripts only from files; styles may
 * be inline because Swagger UI's React tree renders a <style> element (a style cannot run code).
 */
function docsCsp(config: Readonly<Config>): string {
  const apiOrigin = config.publicUrl ? ` ${new URL(config.publicUrl).origin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src 'self'${apiOrigin}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** /openapi.json and the interactive /docs, both generated from the route schemas; the UI's assets come from the package (no CDN). */
export async function registerOpenApi(app: FastifyInstance, config: Readonly<Config>): Promise<void> {
  app.addSchema(ProblemSchema);
  app.addSchema(ConsumerSchema);
  app.addSchema(MeSchema);
  app.addSchema(FeedCheckSchema);
  app.addSchema(DeliveriesSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'price-export', version: '1.0.0', description: DESCRIPTION },
      // "Try it out" calls `servers[0]` + the path: the public URL, or this server's base path on the page's own origin.
      servers: [{ url: config.publicUrl ?? (config.basePath || '/') }],
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          Basic: { type: 'http', scheme: 'basic', description: 'Any user name, the API key as the password. Taken by `/api/me` and the addresses with `key=`.' },
        },
      },
    },
    // Each public address answers GET and HEAD from one route, which would list every operation
    // twice under one operationId (an invalid document, and noise in /docs): list GET only;
    // the description says HEAD answers the same.
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      for (const item of Object.values(document.paths ?? {})) delete (item as { head?: unknown }).head;
      return document;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The page's asset links are absolute; without this they miss BASE_PATH.
    indexPrefix: config.basePath,
    // No online validator badge: the page must not call out.
    validatorUrl: false,
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, validatorUrl: null, persistAuthorization: false, displayOperationId: true },
    theme: {
      title: 'price-export API',
      js: [{ filename: 'error-anchors.js', content: ERROR_ANCHOR_JS }],
      css: [{ filename: 'error-anchors.css', content: ERROR_ANCHOR_CSS }],
    },
    staticCSP: docsCsp(config),
  });
  // The schema at the address the contract names (the UI plugin serves it under /docs/json too).
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
