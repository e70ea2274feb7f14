/**
 * A prepared runtime in a memory snapshot (issue 26, "the reason users snapshot agents"): a gVisor
 * `sdk-agent` sandbox snapshotted after `agent.prepare({ spec })` holds the warmed-up opencode. A copy started
 * from it with its gateways given again binds the routes on their old ports (what that opencode was
 * configured with), and its first run that fits adopts that runtime instead of starting another. The box
 * gives a held program to one bridge at a time, and nothing else to any. Only gVisor's snapshots hold
 * processes: this file runs once, with gVisor sandboxes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { firstValueFrom, takeUntil, timer, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../protocol/daemon-events.js';
import { boxPaths } from '../../../sandbox-drivers/gvisor/runsc-box.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import type { Snapshot } from '../../../sdk/snapshot.js';
import { text } from '../../support/model-server/index.js';
import { useAgentWorld } from './agent-world.js';

const world = useAgentWorld(27);

/** The pids of opencode runtimes in `sbx`. */
async function runtimes(sbx: Sandbox): Promise<number[]> {
  const listed = await sbx.commands.run("ps -eo pid,args | grep '[o]pencode run' | awk '{print $1}' || true");
  return listed.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

/** The pids of the opencode processes sandboxd of `sbx` recorded a start of (started or taken over). */
async function runtimeStarts(sbx: Sandbox): Promise<number[]> {
  const records: DaemonEvent[] = await firstValueFrom(sbx.events$.pipe(takeUntil(timer(500)), toArray()));
  return records.flatMap((r) =>
    r.type === 'process' && r.event === 'start' && r.command?.includes('opencode') === true ? [r.pid] : [],
  );
}

/** `gvisor-exec` as the build leaves it (what every sandboxd's image holds). */
const GVISOR_EXEC = fileURLToPath(new URL('../../../dist/sandboxd/gvisor-exec', import.meta.url));

/**
 * What a bridge asking `sbx`'s box, from the host as root, for program `pid`'s stdio says on its status
 * descriptor: `pid <pid>` once it has it, or `error <stage> <errno>`.
 */
async function attachFromHost(sbx: Sandbox, pid: number): Promise<string> {
  const socket = join(boxPaths(world.cp.driver.instance, sbx.sandboxId).control, 'control.sock');
  const args = ['enter', '--socket', socket, '--container', sbx.sandboxId, '--attach', String(pid)];
  const child = spawn(GVISOR_EXEC, [...args, '--status-fd', '3'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  const status = child.stdio[3] as Readable;
  let said = '';
  status.setEncoding('utf8').on('data', (text: string) => (said += text));
  await once(child, 'close');
  return said.trim();
}

/**
 * True once runtime `pid` in `sbx` used no CPU for a second: opencode has initialised and waits for its
 * prompt. (A runtime snapshotted within its first second once did not survive into the copy, in a full
 * suite on a fresh machine; the cause is not known yet: the note says so.)
 */
async function settled(sbx: Sandbox, pid: number): Promise<boolean> {
  const cpu = `cut -d' ' -f14,15 /proc/${String(pid)}/stat`;
  const probe = `a=$(${cpu}) && sleep 1 && b=$(${cpu}) && [ "$a" = "$b" ] && echo settled || true`;
  return (await sbx.commands.run(probe)).stdout === 'settled\n';
}

const portsOf = (sbx: Sandbox): Record<string, number> =>
  Object.fromEntries([...sbx.gateways].map(([name, status]) => [name, status.port]));

describe('a runtime prepared before a memory snapshot', () => {
  it("is taken over by a copy's first fitting run, the copy's routes on the original's ports", async () => {
    const create = (snapshot?: Snapshot): Promise<Sandbox> =>
      world.cp.createSandbox({
        template: 'sdk-agent',
        isolation: 'gvisor',
        gateways: world.gateways(),
        secretCache: world.secretCache,
        ...(snapshot === undefined ? {} : { snapshot }),
      });
    const spec = world.spec();
    const original = await create();
    let copy: Sandbox | undefined;
    try {
      original.agent.prepare({ spec }); // its configuration written first: no run before
      await expect.poll(() => runtimes(original), { timeout: 60_000 }).toHaveLength(1);
      const [prepared] = await runtimes(original);
      // The box gives a held program to no second bridge while its own lives, nor any other process.
      const ESRCH = 'error attach 3';
      expect(await attachFromHost(original, prepared ?? 0)).toBe(ESRCH);
      expect(await attachFromHost(original, 1)).toBe(ESRCH);
      await expect.poll(() => settled(original, prepared ?? 0), { timeout: 60_000 }).toBe(true);
      const snapshot = await original.snapshot();
      const ports = portsOf(original);
      await original.kill();

      copy = await create(snapshot);
      expect(portsOf(copy)).toEqual(ports);
      expect(await runtimes(copy)).toEqual([prepared]);
      world.upstream.model.reset([text('adopted')]);
      expect((await copy.agent.run('use it', { spec })).text).toBe('adopted');
      // No runtime was started in the copy: the run's is the one the original prepared.
      expect(await runtimeStarts(copy)).toEqual([prepared]);
      expect(await runtimes(copy)).toEqual([]);
    } finally {
      await original.kill().catch(() => undefined);
      await copy?.kill();
    }
  });
});
