import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { sendProblem } from './problem.js';

/** How long a shutdown waits for downloads in progress: inside Kubernetes' default 30 s grace period. */
export const DRAIN_TIMEOUT_MS = 25_000;
/** After the drain timeout, the last connections are cut and the process exits within this. */
const CLOSE_GRACE_MS = 3_000;
/** What a request refused while draining is told: a restarted instance is usually up by then. */
const RETRY_AFTER_SECONDS = 5;

/** The draining state of one server: see registerDrain. */
export interface Drain {
  readonly draining: boolean;
  readonly inFlight: number;
  /** From now on new requests get 503 `unavailable` with Retry-After. */
  begin(): void;
  /** Resolves true once no request is in flight, or false after `timeoutMs`. */
  settled(timeoutMs: number): Promise<boolean>;
}

/**
 * Counts requests in flight and, once draining, answers new ones 503 problem+json with
 * Retry-After and `Connection: close`.
 *
 * Why the listener stays open while draining instead of refusing connections: a feed fetcher or
 * importer that gets "connection refused" logs a network failure and often waits for its next
 * schedule (hours); a 503 with Retry-After is the HTTP way to say "come back in 5 s", and a load
 * balancer still routing here during its deregistration delay gets an answer it can retry
 * elsewhere. The listener closes as soon as the last download in progress has finished.
 * (Fastify's own `return503OnClosing` answers with its own, non-problem body, and only once the
 * listener is already closing; app.ts turns it off in favour of this.)
 */
export function registerDrain(app: FastifyInstance, basePath: string): void {
  let inFlight = 0;
  let draining = false;
  let wake: Array<() => void> = [];
  const onIdle = () => {
    for (const resolve of wake) resolve();
    wake = [];
  };

  const ended = () => {
    inFlight--;
    if (inFlight === 0) onIdle();
  };
  // A callback hook (no promise per request); answering from it means not calling done().
  app.addHook('onRequest', (request, reply, done) => {
    if (draining && !request.routeOptions.config?.answersWhileDraining) {
      reply.header('Connection', 'close');
      sendProblem(reply, new AppError('unavailable', 'the service is restarting; try again shortly', { retryAfterSeconds: RETRY_AFTER_SECONDS }), basePath);
      return;
    }
    inFlight++;
    // 'close' fires once, when the response is fully sent or its connection is gone, streamed bodies included.
    reply.raw.on('close', ended);
    done();
  });

  const drain: Drain = {
    get draining() { return draining; },
    get inFlight() { return inFlight; },
    begin() { draining = true; },
    settled(timeoutMs) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        wake.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
  app.decorate('drain', drain);
}

export interface ShutdownTargets {
  servers: FastifyInstance[];
  /** Closed after the servers, in order. */
  release: Array<() => Promise<void>>;
}

/**
 * On SIGTERM/SIGINT: answer new requests 503 while downloads in progress finish (up to
 * DRAIN_TIMEOUT_MS), then close the listeners, release the database and counters, and exit.
 * A second SIGINT (Ctrl-C twice at a terminal) exits at once.
 */
export function installGracefulShutdown(targets: ShutdownTargets): void {
  let closing = false;
  const log = targets.servers[0]?.log;
  const shutdown = async (signal: string) => {
    if (closing) {
      if (signal === 'SIGINT') process.exit(130);
      return;
    }
    closing = true;
    // Whatever hangs (a release that never answers), the process still ends.
    setTimeout(() => {
      log?.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, DRAIN_TIMEOUT_MS + CLOSE_GRACE_MS).unref();

    const drains = targets.servers.map((server) => server.drain).filter((drain): drain is Drain => drain !== undefined);
    const inFlight = drains.reduce((sum, drain) => sum + drain.inFlight, 0);
    log?.info({ signal, inFlight }, 'shutting down: new requests get 503, finishing requests in progress');
    for (const drain of drains) drain.begin();
    const idle = (await Promise.all(drains.map((drain) => drain.settled(DRAIN_TIMEOUT_MS)))).every(Boolean);
    if (!idle) log?.warn({ inFlight: drains.reduce((sum, drain) => sum + drain.inFlight, 0) }, 'drain timeout: cutting the requests still in progress');

    const closed = Promise.all(targets.servers.map((server) => server.close()));
    // Fastify's close waits for active connections; past the drain timeout they are cut.
    if (!idle) for (const server of targets.servers) server.server.closeAllConnections();
    await closed;
    for (const release of targets.release) await release().catch(() => undefined);
    log?.info('shut down');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Present on the public app (registerDrain); the shutdown drains it before closing. */
    drain?: Drain;
  }
}
