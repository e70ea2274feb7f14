/**
 * The scripted model server (test/support/model-server) with the arrival time of every request: over
 * HTTPS in a test namespace for sandboxes (as `test/integration/support/model-upstream.ts` serves it,
 * with the forwarder from the sources' `test/fixtures/`, which the bench build does not copy), and over
 * loopback HTTP for the bare runtime. Both listen in this process, so their times share one clock with
 * the SDK calls the benchmark makes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTestPki } from '../../test/integration/support/test-ca.js';
import { createTestNetwork } from '../../test/integration/support/test-network.js';
import { createModelServer, type ModelServer } from '../../test/support/model-server/index.js';

/** The package root: the nearest folder above this module with a `package.json`. */
export const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** A scripted model server that notes when each request's headers arrived (`performance.now()`). */
export interface TimedModel {
  readonly model: ModelServer;
  /** `https://<namespace address>:8443` or `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The first request that arrived at or after `since`, in ms since `since`; undefined when none did. */
  firstRequestAfter(since: number): number | undefined;
  stop(): Promise<void>;
}

function timedHandler(model: ModelServer): {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  arrivals: number[];
} {
  const arrivals: number[] = [];
  return {
    arrivals,
    handler: (req, res) => {
      arrivals.push(performance.now());
      model.handler(req, res);
    },
  };
}

function firstAfter(arrivals: readonly number[], since: number): number | undefined {
  const first = arrivals.find((at) => at >= since);
  return first === undefined ? undefined : first - since;
}

/** Over loopback HTTP: what the bare runtime on the host is pointed at. */
export async function startLoopbackModel(): Promise<TimedModel> {
  const model = createModelServer();
  const { handler, arrivals } = timedHandler(model);
  const server = createHttpServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    model,
    origin: `http://127.0.0.1:${String(port)}`,
    firstRequestAfter: (since) => firstAfter(arrivals, since),
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Over HTTPS with a test CA in a test namespace (`slot` as in `createTestNetwork`): for gateways. */
export async function startNamespaceModel(slot: number): Promise<TimedModel & { readonly caPem: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-bench-model-'));
  const network = createTestNetwork(slot);
  try {
    const pki = makeTestPki(dir, 'model', [network.nsAddress]);
    const model = createModelServer();
    const { handler, arrivals } = timedHandler(model);
    const server = createHttpsServer(
      { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) },
      handler,
    );
    server.listen(0, network.hostAddress);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const forwarder = spawn(
      'ip',
      [
        'netns',
        'exec',
        network.ns,
        process.execPath,
        join(PACKAGE_ROOT, 'test', 'fixtures', 'tcp-forward.mjs'),
        network.nsAddress,
        '8443',
        network.hostAddress,
        String(port),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      forwarder.once('exit', (code) => reject(new Error(`forwarder exited with ${String(code)}`)));
      forwarder.stdout.once('data', () => resolve());
    });
    return {
      model,
      origin: `https://${network.nsAddress}:8443`,
      caPem: pki.caPem,
      firstRequestAfter: (since) => firstAfter(arrivals, since),
      stop: async () => {
        if (forwarder.exitCode === null && forwarder.signalCode === null) {
          forwarder.kill('SIGTERM');
          await once(forwarder, 'exit');
        }
        server.closeAllConnections();
        server.close();
        network.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    network.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
