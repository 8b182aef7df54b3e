/**
 * The request side of the ledger on one connection: each answer recorded exactly once, whether
 * its response finished or the connection closed under it (pipelined requests can leave
 * several open), and those the close cut in the order they were asked. A stand-in connection
 * (an EventEmitter with bytesWritten) and stand-in request/reply: what is under test is the
 * bookkeeping, not HTTP (test/deliveries/ledger-over-http.test.ts cuts a real download).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DeliveryService, type QueuedDelivery } from '../domain/deliveries.js';
import { beginDelivery, recordAnswer } from './deliveries.js';

function recorder(): { service: DeliveryService; records: QueuedDelivery[] } {
  const records: QueuedDelivery[] = [];
  const service = new DeliveryService({} as never, { record: (entry: QueuedDelivery) => records.push(entry) } as never, {
    ledgerDays: 30, staleAfterMin: 120, now: () => new Date('2026-11-26T00:00:00Z'),
  });
  return { service, records };
}

function connection(): EventEmitter & { bytesWritten: number } {
  return Object.assign(new EventEmitter(), { bytesWritten: 0 });
}

/** One request on the connection, its response `finished` or not; `version` tells the records apart. */
function ask(service: DeliveryService, socket: EventEmitter, version: number, finished = false) {
  const request = { headers: { 'user-agent': 'curl/8.5.0' }, ip: '127.0.0.1', delivery: null, raw: { socket } } as unknown as FastifyRequest;
  const reply = { raw: { socket, statusCode: 200, writableFinished: finished }, elapsedTime: 1 } as unknown as FastifyReply;
  beginDelivery(service, request, reply, 'shop', 'key-1', 'prices').served({ format: 'csv', profileId: null, onlyAvailable: false, version });
  return request;
}

test('answers finished one after another on a kept-alive connection are each recorded once, as they finish', () => {
  const { service, records } = recorder();
  const socket = connection();
  for (let version = 1; version <= 3; version++) {
    const request = ask(service, socket, version, true);
    socket.bytesWritten += 100 * version;
    request.delivery!.record();
    request.delivery!.record();
  }
  socket.emit('close');
  assert.deepEqual(records.map((r) => [r.version, r.finished, r.bytes_sent]), [[1, true, 100], [2, true, 200], [3, true, 300]]);
});

test('a close records the answers it cut, oldest first, each once, whichever finished in between', () => {
  const { service, records } = recorder();
  const socket = connection();
  const requests = [1, 2, 3, 4, 5].map((version) => ask(service, socket, version));
  // The second and the newest finished (their records went out); the others were cut.
  requests[1].delivery!.record();
  requests[4].delivery!.record();
  socket.emit('close');
  assert.deepEqual(records.map((r) => r.version), [2, 5, 1, 3, 4]);
  // The response end after the close finds nothing more to record.
  for (const request of requests) request.delivery!.record();
  assert.equal(records.length, 5);
});

test('answers on other connections are not recorded by this one closing', () => {
  const { service, records } = recorder();
  const [first, second] = [connection(), connection()];
  ask(service, first, 1);
  const other = ask(service, second, 2);
  first.emit('close');
  assert.deepEqual(records.map((r) => r.version), [1]);
  other.delivery!.record();
  second.emit('close');
  assert.deepEqual(records.map((r) => r.version), [1, 2]);
});

test('an answer\'s bytes are those written since the last answer on the connection, recorded or not', () => {
  const { service, records } = recorder();
  const socket = connection();
  // An earlier answer on the connection before any recorded one (say, /api/me)…
  socket.bytesWritten += 70;
  const first = ask(service, socket, 1, true);
  socket.bytesWritten += 100;
  recordAnswer(first);
  // …and one in between that is not recorded (a refused key): neither is charged to an export.
  const refused = { delivery: null, raw: { socket } } as unknown as FastifyRequest;
  socket.bytesWritten += 50;
  recordAnswer(refused);
  const second = ask(service, socket, 2, true);
  socket.bytesWritten += 200;
  recordAnswer(second);
  assert.deepEqual(records.map((r) => [r.version, r.bytes_sent]), [[1, 100], [2, 200]]);
});
