import { AppError, isAppError } from '../errors/app-error.js';

/*
 * The store boundary turns a database failure that says "try again" into the `unavailable`
 * error (503 with Retry-After on HTTP), so no caller knows a driver's error codes. Other
 * errors (a bug, a constraint the caller should have checked) pass through as they are.
 */

/** Node's socket errors on the way to a database server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** pg's own connection failures carry no code, only these messages. */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/**
 * SQLite's lock timeouts (SQLITE_BUSY*, SQLITE_LOCKED*); PostgreSQL's SQLSTATE classes 08
 * (connection) and 53 (insufficient resources, e.g. too many connections), 57P01–57P03
 * (server shutting down / cannot connect now), 40001/40P01 (serialization, deadlock).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (/^SQLITE_(BUSY|LOCKED)/.test(code) || NETWORK_CODES.has(code)) return true;
    if (/^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '40001' || code === '40P01') return true;
  }
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message);
}

/** The error a caller of the store sees for `error`. */
export function storeError(error: unknown): unknown {
  if (isAppError(error) || !isTransientDatabaseError(error)) return error;
  return new AppError('unavailable', 'the database cannot be reached; try again shortly', { retryAfterSeconds: 5 });
}

export const rethrowStoreError = (error: unknown): never => {
  throw storeError(error);
};

/** `source`, with its failures passed through storeError. */
export async function* guardedIterable<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw storeError(error);
  }
}
