import { connect } from 'node:net';

/** Whether something accepts TCP connections at host:port, within `timeoutMs` (a firewall may drop the attempt silently). */
export function tcpAccepts(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve(false);
    });
  });
}
