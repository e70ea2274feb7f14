/**
 * A control plane for tests: in-process (with an injectable clock) or as a real `sdk serve` child
 * process that a test can SIGKILL. Both keep their journal and templates in a temporary folder.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ControlPlane, type ControlPlaneOptions } from '../../../control-plane/control-plane.js';
import { createControlPlaneServer, type ControlPlaneServerOptions } from '../../../control-plane/http-api.js';
import { operatorKeyFile } from '../../../control-plane/operator-key.js';
import { NamespaceDriver } from '../../../sandbox-drivers/namespace/namespace-driver.js';
import { Sandbox } from '../../../sdk/sandbox.js';

const CLI = fileURLToPath(new URL('../../../dist/cli/sdk.js', import.meta.url));

/**
 * One operator key for every control plane this test process starts; the SDK presents it from
 * `SDK_API_KEY`, as a caller's process would.
 */
export const TEST_OPERATOR_KEY = randomBytes(32).toString('base64url');
process.env.SDK_API_KEY = TEST_OPERATOR_KEY;

/** A control plane in this process, served on loopback. */
export interface InProcessControlPlane {
  readonly plane: ControlPlane;
  readonly url: string;
  readonly stateDir: string;
  readonly driver: NamespaceDriver;
  /** `Sandbox.create` on this control plane, with closed egress (`sdk-base-caps`) unless `options` say otherwise. */
  createSandbox(options?: Parameters<typeof Sandbox.create>[0]): Promise<Sandbox>;
  /** Closes the server and the plane, destroys every sandbox the driver still has, removes the folder. */
  stop(): Promise<void>;
}

/** Starts a control plane in this process. */
export async function startControlPlane(
  options: Partial<ControlPlaneOptions> = {},
  serverOptions: ControlPlaneServerOptions = {},
): Promise<InProcessControlPlane> {
  const stateDir = mkdtempSync(join(tmpdir(), 'sdk-plane-'));
  const driver = new NamespaceDriver({ stateDir, isolations: ['namespace', 'gvisor'] });
  const plane = await ControlPlane.start({
    stateDir,
    driver,
    operatorKey: TEST_OPERATOR_KEY,
    ...options,
  }).catch((error: unknown) => {
    // A start that failed (a stale sandboxd bundle, say) leaves no state folder behind.
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  });
  const server = createControlPlaneServer(plane, serverOptions);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    plane,
    driver,
    stateDir,
    url: `http://127.0.0.1:${String(port)}`,
    createSandbox: (sandboxOptions = {}) =>
      Sandbox.create({
        template: 'sdk-base-caps',
        allowInternetAccess: false,
        controlPlaneUrl: `http://127.0.0.1:${String(port)}`,
        ...sandboxOptions,
      }),
    stop: async () => {
      server.closeAllConnections();
      server.close();
      try {
        await plane.close();
      } finally {
        // Whatever the close did, nothing this control plane launched outlives the test.
        for (const id of await driver.list()) await driver.destroy(id);
        rmSync(stateDir, { recursive: true, force: true });
      }
    },
  };
}

/** `sdk serve` as a child process on `port` with journal and templates in `stateDir`. */
export async function serveControlPlane(stateDir: string, port: number): Promise<ChildProcess> {
  // `sdk serve` keeps the operator key it finds in its state folder: the test's own.
  writeFileSync(operatorKeyFile(stateDir), `${TEST_OPERATOR_KEY}\n`, { mode: 0o600 });
  const child: ChildProcessByStdio<null, Readable, null> = spawn(
    process.execPath,
    [CLI, 'serve', '--port', String(port), '--state-dir', stateDir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // Listening once it says so (it may say it builds a template image first); a child that exits
  // before that (its port taken, say) fails the test now rather than at its first call.
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('control plane on ')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`sdk serve exited (${String(code)}) before it listened`)));
  });
  return child;
}

/** A temporary state folder and a namespace driver on it (for cleanup and checks). */
export function stateFolder(): {
  readonly stateDir: string;
  readonly driver: NamespaceDriver;
  remove(): void;
} {
  const stateDir = mkdtempSync(join(tmpdir(), 'sdk-plane-'));
  return {
    stateDir,
    driver: new NamespaceDriver({ stateDir, isolations: ['namespace', 'gvisor'] }),
    remove: () => rmSync(stateDir, { recursive: true, force: true }),
  };
}
