import pg from 'pg';

/** Waits between attempts to listen again after the connection is lost: 1 s, doubling up to 30 s. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;

export interface ListenerOptions {
  channel: string;
  /** How the connection shows in pg_stat_activity (an operator sees what each one is for). */
  applicationName: string;
  /** Each notification's payload ('' when the NOTIFY gave none). */
  onNotification(payload: string): void;
  /**
   * After each LISTEN is in place, the first and every one after a lost connection: read what
   * the notifications of the time nobody listened would have told.
   */
  onListening(client: pg.Client): Promise<void> | void;
  onError?(error: unknown): void;
}

/**
 * One connection of this instance, outside the pool, LISTENing on one channel. Notifications
 * come at their transaction's commit, so one means a commit. When the connection is lost (a
 * restart, a failover, a cut network) it listens again with backoff, then calls `onListening`
 * to catch up. Idle cost: none but the connection.
 */
export class PostgresListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = RECONNECT_FIRST_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Null until start(). */
  private connecting: Promise<void> | null = null;
  /** Every close() waits for the same end of the connection. */
  private closing: Promise<void> | null = null;

  constructor(private readonly databaseUrl: string, private readonly options: ListenerOptions) {}

  start(): void {
    if (this.connecting || this.closed) return;
    this.connecting = this.connect();
  }

  /** Resolves once the first LISTEN is in place (or failed and a retry is scheduled); for tests and the start log. */
  async ready(): Promise<void> {
    await this.connecting;
  }

  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const { channel, applicationName, onNotification, onListening, onError } = this.options;
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000, keepAlive: true, application_name: applicationName });
    // One handler for both: a lost connection emits 'error' and/or 'end'.
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (error) onError?.(error);
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== channel) return;
      try {
        onNotification(message.payload ?? '');
      } catch (error) {
        onError?.(error);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.retryMs = RECONNECT_FIRST_MS;
      await onListening(client);
    } catch (error) {
      onLost(error);
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connecting = this.connect();
    }, wait);
    this.retryTimer.unref();
  }
}
