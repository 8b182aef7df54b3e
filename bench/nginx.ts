/*
 * The repeat-download reference of bench/run.ts: nginx (nginx-light, /usr/sbin/nginx) serving
 * the same bytes from a file, with sendfile. One worker process, as the service is one Node
 * process; keep-alive without a request cap, as Node's; no access log (the service logs at
 * info into /dev/null-like pipe, a cost of the same order).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface NginxProcess {
  url: string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startNginx(dir: string, fileName: string, body: Buffer, contentType: string): Promise<NginxProcess> {
  const www = join(dir, 'www');
  mkdirSync(www, { recursive: true });
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(www, fileName), body);
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
${process.getuid?.() === 0 ? '# Run as root, its workers would drop to nobody, who cannot read a mkdtemp (0700) directory.\nuser root;' : ''}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  types { }
  default_type "${contentType}";
  server {
    listen 127.0.0.1:${port};
    root ${www};
    etag on;
  }
}
`,
  );
  const child = spawn('/usr/sbin/nginx', ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/${fileName}`;
  // Wait until it answers.
  for (let attempt = 0; ; attempt++) {
    const status = await fetch(url).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (child.exitCode !== null || attempt > 100) throw new Error(`nginx did not start (last status ${status}): ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
