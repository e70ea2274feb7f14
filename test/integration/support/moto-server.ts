/**
 * A real AWS-compatible server for the secret store tests: moto in server mode (PyPI `moto[server]`,
 * installed by `.ci/run`), on a loopback port, with throwaway credentials in this process's environment
 * so the AWS SDK's standard credential chain finds them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../support/loopback.js';

/** A running moto server. */
export interface MotoServer {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts moto and waits until it answers. */
export async function startMotoServer(): Promise<MotoServer> {
  process.env.AWS_ACCESS_KEY_ID ??= 'moto-test-access-key';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'moto-test-secret-key';
  const port = await freePort();
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  const endpoint = `http://127.0.0.1:${String(port)}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${endpoint}/moto-api/`);
      break;
    } catch (error) {
      if (i > 200 || child.exitCode !== null) throw error;
      await sleep(50);
    }
  }
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
