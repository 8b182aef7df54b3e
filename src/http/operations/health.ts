import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { Database } from '../../domain/records.js';
import { sendProblem } from '../problem.js';

/** Where the probes live: at the root, whatever BASE_PATH is (a probe talks to the instance, not the public address). */
export const LIVENESS_PATH = '/healthz';
export const READINESS_PATH = '/readyz';
/** A readiness probe gets its answer within this, database or not (Kubernetes' default probe timeout is 1 s; see docs). */
const READY_CHECK_MS = 1_500;
/** What a load balancer is told while the database is away or the schema is behind. */
const RETRY_AFTER_SECONDS = 5;

/**
 * `GET /healthz`: the process is alive and its event loop answers; never touches the database.
 * `GET /readyz`: the instance can serve — 503 problem+json with Retry-After while the database
 * does not answer or its schema is not migrated; while shutting down the drain hook answers
 * 503 before this runs. Neither needs a key nor says anything about any store.
 */
export function registerHealthRoutes(app: FastifyInstance, db: Database, basePath: string): void {
  const unavailable = (reply: FastifyReply, detail: string) =>
    sendProblem(reply, new AppError('unavailable', detail, { retryAfterSeconds: RETRY_AFTER_SECONDS }), basePath);

  app.route({
    method: ['GET', 'HEAD'], url: LIVENESS_PATH, schema: { hide: true }, config: { answersWhileDraining: true },
    handler: async (_request, reply) => reply.header('Cache-Control', 'no-store').send({ status: 'alive' }),
  });

  app.route({
    method: ['GET', 'HEAD'], url: READINESS_PATH, schema: { hide: true },
    handler: async (_request, reply) => {
      let pending: number;
      try {
        pending = await withTimeout(db.pendingMigrations(), READY_CHECK_MS);
      } catch {
        // The driver's message may name the database host: the probe learns only that it is away.
        return unavailable(reply, 'the database does not answer');
      }
      if (pending > 0) return unavailable(reply, `the database schema is behind by ${pending} migration(s); run price-export migrate`);
      return reply.header('Cache-Control', 'no-store').send({ status: 'ready' });
    },
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The liveness probe answers while draining: the process is alive until it exits. */
    answersWhileDraining?: boolean;
  }
}
