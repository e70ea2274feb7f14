/**
 * The scripted model server (test/support/model-server) as a real HTTPS upstream: TLS with a test CA,
 * served by this process on the host end of a test namespace, reached by gateways at
 * `https://<namespace address>:8443` through a TCP forwarder inside the namespace (the agent example's:
 * sandboxes may not reach the host's own addresses; the namespace they may).
 */
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createModelServer,
  type ModelServer,
  type ModelServerOptions,
} from '../../support/model-server/index.js';
import { makeTestPki } from './test-ca.js';
import { createTestNetwork, forwardFromNamespace } from './test-network.js';

/** The package root: the nearest folder above this module with a `package.json` (sources or a build). */
export const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What the upstream serves besides the model. */
export interface ModelUpstreamOptions {
  /** The scripted model server's options. */
  readonly model?: ModelServerOptions;
  /** Serves paths under `/mcp` instead of the model (a remote MCP server on the same upstream). */
  readonly mcp?: Handler;
  /** Told as each request arrives, before it is served. */
  readonly onRequest?: (req: IncomingMessage) => void;
}

/** A running model upstream. */
export interface ModelUpstream {
  /** `https://<namespace address>:8443`. */
  readonly origin: string;
  /** The test CA's certificate (give it to the control plane as `gatewayCa`). */
  readonly caPem: string;
  /** The scripted server: its script and the requests it received. */
  readonly model: ModelServer;
  stop(): Promise<void>;
}

/** Starts the model upstream in a fresh test namespace (`slot` as in `createTestNetwork`). */
export async function startModelUpstream(
  slot: number,
  options: ModelUpstreamOptions = {},
): Promise<ModelUpstream> {
  const { mcp, onRequest } = options;
  const dir = mkdtempSync(join(tmpdir(), 'sdk-model-'));
  const network = createTestNetwork(slot);
  try {
    const pki = makeTestPki(dir, 'model', [network.nsAddress]);
    const model = createModelServer(options.model);
    const server = createServer(
      { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) },
      (req, res) => {
        onRequest?.(req);
        if (mcp !== undefined && (req.url ?? '').startsWith('/mcp')) mcp(req, res);
        else model.handler(req, res);
      },
    );
    server.listen(0, network.hostAddress);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const forwarder = await forwardFromNamespace(network, 8443, port);
    return {
      origin: `https://${network.nsAddress}:8443`,
      caPem: pki.caPem,
      model,
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
