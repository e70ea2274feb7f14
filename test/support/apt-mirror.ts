/**
 * A Debian package mirror for tests: the flat repository of `apt-repository.ts`, served over plain HTTP
 * by this process on the host end of a test namespace and reached at `http://<namespace address>:8080`
 * through the agent example's TCP forwarder inside the namespace (as `model-upstream.ts` does: a sandbox
 * with open egress reaches other networks, never the host's own addresses). No test then needs
 * deb.debian.org, and this process sees every request apt makes.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetwork, forwardFromNamespace } from '../integration/support/test-network.js';
import { writeAptRepository, type TestPackage } from './apt-repository.js';

/** The agent example's forwarder (`scripted-model.mjs forward …`). */

/** The mirror's port in its namespace. */
const MIRROR_PORT = 8080;

/** A running mirror. */
export interface AptMirror {
  /** `http://<namespace address>:8080`. */
  readonly origin: string;
  /** Its `sources.list` line: a flat repository, unsigned, so marked trusted. */
  readonly sourceLine: string;
  /** Paths requested so far, in order (`/Release`, `/Packages`, `/<name>_1.0_all.deb`, …). */
  requests(): readonly string[];
  /** Ends the forwarder and the server, deletes the namespace and the repository's files (once). */
  stop(): Promise<void>;
}

/** Answers GET and HEAD with the repository's files; anything else (InRelease, Release.gpg) is a 404. */
function serveFiles(dir: string, seen: string[]): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // URL parsing drops dot segments: apt asks for `/./Release` in a flat repository.
    const path = new URL(req.url ?? '/', 'http://mirror').pathname;
    seen.push(path);
    const name = path.slice(1);
    const size = /^[\w.+-]+$/.test(name) ? statSync(join(dir, name), { throwIfNoEntry: false }) : undefined;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || size === undefined || !size.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': size.size, 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(join(dir, name)).pipe(res);
  };
}

/** Stops `child` if it still runs, and waits for its exit. */
async function end(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/**
 * Builds a repository of `packages` and serves it in a fresh test namespace (`slot` as in
 * `createTestNetwork`).
 */
export async function startAptMirror(slot: number, packages: readonly TestPackage[]): Promise<AptMirror> {
  const network = createTestNetwork(slot);
  const dir = mkdtempSync(join(tmpdir(), 'sdk-apt-mirror-'));
  const seen: string[] = [];
  const server = createServer(serveFiles(dir, seen));
  let forwarder: ChildProcess | undefined;
  let stopped: Promise<void> | undefined;
  // Once, however often it is called (a failed start, then the test's own afterAll).
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await end(forwarder);
      server.closeAllConnections();
      server.close();
      network.destroy();
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    writeAptRepository(dir, packages);
    server.listen(0, network.hostAddress);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    forwarder = await forwardFromNamespace(network, MIRROR_PORT, port);
    const origin = `http://${network.nsAddress}:${String(MIRROR_PORT)}`;
    return { origin, sourceLine: `deb [trusted=yes] ${origin}/ ./`, requests: () => [...seen], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
