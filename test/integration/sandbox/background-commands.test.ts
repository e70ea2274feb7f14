/**
 * Issue 16: background commands through a real control plane and real sandboxes. A background command
 * takes its callbacks, cwd, envs and timeout; `list()` shows it running then ended; `connect(pid)`
 * re-attaches with its output from the start, after a pause and resume and from another SDK process;
 * `kill()` and `sendStdin()` work on it; each call is activity for the idle policy; and the inspector's
 * record feed (what its commands panel reads) shows it start and end, with no credential of its command
 * line in it (issue 24: each form of `CREDENTIAL_FORMS`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ndjsonValues } from '../../../protocol/ndjson.js';
import { InvalidArgumentError } from '../../../rules/errors.js';
import type { CommandRunOptions } from '../../../sdk/commands.js';
import { IdlePolicy } from '../../../sdk/idle-policy.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { CREDENTIAL_FORMS, shownParts } from '../../support/credential-forms.js';
import { TEST_OPERATOR_KEY, type InProcessControlPlane } from '../support/control-plane.js';
import { inAnotherSdkProcess, useControlPlane } from '../support/control-plane-hooks.js';

const cp = useControlPlane();

/** Runs `test` with a new sandbox, killed afterwards whatever happened. */
async function withSandbox(
  test: (sbx: Sandbox) => Promise<void>,
  options: Parameters<InProcessControlPlane['createSandbox']>[0] = {},
): Promise<void> {
  const sbx = await cp.createSandbox(options);
  try {
    await test(sbx);
  } finally {
    await sbx.kill().catch(() => undefined);
  }
}

/** Text chunks a callback received, joined. */
function recorder(): { readonly chunks: string[]; readonly push: (data: string) => void; text(): string } {
  const chunks: string[] = [];
  return { chunks, push: (data) => chunks.push(data), text: () => chunks.join('') };
}

/** The first record of the inspector's feed for `sandboxId` (with the operator key) that `matches`. */
async function inspectorRecord(
  sandboxId: string,
  matches: (record: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const res = await request(`${cp.url}/v1/sandboxes/${sandboxId}/records`, {
    headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}` },
    signal: AbortSignal.timeout(15_000),
  });
  expect(res.statusCode).toBe(200);
  try {
    for await (const value of ndjsonValues(res.body)) {
      const record = value as Record<string, unknown>;
      if (matches(record)) return record;
    }
  } finally {
    res.body.destroy();
  }
  throw new Error('the record feed ended without the record');
}

/** Every record of the inspector's feed for `sandboxId` until `done` says it has them all. */
async function inspectorRecords(
  sandboxId: string,
  done: (records: readonly Record<string, unknown>[]) => boolean,
): Promise<Record<string, unknown>[]> {
  const res = await request(`${cp.url}/v1/sandboxes/${sandboxId}/records`, {
    headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}` },
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.statusCode).toBe(200);
  const records: Record<string, unknown>[] = [];
  try {
    for await (const value of ndjsonValues(res.body)) {
      records.push(value as Record<string, unknown>);
      if (done(records)) return records;
    }
  } finally {
    res.body.destroy();
  }
  throw new Error('the record feed ended without the records');
}

/**
 * Runs each form's line with `secret` in `sbx`, one after the other, and returns the pids. With PATH
 * pointing nowhere none of their programs runs (no network, nothing to wait for): the lines are
 * recorded as given all the same.
 */
async function runForms(sbx: Sandbox, secret: string): Promise<number[]> {
  const pids: number[] = [];
  for (const form of CREDENTIAL_FORMS) {
    const handle = await sbx.commands.run(form.line(secret), {
      background: true,
      envs: { PATH: '/nonexistent' },
    });
    await handle.wait().catch(() => undefined); // 127: not found
    pids.push(handle.pid);
  }
  return pids;
}

describe('background commands through a real sandbox', () => {
  it('run with callbacks, cwd, envs and the sandbox user, and show in list() running then ended', async () => {
    await withSandbox(async (sbx) => {
      const out = recorder();
      const err = recorder();
      const cmd = 'echo "$GREETING from $(pwd) as $(id -u)"; echo warning >&2; read line; echo "got $line"';
      const handle = await sbx.commands.run(cmd, {
        background: true,
        cwd: '/tmp',
        envs: { GREETING: 'hello' },
        user: 'user',
        onStdout: out.push,
        onStderr: err.push,
      });
      expect(handle.pid).toBeGreaterThan(0);
      await expect.poll(() => out.text()).toBe('hello from /tmp as 1000\n');
      expect(await sbx.commands.list()).toContainEqual({ pid: handle.pid, cmd, running: true });
      await handle.sendStdin('the input\n');
      const result = await handle.wait();
      expect(result).toEqual({
        stdout: 'hello from /tmp as 1000\ngot the input\n',
        stderr: 'warning\n',
        exitCode: 0,
        signal: null,
      });
      expect(out.text()).toBe(result.stdout);
      expect(err.text()).toBe('warning\n');
      expect(await sbx.commands.list()).toContainEqual({ pid: handle.pid, cmd, running: false });
    });
  });

  it('end at timeoutMs, keeping what they wrote', async () => {
    await withSandbox(async (sbx) => {
      const started = Date.now();
      const handle = await sbx.commands.run('echo started; sleep 30', { background: true, timeoutMs: 800 });
      const result = await handle.wait();
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(result).toEqual({ stdout: 'started\n', stderr: '', exitCode: null, signal: 'SIGTERM' });
    });
  });

  it('are killed with their tree by kill(), and a later connect gives the whole story', async () => {
    await withSandbox(async (sbx) => {
      const out = recorder();
      const handle = await sbx.commands.run('echo up; sleep 300 & sleep 300', {
        background: true,
        onStdout: out.push,
      });
      await expect.poll(() => out.text()).toBe('up\n'); // the tree is up: killed from here on
      await handle.kill();
      const result = await handle.wait();
      expect(result.stdout).toBe('up\n');
      expect(result.exitCode).toBeNull();
      expect(['SIGTERM', 'SIGKILL']).toContain(result.signal);
      expect((await sbx.commands.list()).find((p) => p.pid === handle.pid)?.running).toBe(false);
      // Nothing of the tree is left.
      expect((await sbx.commands.run('cat /proc/[0-9]*/comm')).stdout).not.toContain('sleep');
      const again = await sbx.commands.connect(handle.pid);
      expect(await again.wait()).toEqual(result);
    });
  });

  it("refuse any user but 'user' or 'root' before any call", async () => {
    await withSandbox(async (sbx) => {
      for (const user of ['nobody', '', 'ROOT']) {
        const options = { background: true, user } as unknown as CommandRunOptions & { background: true };
        const refused = await sbx.commands.run('id -u', options).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(InvalidArgumentError);
        expect(refused).toMatchObject({ field: 'user' });
        expect((refused as Error).message).toBe("commands.run: user: must be 'user' or 'root'");
      }
      // Nothing was started.
      expect(await sbx.commands.list()).toEqual([]);
    });
  });

  it('are re-attached after a pause and resume: output from the start, then the rest to the end', async () => {
    await withSandbox(async (sbx) => {
      const first = recorder();
      const handle = await sbx.commands.run(
        'echo before; read line; echo "after $line"; for i in 1 2 3; do echo tick $i; sleep 0.2; done',
        { background: true, onStdout: first.push },
      );
      await expect.poll(() => first.text()).toBe('before\n');
      await sbx.pause();
      expect(await sbx.getInfo()).toMatchObject({ state: 'suspended', suspendReason: 'paused' });
      await sbx.connect();
      const seen = recorder();
      const attached = await sbx.commands.connect(handle.pid, { onStdout: seen.push });
      await expect.poll(() => seen.text()).toBe('before\n'); // the output from before the pause
      expect((await sbx.commands.list()).find((p) => p.pid === handle.pid)?.running).toBe(true);
      await attached.sendStdin('resume\n');
      const expected = 'before\nafter resume\ntick 1\ntick 2\ntick 3\n';
      expect(await attached.wait()).toEqual({ stdout: expected, stderr: '', exitCode: 0, signal: null });
      expect(seen.text()).toBe(expected);
      // The handle that started it followed it across the pause too.
      expect((await handle.wait()).stdout).toBe(expected);
      expect(first.text()).toBe(expected);
    });
  });

  it('are re-attached from another SDK process, which sees the output from the start and writes stdin', async () => {
    await withSandbox(async (sbx) => {
      const out = recorder();
      const handle = await sbx.commands.run(
        'echo "first in $PWD"; echo early >&2; read line; echo "second $line"',
        { background: true, cwd: '/tmp', onStdout: out.push },
      );
      await expect.poll(() => out.text()).toBe('first in /tmp\n');
      await sbx.pause(); // the other process's connect resumes it
      const script = `
        const { Sandbox } = await import('sdk');
        const [id, url, pid] = process.argv.slice(1);
        const sbx = await Sandbox.connect(id, { controlPlaneUrl: url });
        const out = [];
        const err = [];
        const handle = await sbx.commands.connect(Number(pid), {
          onStdout: (data) => out.push(data),
          onStderr: (data) => err.push(data),
        });
        const listed = (await sbx.commands.list()).find((p) => p.pid === Number(pid));
        await handle.sendStdin('from the other process\\n');
        const result = await handle.wait();
        console.log(JSON.stringify({ result, out: out.join(''), err: err.join(''), listed }));
      `;
      const seen = await inAnotherSdkProcess(script, sbx, cp.url, String(handle.pid));
      const expected = 'first in /tmp\nsecond from the other process\n';
      expect(seen).toEqual({
        result: { stdout: expected, stderr: 'early\n', exitCode: 0, signal: null },
        out: expected,
        err: 'early\n',
        listed: { pid: handle.pid, cmd: expect.stringContaining('read line') as unknown, running: true },
      });
      expect((await handle.wait()).stdout).toBe(expected);
    });
  });

  it('count as activity for the idle policy: calls on a background command keep the sandbox running', async () => {
    await withSandbox(
      async (sbx) => {
        const reader = await sbx.commands.run('cat > /dev/null', { background: true });
        // Three idle periods of calls on the command, never a second apart: it stays running.
        const until = Date.now() + 6_000;
        while (Date.now() < until) {
          await sleep(600);
          await reader.sendStdin('x');
          expect(cp.plane.get(sbx.sandboxId).state).toBe('running');
        }
        // Without calls it suspends after the idle time, the command kept.
        await expect
          .poll(() => cp.plane.get(sbx.sandboxId), { timeout: 10_000, interval: 200 })
          .toMatchObject({ state: 'suspended', suspendReason: 'idle' });
        // Re-attaching is an SDK call: it resumes the sandbox, and the command is still there.
        const attached = await sbx.commands.connect(reader.pid);
        expect(cp.plane.get(sbx.sandboxId).state).toBe('running');
        expect((await sbx.commands.list()).find((p) => p.pid === reader.pid)?.running).toBe(true);
        await attached.closeStdin();
        expect((await attached.wait()).exitCode).toBe(0);
      },
      { idlePolicy: new IdlePolicy({ maxIdleSeconds: 2 }) },
    );
  });

  it("appear in the inspector's record feed (its commands panel) when they start and end", async () => {
    await withSandbox(async (sbx) => {
      const cmd = 'echo listed; sleep 300';
      const handle = await sbx.commands.run(cmd, { background: true });
      const isOurs = (event: string) => (record: Record<string, unknown>) =>
        record.type === 'process' && record.pid === handle.pid && record.event === event;
      expect(await inspectorRecord(sbx.sandboxId, isOurs('start'))).toMatchObject({
        sandboxId: sbx.sandboxId,
        command: cmd,
      });
      await handle.kill();
      await handle.wait();
      const end = await inspectorRecord(sbx.sandboxId, isOurs('end'));
      expect(end).toMatchObject({ exitCode: null });
      expect(['SIGTERM', 'SIGKILL']).toContain(end.signal);
      // Records carry no output.
      expect(JSON.stringify(end)).not.toContain('listed');
    });
  });

  it("show no credential in the inspector's record feed: each form masked in its command line", async () => {
    const plain = 'S3cr3t-Records_0123456789';
    const nasty = `Xq7'Zr8"Wp9\\Vk6$(Tn5)\`Ub4;Mc3|Ld2&Ke1<Jf0>Ig9{Hh8}Gi7*Fj6?Ek5~Dl4#Cm3!Bn2=Ao1:Yp0@`;
    await withSandbox(async (sbx) => {
      const plainPids = await runForms(sbx, plain);
      const nastyPids = await runForms(sbx, nasty);
      const starts = new Map<unknown, Record<string, unknown>>();
      const feed = await inspectorRecords(sbx.sandboxId, (records) => {
        const last = records.at(-1);
        if (last?.type === 'process' && last.event === 'start') starts.set(last.pid, last);
        return [...plainPids, ...nastyPids].every((pid) => starts.has(pid));
      });
      CREDENTIAL_FORMS.forEach((form, i) => {
        const shown = starts.get(plainPids[i]);
        expect(shown, form.name).toMatchObject({ sandboxId: sbx.sandboxId, command: form.masked });
        const command = String(starts.get(nastyPids[i])?.command);
        expect(shownParts(command, nasty, form), `${form.name}: ${command}`).toEqual([]);
      });
      expect(JSON.stringify(feed)).not.toContain(plain);
    });
  });
});
