import type { FastifyInstance } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import type { Database } from '../../domain/records.js';
import { firstString, publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { meSchema } from '../schemas/me.js';

/** Address 1 of CONTRACT §3. */
export function registerMeRoute(
  app: FastifyInstance,
  db: Database,
  gate: RequestGate,
  publicBase: (host: string | undefined, protocol: string) => string,
  formats: readonly string[],
): void {
  publicRoute(app, '/api/me', meSchema, async (request, reply) => {
    const presented = firstString(request.headers['x-api-key']);
    const lookup = await gate.admit(request, () => authenticate(db, presented));
    const profiles = await db.profiles.list(lookup.store.id);
    const base = publicBase(request.headers.host, request.protocol);
    const list = lookup.latest;
    reply.header('Cache-Control', 'no-store');
    return {
      store: { id: lookup.store.id, name: lookup.store.name, currency: lookup.store.currency },
      key: {
        id: lookup.key.id,
        label: lookup.key.label,
        prefix: lookup.key.prefix,
        created_at: lookup.key.created_at.toISOString(),
        last_used_at: lookup.key.last_used_at?.toISOString() ?? null,
      },
      price_list: list && {
        version: list.version,
        published_at: list.published_at.toISOString(),
        item_count: list.item_count,
        available_count: list.available_count,
      },
      profiles: profiles.map((p) => ({ id: p.id, name: p.name })),
      formats: [...formats],
      exports: {
        campaign_data: `${base}/WebApi/CampaignDataLatestGet/{api_key}`,
        export_latest: `${base}/api/export/latest?key={api_key}`,
        summary: `${base}/WebApi/SummaryExportLatestGet/{api_key}`,
      },
    };
  });
}
