import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createStore, getStoreOrFail } from '../../../domain/stores.js';
import type { Database } from '../../../domain/records.js';
import { createStoreSchema, storeSchema } from '../schemas.js';
import { priceListView, storeView } from '../views.js';

/** Stores: create, list, and one store with its latest price list. */
export function registerStoreRoutes(parent: FastifyInstance, db: Database): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/admin/stores', { schema: createStoreSchema }, async (request, reply) => {
    const created = await createStore(db, request.body);
    return reply.code(201).send(storeView(created));
  });

  app.get('/admin/stores', async () => ({ stores: (await db.stores.list()).map(storeView) }));

  app.get('/admin/stores/:id', { schema: storeSchema }, async (request) => {
    const found = await getStoreOrFail(db, request.params.id);
    const latest = await db.priceLists.latest(found.id);
    return { ...storeView(found), price_list: latest && priceListView(latest) };
  });
}
