/**
 * #20 finding 17: idle connections cannot exhaust the process's file descriptors. Connections
 * beyond MAX_CONNECTIONS are closed as they arrive, and a connection silent for
 * IDLE_TIMEOUT_SECONDS is closed, after which legitimate requests are served again.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
const opened = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => undefined); // a reset from the server is what some cases expect
    socket.once('error', reject);
  });

describe('connection caps on the public port', () => {
  let t: TestApp;
  let port = 0;
  before(async () => {
    t = await createTestApp('sqlite', { MAX_CONNECTIONS: '3', IDLE_TIMEOUT_SECONDS: '1' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(async () => {
    await t.close();
  });

  test('the defaults are documented numbers: 10000 connections, 120 s idle', () => {
    const config = loadConfig({});
    assert.deepEqual([config.maxConnections, config.idleTimeoutSeconds], [10_000, 120]);
  });

  test('a connection over MAX_CONNECTIONS is closed at once; idle ones are closed after IDLE_TIMEOUT_SECONDS; then requests are served', { timeout: 30_000 }, async () => {
    const idle = await Promise.all([opened(port), opened(port), opened(port)]);
    const extra = await opened(port);
    await closed(extra); // refused by the cap, long before any idle timeout
    assert.ok(idle.every((socket) => !socket.destroyed), 'the first three are still open');
    await Promise.all(idle.map(closed)); // silent for a second: closed by the server
    const response = await fetch(`http://127.0.0.1:${port}/api/me`);
    assert.equal(response.status, 401);
  });
});
