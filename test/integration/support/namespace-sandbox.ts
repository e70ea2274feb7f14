/**
 * A namespace-driver sandbox for tests: launched with a fresh id and token, with a `Commands` client on
 * its sandboxd, destroyed afterwards (and the template state folder removed).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceDriver } from '../../../sandbox-drivers/namespace/namespace-driver.js';
import type { Isolation } from '../../../sandbox-drivers/sandbox-driver.js';
import { isolationFromEnvironment } from '../../../protocol/isolation-environment.js';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { SANDBOXD_ENTRY, SANDBOXD_NODE } from '../../../sandbox-drivers/namespace/sandboxd-process.js';
import { SANDBOXD_NODE_FLAGS } from '../../../protocol/sandboxd-node.js';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';

/** A launched test sandbox. */
/**
 * The host pid of a sandbox's sandboxd, found in the sandbox's own memory cgroup by its exact command
 * line (the bwrap processes beside it end their command lines with the same words).
 *
 * @throws when the sandbox has no sandboxd
 */
export function sandboxdPid(instance: string, sandboxId: string): string {
  const procs = readFileSync(`${cgroupPaths(instance, sandboxId).memory}/cgroup.procs`, 'utf8');
  const commandLine = `${[SANDBOXD_NODE, ...SANDBOXD_NODE_FLAGS, SANDBOXD_ENTRY].join('\0')}\0`;
  const pid = procs
    .split('\n')
    .find((p) => p !== '' && readFileSync(`/proc/${p}/cmdline`, 'utf8') === commandLine);
  if (pid === undefined) throw new Error('no sandboxd process');
  return pid;
}

export interface TestSandbox {
  readonly id: string;
  readonly daemonUrl: string;
  /** A client of its sandboxd, with its token. */
  readonly client: DaemonClient;
  readonly commands: Commands;
}

/** A driver on a temporary state folder, and the sandboxes launched through it. */
export class TestSandboxes {
  readonly stateDir = mkdtempSync(join(tmpdir(), 'sdk-state-'));
  readonly driver = new NamespaceDriver({ stateDir: this.stateDir, isolations: ['namespace', 'gvisor'] });
  readonly #ids = new Set<string>();

  /** Launches a sandbox. */
  async launch(
    options: {
      /** `SDK_ISOLATION`'s by default, else `namespace`. */
      isolation?: Isolation;
      allowInternetAccess?: boolean;
      memoryBytes?: number;
      maxPids?: number;
      cpus?: number;
      /** Trust roots of the sandbox's gateway (a test CA). */
      gatewayCa?: string;
      /** A snapshot's folder to start from (`driver.snapshot`). */
      from?: string;
    } = {},
  ): Promise<TestSandbox> {
    const id = randomBytes(6).toString('hex');
    const accessToken = randomBytes(24).toString('base64url');
    this.#ids.add(id);
    const open = options.allowInternetAccess ?? false;
    const launched = await this.driver.launch({
      id,
      isolation: options.isolation ?? isolationFromEnvironment() ?? 'namespace',
      template: open ? 'sdk-base' : 'sdk-base-caps',
      allowInternetAccess: open,
      memoryBytes: options.memoryBytes ?? 512 * 2 ** 20,
      maxPids: options.maxPids ?? 256,
      cpus: options.cpus ?? 1,
      accessToken,
      ...(options.gatewayCa === undefined ? {} : { gatewayCa: options.gatewayCa }),
      ...(options.from === undefined ? {} : { from: options.from }),
    });
    const client = new DaemonClient({ url: launched.daemonUrl, accessToken });
    return { id, daemonUrl: launched.daemonUrl, client, commands: new Commands(client) };
  }

  /** Destroys every sandbox launched here and removes the state folder. */
  async destroyAll(): Promise<void> {
    try {
      // Every sandbox is destroyed even when one destroy fails; the first failure is reported after.
      const outcomes = await Promise.allSettled([...this.#ids].map((id) => this.driver.destroy(id)));
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    } finally {
      this.driver.close();
      rmSync(this.stateDir, { recursive: true, force: true });
    }
  }
}
