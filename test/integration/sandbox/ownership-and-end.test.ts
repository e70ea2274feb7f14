/**
 * Issue 9 as an operator meets it: two control planes (and this test suite) on one host touch only their
 * own sandboxes; an ended sandbox refuses every call before anything reaches its old address; a sandbox
 * whose sandboxd dies ends as failed, promptly, and says so, whatever else of it still ran (killed: a
 * process of sandbox code, or with `SDK_ISOLATION=gvisor` the box's kernel).
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ControlPlane } from '../../../control-plane/control-plane.js';
import { NamespaceDriver } from '../../../sandbox-drivers/namespace/namespace-driver.js';
import { boxPaths, readBoxState } from '../../../sandbox-drivers/gvisor/runsc-box.js';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { sandboxdPid } from '../support/namespace-sandbox.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { SandboxError } from '../../../rules/errors.js';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';
import { sh } from '../support/test-network.js';

const create = (cp: InProcessControlPlane, options: Parameters<typeof Sandbox.create>[0] = {}) =>
  cp.createSandbox(options);

/** Counts (and drops) packets this host sends to `address`: the proof that nothing went there. */
function countPacketsTo(address: string): { count(): number; remove(): void } {
  const table = `sdkt_to_${String(process.pid)}`;
  sh(
    'nft',
    ['-f', '-'],
    `table inet ${table} {\n  chain out {\n    type filter hook output priority 0; policy accept;\n    ip daddr ${address} counter drop\n  }\n}\n`,
  );
  return {
    count: () => Number(/packets (\d+)/.exec(sh('nft', ['list', 'table', 'inet', table]))?.[1] ?? NaN),
    remove: () => void sh('nft', ['delete', 'table', 'inet', table]),
  };
}

/**
 * A process's start time (clock ticks since boot), undefined once it has ended (gone, or a zombie not
 * yet reaped: a killed box kernel's parent is the host's init): a pid with its start time names one
 * process.
 */
function startTimeOf(pid: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** The host pid and start time of the sandbox's process whose command line is `argv`, once it runs. */
async function sandboxProcess(
  instance: string,
  sandboxId: string,
  argv: string[],
): Promise<{ pid: string; start: string }> {
  const find = (): { pid: string; start: string } | undefined => {
    const procs = readFileSync(`${cgroupPaths(instance, sandboxId).unified}/cgroup.procs`, 'utf8');
    for (const pid of procs.split('\n')) {
      const start = pid === '' ? undefined : startTimeOf(pid);
      const cmdline = start === undefined ? '' : readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (start !== undefined && cmdline === `${argv.join('\0')}\0`) return { pid, start };
    }
    return undefined;
  };
  let found: { pid: string; start: string } | undefined;
  await expect.poll(() => (found = find()), { interval: 20 }).toBeDefined();
  if (found === undefined) throw new Error(`no process ${argv.join(' ')}`);
  return found;
}

/** The host pid and start time of a gVisor sandbox's box kernel. */
async function boxKernel(instance: string, sandboxId: string): Promise<{ pid: string; start: string }> {
  const pid = String((await readBoxState(boxPaths(instance, sandboxId), sandboxId))?.pid ?? '');
  const start = startTimeOf(pid);
  if (start === undefined) throw new Error(`no box kernel for ${sandboxId}`);
  return { pid, start };
}

/**
 * A sandbox of `cp` with a `sleep 600` left running (bubblewrap's pid 1 waits for it, so the sandbox's
 * cgroup does not empty by itself), and `killSandboxd`, which ends its sandboxd from outside with
 * SIGKILL as seen by `driver` (a restarted control plane's, say).
 */
async function sandboxWithSurvivor(cp: InProcessControlPlane): Promise<{
  readonly sbx: Sandbox;
  readonly survivor: { readonly pid: string; readonly start: string };
  readonly killSandboxd: (driver?: NamespaceDriver) => void;
}> {
  const sbx = await create(cp);
  await sbx.commands.run('sleep 600', { background: true });
  // Beside a gVisor box sandbox code's processes are gVisor's, none a host process: what lives on is
  // the box's kernel, with the sleep inside it.
  const survivor =
    (await sbx.getInfo()).isolation === 'gvisor'
      ? await boxKernel(cp.driver.instance, sbx.sandboxId)
      : await sandboxProcess(cp.driver.instance, sbx.sandboxId, ['sleep', '600']);
  return {
    sbx,
    survivor,
    killSandboxd: (driver = cp.driver) =>
      process.kill(Number(sandboxdPid(driver.instance, sbx.sandboxId)), 'SIGKILL'),
  };
}

/** Settles as `promise` does, or fails once `ms` have passed. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} not within ${String(ms)} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const codeOf = (error: unknown): string | undefined =>
  error instanceof SandboxError ? error.code : `not a SandboxError: ${String(error)}`;

describe('ownership', () => {
  it('lets two control planes share the host: each lists, adopts and destroys only its own sandboxes', async () => {
    const first = await startControlPlane();
    let second: InProcessControlPlane | undefined;
    try {
      const mine = await create(first);
      // A second control plane on another state folder starts, reconciles and creates its own sandbox.
      second = await startControlPlane();
      const theirs = await create(second);
      expect((await mine.commands.run('echo still here')).stdout).toBe('still here\n');
      expect(await first.driver.list()).toEqual([mine.sandboxId]);
      expect(await second.driver.list()).toEqual([theirs.sandboxId]);
      // The second one stops and cleans up everything it has: the first one's sandbox lives on.
      await second.stop();
      second = undefined;
      expect((await mine.commands.run('echo still here')).stdout).toBe('still here\n');
      expect(first.plane.get(mine.sandboxId).state).toBe('running');
    } finally {
      await second?.stop();
      await first.stop();
    }
  });
});

describe('ended means ended', () => {
  it('fails every call on a killed handle in the SDK, before any traffic', async () => {
    const cp = await startControlPlane();
    const sbx = await create(cp);
    await sbx.kill();
    await cp.stop(); // nothing answers any more: a call that went out would fail differently
    for (const call of [
      () => sbx.commands.run('true'),
      () => sbx.pause(),
      () => sbx.connect(),
      () => sbx.kill(),
      () => sbx.gateways.readState(),
    ]) {
      expect(codeOf(await call().catch((e: unknown) => e))).toBe('sandbox_ended');
    }
  });

  it('refuses calls for a sandbox that ended by itself: the control plane says so and nothing reaches its old address', async () => {
    const cp = await startControlPlane();
    try {
      const sbx = await create(cp, { timeoutMs: 1_500 });
      const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
      await expect
        .poll(() => cp.plane.get(sbx.sandboxId).state, { timeout: 10_000, interval: 100 })
        .toBe('ended');
      const res = await fetch(`${cp.url}/v1/sandboxes/${sbx.sandboxId}/activity`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sbx.accessToken}` },
      });
      expect(res.status).toBe(409);
      expect(((await res.json()) as { code: string }).code).toBe('sandbox_ended');
      const counter = countPacketsTo(new URL(daemonUrl).hostname);
      try {
        // The creating handle never saw the end: the control plane refuses its activity call.
        expect(codeOf(await sbx.commands.run('true').catch((e: unknown) => e))).toBe('sandbox_ended');
        expect(
          codeOf(
            await Sandbox.connect(sbx.sandboxId, {
              accessToken: sbx.accessToken,
              controlPlaneUrl: cp.url,
            }).catch((e: unknown) => e),
          ),
        ).toBe('sandbox_ended');
        expect(counter.count()).toBe(0);
      } finally {
        counter.remove();
      }
    } finally {
      await cp.stop();
    }
  });

  it("has sandboxd refuse another sandbox's token before it reads a body", async () => {
    const cp = await startControlPlane();
    try {
      const sbx = await create(cp);
      const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
      const url = new URL(daemonUrl);
      // Headers announce a large body that never comes: the answer must not wait for it.
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(
            'POST /v1/processes HTTP/1.1\r\nHost: sandboxd\r\nAuthorization: Bearer not-this-sandboxes-token-at-all\r\ncontent-type: application/json\r\nContent-Length: 100000000\r\n\r\n{"cmd":',
          );
        });
        let text = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\r\n\r\n')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('error', reject);
        setTimeout(() => {
          socket.destroy();
          reject(new Error('no answer before the body'));
        }, 3_000).unref();
      });
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      await sbx.kill();
    } finally {
      await cp.stop();
    }
  });
});

describe('a sandbox whose sandboxd dies', () => {
  it('ends promptly as failed, with the reason in its state and events, and leaves nothing behind', async () => {
    const cp = await startControlPlane();
    try {
      const sbx = await create(cp);
      const ended = firstValueFrom(
        Sandbox.events({ controlPlaneUrl: cp.url }).pipe(
          filter((event) => event.sandboxId === sbx.sandboxId && event.state === 'ended'),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 100)); // the event stream is open
      // The sandbox's own cgroup (not `user`) holds bwrap's init and sandboxd: end sandboxd by its pid.
      const daemon = sandboxdPid(cp.driver.instance, sbx.sandboxId);
      process.kill(Number(daemon), 'SIGKILL');
      expect(await ended).toMatchObject({ state: 'ended', endReason: 'failed' });
      expect(await sbx.getInfo()).toMatchObject({ state: 'ended', endReason: 'failed' });
      await expect.poll(() => cp.driver.list()).toEqual([]);
      expect(codeOf(await sbx.commands.run('true').catch((e: unknown) => e))).toBe('sandbox_ended');
    } finally {
      await cp.stop();
    }
  });

  it('ends promptly as failed while another process of the sandbox lives on, and kills that process', async () => {
    const cp = await startControlPlane();
    try {
      const { sbx, survivor, killSandboxd } = await sandboxWithSurvivor(cp);
      const ended = firstValueFrom(
        Sandbox.events({ controlPlaneUrl: cp.url }).pipe(
          filter((event) => event.sandboxId === sbx.sandboxId && event.state === 'ended'),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 100)); // the event stream is open
      killSandboxd();
      expect(await within(10_000, ended, 'the end event')).toMatchObject({
        state: 'ended',
        endReason: 'failed',
      });
      expect(cp.plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'failed' });
      expect(startTimeOf(survivor.pid)).not.toBe(survivor.start);
      // Namespace, cgroups, view and uid range: nothing of the sandbox is left.
      await expect.poll(() => cp.driver.list()).toEqual([]);
    } finally {
      await cp.stop();
    }
  });

  it('ends as failed when sandboxd is killed while its sandbox is suspended (bubblewrap frozen too)', async () => {
    const cp = await startControlPlane();
    try {
      const { sbx, survivor, killSandboxd } = await sandboxWithSurvivor(cp);
      await sbx.pause();
      killSandboxd();
      await expect
        .poll(() => cp.plane.get(sbx.sandboxId), { timeout: 10_000, interval: 50 })
        .toMatchObject({ state: 'ended', endReason: 'failed' });
      expect(startTimeOf(survivor.pid)).not.toBe(survivor.start);
      await expect.poll(() => cp.driver.list()).toEqual([]);
    } finally {
      await cp.stop();
    }
  });

  it('is seen by a control plane that adopted the sandbox after a restart, survivors killed too', async () => {
    const cp = await startControlPlane();
    let restarted: ControlPlane | undefined;
    try {
      const { sbx, survivor, killSandboxd } = await sandboxWithSurvivor(cp);
      // The first control plane stops (its driver, sandboxd's parent, watches no more); a new one with a
      // driver of its own adopts the sandbox from the same state folder.
      await cp.plane.close();
      const driver = new NamespaceDriver({ stateDir: cp.stateDir });
      restarted = await ControlPlane.start({ stateDir: cp.stateDir, driver, operatorKey: TEST_OPERATOR_KEY });
      expect(restarted.get(sbx.sandboxId).state).toBe('running');
      killSandboxd(driver);
      const plane = restarted;
      await expect
        .poll(() => plane.get(sbx.sandboxId), { timeout: 10_000, interval: 50 })
        .toMatchObject({ state: 'ended', endReason: 'failed' });
      expect(startTimeOf(survivor.pid)).not.toBe(survivor.start);
      await expect.poll(() => driver.list()).toEqual([]);
    } finally {
      await restarted?.close();
      await cp.stop();
    }
  });
});
