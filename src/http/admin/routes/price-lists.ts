import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config/config.js';
import { sourceFormatOf } from '../../../domain/publication-source.js';
import { sourceEncodingOf, type SourceEncoding } from '../../../domain/text-decoding.js';
import { publishPriceList, readPublication } from '../../../domain/publishing.js';
import { AppError, isAppError } from '../../../errors/app-error.js';
import type { Database } from '../../../domain/records.js';
import { publishQuery, publishSchema } from '../schemas.js';
import { publicationView } from '../views.js';

/** What a publication's body may be (CONTRACT §9): a JSON array or {"items": [...]}, NDJSON, or CSV. */
export const PUBLISH_MEDIA_TYPES = ['application/json', 'application/x-ndjson', 'application/ndjson', 'application/jsonl', 'text/csv'] as const;

/**
 * POST /admin/stores/:id/price-lists. Registered in its own scope, because here the JSON
 * parser is replaced by a pass-through: the handler reads the request stream itself, row by
 * row into a draft, never holding the file (a feed of millions of rows is gigabytes). There is
 * no body limit: Fastify enforces one only on bodies it reads itself, and the caller is the
 * token-holding repricer on loopback; memory stays flat whatever the size.
 */
export async function registerPriceListRoutes(parent: FastifyInstance, db: Database, config: Readonly<Config>): Promise<void> {
  await parent.register(async (scope) => {
    // Fastify's own parsers (JSON, text/plain) would buffer the body or hand over a string.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([...PUBLISH_MEDIA_TYPES], (_request, payload, done) => done(null, payload));
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/admin/stores/:id/price-lists', { schema: { ...publishSchema, querystring: publishQuery } }, async (request, reply) => {
      const body = request.body as IncomingMessage | undefined;
      if (!body) throw new AppError('invalid_parameter', `send the price list as the body, with Content-Type ${PUBLISH_MEDIA_TYPES.join(', ')}`);
      const contentType = request.headers['content-type'] ?? '';
      const format = sourceFormatOf(contentType);
      const encoding = charsetOf(contentType);
      try {
        const force = request.query.force === 'true' || request.query.force === '1';
        const rows = readPublication(db, body, format, { encoding, maxLineBytes: config.maxLineBytes });
        const published = await publishPriceList(db, request.params.id, failingWhenCutOff(rows, body), {
          force, keepVersions: config.historyVersions, maxFieldChars: config.maxFieldChars, metrics: scope.metrics,
        });
        // 202: stored as a held version, not served until released (CONTRACT §10). The feed
        // check's counts ride along as warnings; they never refuse a publication (CONTRACT §14).
        return reply.code(published.state === 'held' ? 202 : 201).send({ ...publicationView(published, published.state, 'publish', published.diff), warnings: published.warnings });
      } catch (error) {
        // A client that went away mid-upload is not a server fault: no 500, no error log line.
        throw withProblemList(!isAppError(error) && !body.complete ? cutOff() : error);
      }
    });
  });
}

/** `charset=` of the Content-Type: UTF-8 unless the publisher names windows-1251; any other charset is refused. */
function charsetOf(contentType: string): SourceEncoding {
  const named = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1];
  if (named === undefined) return 'utf-8';
  const encoding = sourceEncodingOf(named);
  if (encoding === null) throw withProblemList(new AppError('invalid_publication', `charset "${named.slice(0, 40)}" is not supported; send utf-8 or windows-1251`));
  return encoding;
}

/** A file-level refusal (not JSON at all, an unknown CSV column) answers with the same `problems` list as row-level ones. */
function withProblemList(error: unknown): unknown {
  if (!isAppError(error) || error.code !== 'invalid_publication' || error.extra.problems) return error;
  const position = /^(line \d+|items\[\d+\])/.exec(error.detail)?.[0] ?? 'file';
  return new AppError('invalid_publication', error.detail, { problems: [{ position, reason: error.detail }], problemCount: 1 });
}

const cutOff = () => new AppError('invalid_publication', 'the upload ended before the body was complete; nothing was published');

/**
 * The rows, failing as soon as the request closes before its end. The CSV and JSON readers
 * do not always pass a source's failure on (a piped stream's error stays with its source), so
 * without this a cut-off upload would wait forever and its draft would never be dropped.
 */
async function* failingWhenCutOff<T>(rows: AsyncIterable<T>, body: IncomingMessage): AsyncIterable<T> {
  let onClose = () => {};
  const closedEarly = new Promise<never>((_resolve, reject) => {
    onClose = () => { if (!body.complete) reject(cutOff()); };
    if (body.destroyed) onClose();
    else body.once('close', onClose);
  });
  closedEarly.catch(() => {}); // observed through the race below; never an unhandled rejection
  const iterator = rows[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), closedEarly]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    body.off('close', onClose);
  }
}
