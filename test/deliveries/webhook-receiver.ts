/**
 * A real HTTP receiver for webhook tests on 127.0.0.1, and a Standard Webhooks verifier
 * written from the specification (spec/standard-webhooks.md, "Signature scheme" and
 * "Verifying signatures"), independent of the service's signing code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

/** How the receiver answers the n-th request (0-based): a status, or 'hang' (never answers). */
export type Behaviour = (n: number, received: Received) => number | 'hang';

export class Receiver {
  readonly received: Received[] = [];
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();
  private waiters: (() => void)[] = [];
  port = 0;

  constructor(public behaviour: Behaviour = () => 200) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), path: request.url ?? '' };
        const answer = this.behaviour(this.received.length, received);
        this.received.push(received);
        for (const wake of this.waiters.splice(0)) wake();
        if (answer === 'hang') {
          this.hanging.add(response);
          return;
        }
        if (answer >= 300 && answer < 400) response.setHeader('location', `http://127.0.0.1:${this.port}/elsewhere`);
        response.statusCode = answer;
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Resolves once `count` requests have arrived. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`the receiver got ${this.received.length} of ${count} requests`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}

/** The spec's verification: constant-time compare of each `v1,` signature, and the timestamp within `toleranceS` of `now`. */
export function verifyFromSpec(secret: string, headers: IncomingHttpHeaders, body: string, now: Date = new Date(), toleranceS = 300): boolean {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  const signatures = String(headers['webhook-signature'] ?? '').split(' ');
  if (!id || !/^\d+$/.test(timestamp) || id.includes('.')) return false;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceS) return false;
  assertSecretShape(secret);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** `whsec_` + base64 of 24–64 bytes (spec: "Signing secret"). */
export function assertSecretShape(secret: string): void {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!match) throw new Error('the secret is not whsec_ + base64');
  const bytes = Buffer.from(match[1], 'base64').length;
  if (bytes < 24 || bytes > 64) throw new Error(`the secret has ${bytes} bytes, not 24–64`);
}
