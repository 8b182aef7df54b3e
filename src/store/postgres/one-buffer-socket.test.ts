/**
 * one-buffer-socket.ts over a real TCP connection: every read lands in the socket's one buffer;
 * 'data' listeners still get each read in a Buffer of its own, and a reader in place gets the
 * reads where they lie until it lets go.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { oneBufferSocket, readsInPlace } from './one-buffer-socket.js';

/** A server that writes `chunks` one at a time, each after the client's acknowledging byte, then ends; the client socket connected to it. */
async function served(chunks: readonly Buffer[]) {
  const server = createServer((connection: Socket) => {
    let next = 0;
    const send = () => {
      if (next < chunks.length) connection.write(chunks[next++]);
      else connection.end();
    };
    connection.on('data', send);
    send();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = oneBufferSocket();
  socket.connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(socket, 'connect');
  return { socket, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const CHUNKS = [Buffer.alloc(40_000, 'a'), Buffer.alloc(30_000, 'b'), Buffer.from('the end')];

// A guard, not a measure: a reader that never gets its bytes would otherwise wait for ever.
describe('a socket that reads into one buffer', { timeout: 20_000 }, () => {
  it("emits each read as 'data' in a Buffer of its own, which the next read leaves as it was", async () => {
    const { socket, close } = await served(CHUNKS);
    const got: Buffer[] = [];
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      got.push(chunk);
      received += chunk.length;
      // Asks for the next chunk once this one is all here: each arrives in reads of its own.
      if (CHUNKS.some((_, i) => received === CHUNKS.slice(0, i + 1).reduce((n, c) => n + c.length, 0))) socket.write('k');
    });
    await once(socket, 'end');
    socket.destroy();
    await close();
    assert.ok(readsInPlace(socket));
    assert.ok(got.length >= CHUNKS.length, 'a read per chunk at least');
    assert.ok(new Set(got.map((chunk) => chunk.buffer)).size > 1 || got.length === 1, 'no two reads share memory');
    assert.deepEqual(Buffer.concat(got), Buffer.concat(CHUNKS));
  });

  it('hands the reads in place to a reader, emitting nothing, until it lets go', async () => {
    const { socket, close } = await served(CHUNKS);
    const inPlace: string[] = [];
    const buffers = new Set<ArrayBufferLike>();
    const data: Buffer[] = [];
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      data.push(chunk);
      if (Buffer.concat(data).toString('latin1') === 'the end') socket.write('k');
    });
    socket.readInPlace((bytes) => {
      buffers.add(bytes.buffer);
      // Read now: the next read overwrites these bytes.
      inPlace.push(bytes.toString('latin1'));
      received += bytes.length;
      if (received === CHUNKS[0].length) socket.write('k');
      if (received === CHUNKS[0].length + CHUNKS[1].length) {
        socket.readInPlace(null);
        socket.write('k');
      }
    });
    await once(socket, 'end');
    socket.destroy();
    await close();
    assert.equal(buffers.size, 1, 'every read in the one buffer');
    assert.equal(inPlace.join(''), CHUNKS[0].toString('latin1') + CHUNKS[1].toString('latin1'));
    assert.equal(Buffer.concat(data).toString('latin1'), 'the end', "after letting go, 'data' again");
  });
});
