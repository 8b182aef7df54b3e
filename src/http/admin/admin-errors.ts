import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../errors/app-error.js';
import { registerProblemHandler } from '../plugins/error-handling.js';
import { sendProblem } from '../problem.js';
import type { AdminTokenCheck } from './admin-auth.js';
import { PUBLISH_MEDIA_TYPES } from './routes/price-lists.js';

/**
 * The admin side's problem+json: the public side's problem handler (same error table, same
 * renderer, same 503 on a database outage), with its own reading of the framework's errors (a
 * bad body is the caller's input, 422; a bad address part is a parameter, 400). `basePath` is
 * the public side's: a problem's `type` points into the public /docs, whose error table lists
 * the admin codes too.
 */
export function registerAdminErrors(app: FastifyInstance, basePath: string, ping: () => Promise<unknown>): void {
  registerProblemHandler(app, { basePath, notFoundDetail: 'no such admin address', ping, frameworkError: adminFrameworkError });

  // RFC 6750: a 401 names the scheme the caller should use. sendProblem writes the public
  // side's `ApiKey`; the admin side asks for its bearer token instead.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401) reply.header('WWW-Authenticate', ADMIN_WWW_AUTHENTICATE);
    return payload;
  });
}

const ADMIN_WWW_AUTHENTICATE = 'Bearer realm="price-export-admin"';

/**
 * Fastify's `frameworkErrors` for the admin app: an address the router cannot take (a bad
 * %-escape, a parameter over its length) is answered before any hook runs, so this answer does
 * what the hooks would: the token first (401/429 exactly as on any admin address — the route
 * table cannot be probed without it), then the public side's 400 problem+json with the security
 * headers, never echoing the address (red-team finding #20.15). `tokenCheck` is read when a
 * request comes: the check exists only once the app has registered it.
 */
export function adminFrameworkErrorAnswer(basePath: string, tokenCheck: () => AdminTokenCheck | null) {
  return (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    let problem = new AppError('invalid_parameter', 'the address is malformed');
    try {
      const check = tokenCheck();
      if (!check) throw new AppError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
      check(request, reply);
    } catch (error) {
      problem = isAppError(error) ? error : new AppError('internal_error', 'an unexpected error occurred; it has been logged');
    }
    reply.header('Referrer-Policy', 'no-referrer').header('X-Content-Type-Options', 'nosniff');
    sendProblem(reply, problem, basePath, ADMIN_WWW_AUTHENTICATE);
  };
}

function adminFrameworkError(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_VALIDATION':
      // The message names the part and the rule (`body/name must NOT have fewer than 1 characters`), never a value.
      return (error as FastifyError & { validationContext?: string }).validationContext === 'body'
        ? new AppError('invalid_input', error.message)
        : new AppError('invalid_parameter', error.message);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('invalid_parameter', `Content-Type must be application/json; a price list may also be sent as ${PUBLISH_MEDIA_TYPES.filter((t) => t !== 'application/json').join(', ')}`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_input', 'the request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is too large');
    default:
      return error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? new AppError('invalid_input', 'the request is malformed') : null;
  }
}
