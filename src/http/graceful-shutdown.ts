import type { FastifyInstance } from 'fastify';

export interface ShutdownTargets {
  servers: FastifyInstance[];
  /** Closed after the servers, in order. */
  release: Array<() => Promise<void>>;
}

/**
 * On SIGTERM/SIGINT: stop accepting, let downloads in progress finish (Fastify's close waits
 * for open requests), then release the database and counters and exit.
 */
export function installGracefulShutdown(targets: ShutdownTargets): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    targets.servers[0]?.log.info({ signal }, 'shutting down: finishing downloads in progress');
    await Promise.all(targets.servers.map((server) => server.close()));
    for (const release of targets.release) await release().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
