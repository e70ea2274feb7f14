/**
 * Starts `test/fixtures/https-upstream.mjs` inside a test namespace and talks to its control endpoints
 * directly (not through the gateway).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import type { TestNetwork } from './test-network.js';
import type { TestPki } from './test-ca.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/https-upstream.mjs', import.meta.url));

/** A running upstream. */
export interface HttpsUpstream {
  /** `https://<ns address>:8443`, certificate from `pki`. */
  readonly origin: string;
  /** `https://<ns address>:8444`, certificate from another CA. */
  readonly untrustedOrigin: string;
  readonly port: number;
  /** Targets the upstream received, control calls excepted. */
  requests(): Promise<string[]>;
  /** Writes one event to every open `/sse` stream. */
  tick(): Promise<void>;
  /** Number of open `/sse` streams. */
  streamCount(): Promise<number>;
  /** Ends every open `/sse` stream. */
  endStreams(): Promise<void>;
  /** Forgets the recorded requests. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the upstream in `network`, serving `pki`'s certificate (and `other`'s on the second port). */
export async function startHttpsUpstream(
  network: TestNetwork,
  pki: TestPki,
  other: TestPki,
  port = 8443,
): Promise<HttpsUpstream> {
  const child: ChildProcess = spawn(
    'ip',
    [
      'netns',
      'exec',
      network.ns,
      process.execPath,
      FIXTURE,
      pki.certFile,
      pki.keyFile,
      String(port),
      other.certFile,
      other.keyFile,
      String(port + 1),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`upstream fixture exited with ${String(code)}`)));
    child.stdout?.once('data', () => resolve());
  });
  const origin = `https://${network.nsAddress}:${String(port)}`;
  const agent = new Agent({ connect: { ca: pki.caPem } });
  const call = async (path: string): Promise<unknown> => {
    const res = await request(`${origin}${path}`, { method: 'POST', dispatcher: agent });
    return res.body.json();
  };
  return {
    origin,
    untrustedOrigin: `https://${network.nsAddress}:${String(port + 1)}`,
    port,
    requests: async () => ((await call('/_control/requests')) as { targets: string[] }).targets,
    tick: async () => {
      await call('/_control/tick');
    },
    streamCount: async () => ((await call('/_control/streams')) as { streams: number }).streams,
    endStreams: async () => {
      await call('/_control/end');
    },
    reset: async () => {
      await call('/_control/reset');
    },
    stop: async () => {
      await agent.close();
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
