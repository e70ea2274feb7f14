/**
 * nginx (Debian package `nginx-light`) in two roles for the gateway benchmark: the TLS upstream inside
 * the test namespace, and the anchor, a `proxy_pass` reverse proxy configured like the gateway (keep-alive
 * upstream, TLS verified against the test CA, one injected header, no buffering so streams flow).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A running nginx: its master pid and the pid of its single worker. */
export interface Nginx {
  readonly workerPid: number;
  readonly stop: () => Promise<void>;
}

const COMMON = (dir: string, name: string): string => `user root;
worker_processes 1;
daemon off;
pid ${dir}/${name}.pid;
error_log stderr error;
events { worker_connections 4096; }
`;

const TEMP_PATHS = (dir: string): string =>
  ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${dir}/${kind};`)
    .join('\n');

/** The upstream: `/small` answers "ok", `/bytes` sends `bytesFile`. */
export function upstreamConfig(
  dir: string,
  address: string,
  port: number,
  cert: string,
  key: string,
  bytesFile: string,
): string {
  return `${COMMON(dir, 'upstream')}http {
  access_log off;
${TEMP_PATHS(dir)}
  ssl_session_cache shared:UP:1m;
  server {
    listen ${address}:${String(port)} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    location = /small { return 200 "ok"; }
    location = /bytes { alias ${bytesFile}; default_type application/octet-stream; }
  }
}
`;
}

/** The anchor proxy on `127.0.0.1:port` to the upstream at `address:upstreamPort`. */
export function proxyConfig(
  dir: string,
  port: number,
  address: string,
  upstreamPort: number,
  serverName: string,
  caFile: string,
  headerValue: string,
): string {
  return `${COMMON(dir, 'proxy')}http {
  access_log off;
${TEMP_PATHS(dir)}
  upstream up { server ${address}:${String(upstreamPort)}; keepalive 32; }
  server {
    listen 127.0.0.1:${String(port)};
    keepalive_requests 1000000;
    location / {
      proxy_pass https://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host ${serverName};
      proxy_set_header x-api-key "${headerValue}";
      proxy_ssl_trusted_certificate ${caFile};
      proxy_ssl_verify on;
      proxy_ssl_name ${serverName};
      proxy_ssl_server_name on;
      proxy_ssl_session_reuse on;
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`;
}

/** Starts nginx with `config` (optionally inside a namespace) and waits for its worker. */
export async function startNginx(dir: string, name: string, config: string, ns?: string): Promise<Nginx> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, config);
  const command = ['nginx', '-p', `${dir}/`, '-e', 'stderr', '-c', file];
  const child: ChildProcess =
    ns === undefined
      ? spawn(command[0] ?? 'nginx', command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] })
      : spawn('ip', ['netns', 'exec', ns, ...command], { stdio: ['ignore', 'ignore', 'inherit'] });
  const master = child.pid ?? 0;
  for (let i = 0; i < 200; i++) {
    const children = readChildren(master);
    if (children[0] !== undefined) {
      return {
        workerPid: children[0],
        stop: async () => {
          child.kill('SIGTERM');
          await once(child, 'exit');
        },
      };
    }
    if (child.exitCode !== null) break;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`nginx ${name} did not start`);
}

function readChildren(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(' ').map(Number);
  } catch {
    return [];
  }
}
