/*
 * The 304 reference of bench/run.ts: a bare Fastify route returning a constant, in its own
 * process, no logging, no hooks. Prints the address it listens on.
 */
import Fastify from 'fastify';

const app = Fastify();
app.get('/', async () => 'ok');
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(address);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
