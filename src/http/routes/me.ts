import type { FastifyInstance } from 'fastify';
import { allowsFormat, allowsProfile, opensAddress } from '../../domain/key-scopes.js';
import { storeVersions } from '../../domain/versions.js';
import type { Database } from '../../domain/records.js';
import { admitKey } from '../key-access.js';
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
    const lookup = await admitKey(request, db, gate, { address: 'me', fromAddress: firstString(request.headers['x-api-key']), basic: true });
    const [profiles, versions, consumers] = await Promise.all([
      db.profiles.list(lookup.store.id), storeVersions(db, lookup.store.id), app.deliveries.consumers(lookup.store.id, lookup.latest),
    ]);
    const base = publicBase(request.headers.host, request.protocol);
    const list = lookup.latest;
    const scopes = lookup.key.scopes;
    reply.header('Cache-Control', 'no-store');
    return {
      store: { id: lookup.store.id, name: lookup.store.name, currency: lookup.store.currency },
      key: {
        id: lookup.key.id,
        label: lookup.key.label,
        prefix: lookup.key.prefix,
        created_at: lookup.key.created_at.toISOString(),
        last_used_at: lookup.key.last_used_at?.toISOString() ?? null,
        // Null per dimension: not limited (CONTRACT §15). The lists below show only what the key opens.
        scopes: { addresses: scopes?.addresses ?? null, formats: scopes?.formats ?? null, profiles: scopes?.profiles ?? null },
        expires_at: lookup.key.expires_at?.toISOString() ?? null,
      },
      price_list: list && {
        version: list.version,
        published_at: list.published_at.toISOString(),
        item_count: list.item_count,
        available_count: list.available_count,
      },
      versions: versions.map((v) => ({
        version: v.version, published_at: v.published_at.toISOString(), item_count: v.item_count, available_count: v.available_count, state: v.state, source: v.source,
      })),
      profiles: profiles.filter((p) => allowsProfile(scopes, p.id)).map((p) => ({ id: p.id, name: p.name })),
      formats: formats.filter((f) => allowsFormat(scopes, f)),
      consumers: consumers.map(({ failing: _failing, ...c }) => ({ ...c, last_fetch_at: c.last_fetch_at.toISOString() })),
      exports: {
        ...(opensAddress(scopes, 'prices') && {
          campaign_data: `${base}/WebApi/CampaignDataLatestGet/{api_key}`,
          export_latest: `${base}/api/export/latest?key={api_key}`,
        }),
        ...(opensAddress(scopes, 'summary') && allowsFormat(scopes, 'xlsx') && { summary: `${base}/WebApi/SummaryExportLatestGet/{api_key}` }),
        // CONTRACT §11: {version} is the version the importer holds (X-Price-List-Version of its last download).
        ...(opensAddress(scopes, 'changes') && { changes: `${base}/api/export/changes?key={api_key}&since={version}` }),
      },
    };
  });
}
