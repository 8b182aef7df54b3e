import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { getGuard, setGuard } from '../../../domain/guard.js';
import { discardHeld, listVersions, releaseHeld, releaseQuarantine, rollback, showQuarantine } from '../../../domain/versions.js';
import { AppError } from '../../../errors/app-error.js';
import { formatMoney } from '../../../model/money.js';
import type { Database } from '../../../domain/records.js';
import { guardSchema, quarantineReleaseSchema, rollbackSchema, storeSchema, versionSchema } from '../schemas.js';
import { publicationView, versionView } from '../views.js';

const money = (cents: number | null) => (cents === null ? null : formatMoney(cents));

/**
 * Versions, the guard, quarantine and rollback (CONTRACT §10), the same operations as the
 * command line. `keepVersions` is HISTORY_VERSIONS.
 */
export function registerVersionRoutes(parent: FastifyInstance, db: Database, keepVersions: number): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/admin/stores/:id/versions', { schema: storeSchema }, async (request) => ({
    versions: (await listVersions(db, request.params.id)).map(versionView),
  }));

  app.get('/admin/stores/:id/versions/:version', { schema: versionSchema }, async (request) => {
    const version = Number(request.params.version);
    const found = (await listVersions(db, request.params.id)).find((v) => v.version === version);
    if (!found) throw new AppError('version_not_found', `store "${request.params.id}" has no version ${version} (unknown or no longer kept)`);
    return versionView(found);
  });

  app.post('/admin/stores/:id/versions/:version/release', { schema: versionSchema }, async (request) => {
    const { list, diff } = await releaseHeld(db, request.params.id, Number(request.params.version), keepVersions);
    return publicationView(list, 'latest', 'publish', diff);
  });

  app.post('/admin/stores/:id/versions/:version/discard', { schema: versionSchema }, async (request) => {
    await discardHeld(db, request.params.id, Number(request.params.version));
    return { version: Number(request.params.version), discarded: true };
  });

  app.post('/admin/stores/:id/rollback', {
    schema: rollbackSchema,
    preValidation: async (request) => { request.body ??= {}; },
  }, async (request, reply) => {
    const { list, diff, restored } = await rollback(db, request.params.id, request.body?.to ?? null, keepVersions);
    return reply.code(201).send({ ...publicationView(list, 'latest', 'rollback', diff), restored });
  });

  app.get('/admin/stores/:id/guard', { schema: storeSchema }, async (request) => getGuard(db, request.params.id));

  app.put('/admin/stores/:id/guard', { schema: guardSchema }, async (request) => setGuard(db, request.params.id, request.body as Record<string, unknown>));

  app.get('/admin/stores/:id/quarantine', { schema: storeSchema }, async (request) => {
    const { count, items } = await showQuarantine(db, request.params.id);
    return { count, items: items.map((i) => ({ offer_id: i.offer_id, check: i.check, served_price: money(i.old_price), proposed_price: money(i.new_price) })) };
  });

  app.post('/admin/stores/:id/quarantine/release', { schema: quarantineReleaseSchema }, async (request, reply) => {
    const { offers, all } = request.body;
    if ((offers === undefined) === (all === undefined)) throw new AppError('invalid_input', 'send either "offers": [offer_id, …] or "all": true');
    const { list, diff } = await releaseQuarantine(db, request.params.id, offers ?? null, keepVersions);
    return reply.code(201).send(publicationView(list, 'latest', 'publish', diff));
  });
}
