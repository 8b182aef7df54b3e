/*
 * Debian's nginx (nginx-light, /usr/sbin/nginx) in front of one or more `serve` processes, with
 * the configuration docs/running-several-instances.md documents ("nginx in front"): the
 * accelerated hand-off of cached files (ACCEL_REDIRECT_PREFIX) and routing by key. Started as a
 * non-daemon child with everything (pid, logs, temp files) in its own directory. The tests of
 * test/multi-instance and bench/figures/accel.ts use it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

export const NGINX = '/usr/sbin/nginx';
export const nginxInstalled = (): boolean => existsSync(NGINX);

export interface NginxFrontOptions {
  /** `127.0.0.1:port` of each service instance. */
  upstreams: string[];
  /** Route every request of one key to one instance (`hash … consistent`); else round robin. */
  routeByKey?: boolean;
  /** ACCEL_REDIRECT_PREFIX of the instances and the CACHE_DIR it maps to; absent: no internal location. */
  accel?: { prefix: string; cacheDir: string };
  /** Also serve this directory as plain static files under /static/ (the bench's reference). */
  staticDir?: string;
}

/**
 * The documented `http { … }` content. Kept here as the one copy the tests run; the docs show the
 * same directives with production paths.
 */
export function frontConfig(options: NginxFrontOptions, port: number, dir: string): string {
  const { upstreams, routeByKey = false, accel, staticDir } = options;
  return `
  # Keys never reach the log: the address as asked without its query string ($request,
  # $request_uri and $args would carry ?key=), the key segment of the legacy /WebApi/...
  # addresses masked; and not $uri, which names the cache file after a hand-off.
  map $request_uri $price_export_logged_uri {
    "~*^(?<before_key>[^?]*/webapi/[^/?]+/)[^/?]+" "\${before_key}-";
    "~^(?<path>[^?]*)" $path;
  }
  log_format price_export '$remote_addr [$time_local] "$request_method $price_export_logged_uri" $status $body_bytes_sent $request_time $upstream_addr';
  access_log ${join(dir, 'access.log')} price_export;

  # The key, wherever the request carries it (CONTRACT §3, §15): ?key=, X-Api-Key, the last
  # segment of a legacy path, or HTTP Basic credentials (base64 of user:key, hashed as they come).
  map $http_authorization $price_export_basic {
    "~*^basic\\s+(?<credentials>\\S+)" $credentials;
    default "";
  }
  map $uri $price_export_path_key {
    "~*/webapi/[^/]+/(?<path_key>[^/]+)/?$" $path_key;
    default "";
  }
  map "$arg_key$http_x_api_key$price_export_path_key$price_export_basic" $price_export_route {
    "" $request_id;
    default "$arg_key$http_x_api_key$price_export_path_key$price_export_basic";
  }

  upstream price_export {
    ${routeByKey ? 'hash $price_export_route consistent;' : '# round robin'}
    ${upstreams.map((address) => `server ${address};`).join('\n    ')}
    keepalive 32;
  }

  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://price_export;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Request-Id $request_id;
      proxy_buffering off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout http_502 http_503;
    }
${accel ? `
    # ACCEL_REDIRECT_PREFIX=${accel.prefix}: files of the render cache (CACHE_DIR), reachable only
    # through an instance's X-Accel-Redirect, after it checked the key and the conditions.
    location ${accel.prefix} {
      internal;
      alias ${accel.cacheDir}/;
      sendfile on;
      tcp_nopush on;
      # The instance's validators, not nginx's file-based ones; conditions were checked by it.
      etag off;
      if_modified_since off;
      # nginx keeps Content-Type, Content-Disposition and Cache-Control from the instance's
      # answer by itself; these it would drop.
      add_header ETag $upstream_http_etag;
      add_header Last-Modified $upstream_http_last_modified;
      add_header Content-Encoding $upstream_http_content_encoding;
      add_header Vary $upstream_http_vary;
      add_header X-Content-Type-Options $upstream_http_x_content_type_options;
      add_header Referrer-Policy $upstream_http_referrer_policy;
      add_header RateLimit $upstream_http_ratelimit;
      add_header RateLimit-Policy $upstream_http_ratelimit_policy;
      add_header X-Request-Id $upstream_http_x_request_id;
      add_header X-Price-List-Version $upstream_http_x_price_list_version;
      add_header X-Since-Version $upstream_http_x_since_version;
      # A file evicted between the hand-off and the open is a plain 404, not an error log line.
      log_not_found off;
    }` : ''}
${staticDir ? `
    location /static/ {
      alias ${staticDir}/;
      sendfile on;
      tcp_nopush on;
    }` : ''}
  }`;
}

export interface NginxFront {
  base: string;
  accessLog(): string;
  errorLog(): string;
  stop(): Promise<void>;
}


/** nginx as a non-daemon child with a generated configuration in `dir`; resolved once it answers. */
export async function startNginxFront(dir: string, options: NginxFrontOptions): Promise<NginxFront> {
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `daemon off;
${process.getuid?.() === 0 ? '# As root, workers would drop to nobody, who cannot read the 0700 cache directory.\nuser root;' : ''}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} notice;
events { worker_connections 1024; }
http {
  client_body_temp_path ${join(dir, 'client_body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  keepalive_requests 1000000;
  types { }
  default_type application/octet-stream;
${frontConfig(options, port, dir)}
}
`);
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const read = (name: string) => () => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  const front: NginxFront = {
    base: `http://127.0.0.1:${port}`,
    accessLog: read('access.log'),
    errorLog: read('error.log'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${front.errorLog()}`);
    // Any answer (the instances' 401) means it listens.
    if (await fetch(`${front.base}/api/me`).then(() => true, () => false)) return front;
    if (attempt > 200) {
      await front.stop();
      throw new Error(`nginx did not answer: ${stderr}${front.errorLog()}`);
    }
    await sleep(50);
  }
}
