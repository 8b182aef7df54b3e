/*
 * The floor of goal 4 (bench/figures/accel.ts): a bare node:http server that answers every request
 * with the headers of one real hand-off (X-Accel-Redirect and the validators, given as JSON in
 * argv[2]) and checks nothing. nginx in front of it does all the hand-off's work but the
 * service's, so its rate ÷ nginx alone is what any Node process handing off can reach on the
 * host. Prints the address it listens on.
 */
import { createServer } from 'node:http';

const headers = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const server = createServer((_request, response) => {
  response.writeHead(200, { ...headers, 'content-length': '0' });
  response.end();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(typeof address === 'object' && address ? `127.0.0.1:${address.port}` : '');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
