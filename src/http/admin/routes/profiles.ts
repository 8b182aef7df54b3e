import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { putProfile } from '../../../domain/profiles.js';
import { getStoreOrFail } from '../../../domain/stores.js';
import type { Database } from '../../../domain/records.js';
import { createProfileSchema, replaceProfileSchema, storeSchema } from '../schemas.js';
import { profileView } from '../views.js';

/** Export profiles: create (PUT on the collection, like `profile put` without --id), replace, list. */
export function registerProfileRoutes(parent: FastifyInstance, db: Database): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.put('/admin/stores/:id/profiles', { schema: createProfileSchema }, async (request, reply) => {
    const profile = await putProfile(db, request.params.id, request.body);
    return reply.code(201).send(profileView(profile));
  });

  app.put('/admin/stores/:id/profiles/:profileId', { schema: replaceProfileSchema }, async (request) => {
    const profile = await putProfile(db, request.params.id, request.body, Number(request.params.profileId));
    return profileView(profile);
  });

  app.get('/admin/stores/:id/profiles', { schema: storeSchema }, async (request) => {
    await getStoreOrFail(db, request.params.id);
    return { profiles: (await db.profiles.list(request.params.id)).map(profileView) };
  });
}
