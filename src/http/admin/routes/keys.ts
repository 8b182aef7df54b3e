import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { importKey, issueKey, listKeys, revokeKey } from '../../../domain/keys.js';
import type { Database } from '../../../domain/records.js';
import { importKeySchema, issueKeySchema, revokeKeySchema, storeSchema } from '../schemas.js';
import { keyView } from '../views.js';

/** API keys: issue (the value is shown in this one answer), import a predecessor's, list, revoke. */
export function registerKeyRoutes(parent: FastifyInstance, db: Database): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/admin/stores/:id/keys', {
    schema: issueKeySchema,
    // No body at all is an unlabelled key, the same as `{}`.
    preValidation: async (request) => { request.body ??= {}; },
  }, async (request, reply) => {
    const issued = await issueKey(db, request.params.id, request.body?.label ?? null);
    // The only place the value ever leaves the service: no cache or proxy may keep a copy.
    return reply.code(201).header('Cache-Control', 'no-store').send({ ...keyView(issued.record), value: issued.value });
  });

  app.post('/admin/stores/:id/keys/import', { schema: importKeySchema }, async (request, reply) => {
    const record = await importKey(db, request.params.id, request.body.value, request.body.label ?? null);
    return reply.code(201).header('Cache-Control', 'no-store').send(keyView(record));
  });

  app.get('/admin/stores/:id/keys', { schema: storeSchema }, async (request) => ({
    keys: (await listKeys(db, request.params.id)).map(keyView),
  }));

  // Revoking twice keeps the first revoked_at and answers 200 again: a retry is harmless.
  app.post('/admin/keys/:id/revoke', { schema: revokeKeySchema }, async (request) => keyView(await revokeKey(db, request.params.id)));
}
