import type { FastifyInstance, FastifyError } from 'fastify';
import { AppError, isAppError } from '../../errors/app-error.js';
import { sendProblem } from '../problem.js';

/** What differs between the public and the internal app; everything else is the one handler below. */
export interface ProblemHandlerOptions {
  /** The public side's base path: a problem's `type` points into its /docs (whose error table lists every code). */
  basePath: string;
  /** The detail of a 404 for an address this app does not have. */
  notFoundDetail: string;
  /** Resolves when the database answers: an unknown error while it does not is an outage (503), not a bug (500). */
  ping: () => Promise<unknown>;
  /** This app's reading of the framework's own errors (validation, body parsing); null for anything else. */
  frameworkError: (error: FastifyError) => AppError | null;
}

/**
 * One problem handler for the public and the internal app: our AppErrors as they are, the
 * framework's own errors into ours (their messages can echo the address, and with it a key),
 * unknown errors into a bare 500 logged with the request id — or 503 when the database is gone.
 */
export function registerProblemHandler(app: FastifyInstance, options: ProblemHandlerOptions): void {
  const { basePath } = options;
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, new AppError('not_found', options.notFoundDetail), basePath));

  app.setErrorHandler(async (error: FastifyError | AppError, request, reply) => {
    if (isAppError(error)) return sendProblem(reply, error, basePath);
    const framework = options.frameworkError(error as FastifyError);
    if (framework) return sendProblem(reply, framework, basePath);
    // A failure the store recognised as the database's is an AppError('unavailable') already;
    // anything else while the database does not answer is an outage too.
    if (!(await databaseAnswers(options.ping))) {
      request.log.warn({ err: { type: (error as Error).name, code: (error as FastifyError).code } }, 'database unreachable or busy');
      return sendProblem(reply, new AppError('unavailable', 'the database cannot be reached; try again shortly', { retryAfterSeconds: 5 }), basePath);
    }
    // Log the error without its message text: a driver's message may quote a statement parameter.
    request.log.error({ err: { type: (error as Error).name, code: (error as FastifyError).code, stack: (error as Error).stack?.split('\n').slice(1).join('\n') } }, 'unexpected error');
    return sendProblem(reply, new AppError('internal_error', 'an unexpected error occurred; it has been logged'), basePath);
  });
}

/** The public addresses take no request body: any body or validation trouble is a bad parameter (400). */
export function publicFrameworkError(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('invalid_parameter', 'this address takes no request body');
    case 'FST_ERR_VALIDATION':
      return new AppError('invalid_parameter', error.message);
    default:
      return error.statusCode && error.statusCode >= 400 && error.statusCode < 500
        ? new AppError('invalid_parameter', 'the request is malformed')
        : null;
  }
}

/** A ping that has not answered within this is an outage: the caller must not hang on it. */
const PING_TIMEOUT_MS = 2_000;

async function databaseAnswers(ping: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([ping().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
