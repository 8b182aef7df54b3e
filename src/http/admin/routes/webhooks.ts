import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config/config.js';
import { addWebhook, listWebhooks, removeWebhook } from '../../../domain/webhooks.js';

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

const addWebhookSchema = {
  params: Type.Object({ id: Text(64) }),
  body: Type.Object({ url: Text(2000), events: Type.Optional(Type.Array(Text(64), { maxItems: 10 })) }, { additionalProperties: false }),
};
const storeParams = { params: Type.Object({ id: Text(64) }) };
const webhookParams = { params: Type.Object({ id: Text(64) }) };

/** What the admin API shows of a webhook: never its secret (that is in the answer to `add` alone). */
type WebhookRecord = Awaited<ReturnType<typeof listWebhooks>>[number];

const webhookView = (h: WebhookRecord) => ({
  id: h.id, store_id: h.store_id, url: h.url, events: h.events, created_at: h.created_at.toISOString(),
  failing: h.failing_since !== null, failing_since: h.failing_since?.toISOString() ?? null, last_error: h.last_error,
});

/** Webhooks (CONTRACT §13): add (the secret is shown in this one answer), list, remove. */
export function registerWebhookRoutes(parent: FastifyInstance, store: Parameters<typeof addWebhook>[0], config: Readonly<Config>): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const policy = { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivate };

  app.post('/admin/stores/:id/webhooks', { schema: addWebhookSchema }, async (request, reply) => {
    const added = await addWebhook(store, { storeId: request.params.id, url: request.body.url, events: request.body.events }, policy);
    return reply.code(201).header('Cache-Control', 'no-store').send({ ...webhookView(added.record), secret: added.secret });
  });

  app.get('/admin/stores/:id/webhooks', { schema: storeParams }, async (request) => ({
    webhooks: (await listWebhooks(store, request.params.id)).map(webhookView),
  }));

  app.delete('/admin/webhooks/:id', { schema: webhookParams }, async (request, reply) => {
    await removeWebhook(store, request.params.id);
    return reply.code(204).send();
  });
}
