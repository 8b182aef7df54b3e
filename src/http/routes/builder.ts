import type { FastifyInstance, FastifyReply, FastifySchema } from 'fastify';
import type { Config } from '../../config/config.js';
import { BUILDER_CSS, BUILDER_HTML, BUILDER_JS } from '../pages/builder-page.js';
import { publicRoute } from '../public-route.js';

/**
 * The page's policy: nothing but its own files, no inline script or style, calls only to this
 * origin (api/me and the preview), no form submission anywhere, never framed.
 */
export const BUILDER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HIDDEN = { hide: true } as FastifySchema;

const sendText = (reply: FastifyReply, contentType: string, body: string) =>
  reply
    .header('Content-Type', contentType)
    .header('Content-Security-Policy', BUILDER_CSP)
    // Small and static, but a deployment may change them: revalidate rather than keep a stale copy.
    .header('Cache-Control', 'no-cache')
    .send(body);

/**
 * The key holder's export-link builder at the base path (`/`), with its script and style sheet
 * beside it. Every link in the page is relative, so under BASE_PATH the page must be addressed
 * with its trailing slash (`/prices/`): `/prices` is redirected there.
 */
export function registerBuilderRoute(app: FastifyInstance, config: Readonly<Config>): void {
  publicRoute(app, '/', HIDDEN, async (request, reply) => {
    const path = request.url.split('?')[0];
    if (config.basePath !== '' && !path.endsWith('/')) {
      // Relative, so a proxy that mounts the service under yet another prefix still lands right.
      return reply.code(308).header('Location', `${path.slice(path.lastIndexOf('/') + 1)}/`).send();
    }
    return sendText(reply, 'text/html; charset=utf-8', BUILDER_HTML);
  });
  publicRoute(app, '/builder.js', HIDDEN, async (_request, reply) => sendText(reply, 'text/javascript; charset=utf-8', BUILDER_JS));
  publicRoute(app, '/builder.css', HIDDEN, async (_request, reply) => sendText(reply, 'text/css; charset=utf-8', BUILDER_CSS));
}
