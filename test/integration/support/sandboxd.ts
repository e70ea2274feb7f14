/**
 * Starts sandboxd (`dist/daemon/main.js`, built by `npm test` before the tests) as a plain local process
 * on loopback: the daemon alone, without the namespace driver. Its settings, token included, go in on
 * stdin.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SANDBOXD_NODE_FLAGS } from '../../../protocol/sandboxd-node.js';

const MAIN = fileURLToPath(new URL('../../../dist/daemon/main.js', import.meta.url));

/** A running daemon. */
export interface LocalSandboxd {
  readonly url: string;
  readonly token: string;
  readonly pid: number;
  /** Everything the daemon wrote to stderr so far (also passed on to this process's stderr). */
  stderr(): string;
  /** True until the daemon process has exited. */
  running(): boolean;
  stop(): Promise<void>;
}

/** Starts a daemon whose commands run as uid/gid 1000 with home `home`; `env` is the daemon's own. */
export async function startSandboxd(
  home: string,
  env: Record<string, string> = {},
  settings: { gatewayCa?: string; streamStallMs?: number } = {},
): Promise<LocalSandboxd> {
  const token = randomBytes(24).toString('base64url');
  const child: ChildProcess = spawn(process.execPath, [...SANDBOXD_NODE_FLAGS, MAIN], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    process.stderr.write(chunk);
  });
  child.stdin?.end(JSON.stringify({ token, user: { uid: 1000, gid: 1000, home }, ...settings }));
  const [line] = (await once(createInterface({ input: child.stdout ?? process.stdin }), 'line')) as [string];
  const { port } = JSON.parse(line) as { port: number };
  return {
    url: `http://127.0.0.1:${String(port)}`,
    token,
    pid: child.pid ?? 0,
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
