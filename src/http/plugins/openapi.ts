import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../../config/config.js';
import { ERROR_CODES } from '../../errors/codes.js';
import { ProblemSchema } from '../schemas/problem.js';
import { MeSchema } from '../schemas/me.js';

const ERROR_TABLE = Object.entries(ERROR_CODES)
  .map(([code, { status, title }]) => `| <a id="error-${code}"></a>\`${code}\` | ${status} | ${title} |`)
  .join('\n');

/** /openapi.json and the interactive /docs, both generated from the route schemas; the UI's assets come from the package (no CDN). */
export async function registerOpenApi(app: FastifyInstance, config: Readonly<Config>): Promise<void> {
  app.addSchema(ProblemSchema);
  app.addSchema(MeSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'price-export',
        version: '1.0.0',
        description:
          "Download a store's latest price list (CSV, TSV, XLSX, JSON, XML, YML) and the summary matrix with the store's API key.\n\n" +
          'The key travels in the `X-Api-Key` header (`/api/me`), in the last path segment (legacy addresses) or in the `key` query parameter. ' +
          'Every error is RFC 9457 problem details (`application/problem+json`) with a `code`:\n\n| code | status | title |\n|---|---|---|\n' +
          ERROR_TABLE,
      },
      servers: [{ url: config.publicUrl ?? (config.basePath || '/') }],
      components: {
        securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true },
    staticCSP: false,
  });
  // The schema at the address the contract names (the UI plugin serves it under /docs/json too).
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
