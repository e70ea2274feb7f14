/**
 * A network namespace the test creates, joined to the host by a veth pair with addresses from the
 * benchmarking range 198.18.0.0/15 (RFC 2544), and removed with everything in it afterwards. Names and
 * addresses derive from the process id, so parallel test files never collide.
 */
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pickFreeSubnet } from '../../../sandbox-drivers/namespace/free-subnet.js';

/** One test namespace. */
export interface TestNetwork {
  /** Namespace name. */
  readonly ns: string;
  /** The host end's address. */
  readonly hostAddress: string;
  /** The namespace end's address: where test upstreams listen. */
  readonly nsAddress: string;
  /** Runs `nft -f -` with `rules` inside the namespace. */
  nftInNamespace(rules: string): void;
  /** Deletes the namespace (and with it the veth pair and anything it held). */
  destroy(): void;
}

/** Runs a command, throwing with its stderr on failure. */
export function sh(command: string, args: readonly string[], input?: string): string {
  return execFileSync(command, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** 2^15 /30s in the benchmarking range 198.18.0.0/15 (RFC 2544). */
const TEST_RANGE = { base: 198 * 2 ** 24 + 18 * 2 ** 16, subnets: 2 ** 15, name: '198.18.0.0/15' };

/**
 * Creates a namespace. `slot` (0..63) separates namespaces of one process.
 */
export function createTestNetwork(slot: number): TestNetwork {
  const id = `${String(process.pid % 100_000)}s${String(slot)}`;
  const ns = `sdkt-${id}`;
  const hostVeth = `vh${id}`;
  const nsVeth = `vn${id}`;
  const [hostAddress, nsAddress] = pickFreeSubnet(
    sh('ip', ['-4', '-o', 'addr', 'show']),
    TEST_RANGE,
    process.pid * 64 + slot,
  );
  sh('ip', ['netns', 'add', ns]);
  try {
    sh('ip', ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', nsVeth, 'netns', ns]);
    sh('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostVeth]);
    sh('ip', ['link', 'set', hostVeth, 'up']);
    sh('ip', ['-n', ns, 'addr', 'add', `${nsAddress}/30`, 'dev', nsVeth]);
    sh('ip', ['-n', ns, 'link', 'set', nsVeth, 'up']);
    sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    sh('ip', ['netns', 'del', ns]);
    throw error;
  }
  return {
    ns,
    hostAddress,
    nsAddress,
    nftInNamespace: (rules) => void sh('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], rules),
    destroy: () => void sh('ip', ['netns', 'del', ns]),
  };
}

/**
 * The agent example's TCP forwarder (`scripted-model.mjs forward …`), from the sources: found from the
 * package's root, the first folder up with a package.json, so a compiled copy of this module (the
 * benchmarks' `.bench-build/`, one level deeper) finds it too.
 */
const FORWARDER = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'examples', 'scripted-model.mjs');
})();

/**
 * Starts the forwarder inside `network`'s namespace: a connection to `network.nsAddress:port` there
 * reaches `network.hostAddress:target` on the host (a server of the test's, reached by a sandbox as if
 * it were another machine). Resolves once it listens; the caller ends it.
 */
export async function forwardFromNamespace(
  network: TestNetwork,
  port: number,
  target: number,
): Promise<ChildProcessByStdio<null, Readable, null>> {
  const forwarder = spawn(
    'ip',
    [
      'netns',
      'exec',
      network.ns,
      process.execPath,
      FORWARDER,
      'forward',
      network.nsAddress,
      String(port),
      network.hostAddress,
      String(target),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    forwarder.once('exit', (code) => reject(new Error(`forwarder exited with ${String(code)}`)));
    forwarder.stdout.once('data', () => resolve()); // "ready"
  });
  return forwarder;
}
