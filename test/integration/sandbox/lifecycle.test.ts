import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { IdlePolicy } from '../../../sdk/idle-policy.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { AuthenticationError, InvalidArgumentError } from '../../../rules/errors.js';
import { inAnotherSdkProcess, useControlPlane } from '../support/control-plane-hooks.js';

const cp = useControlPlane();

const create = (options: Parameters<typeof Sandbox.create>[0] = {}) => cp.createSandbox(options);

describe('sandbox lifecycle through the SDK', () => {
  it('creates, runs commands, pauses, resumes and kills, leaving nothing behind', async () => {
    const sbx = await create();
    const states = firstValueFrom(sbx.state$.pipe(take(5), toArray()));
    // The isolation this run asked for (the integration-gvisor project sets SDK_ISOLATION), and got.
    const isolation = process.env.SDK_ISOLATION ?? 'namespace';
    expect((await sbx.getInfo()).isolation).toBe(isolation);
    expect((await sbx.commands.run('uname -r')).stdout.includes('gvisor')).toBe(isolation === 'gvisor');
    expect((await sbx.commands.run('echo hello; id -u')).stdout).toBe('hello\n1000\n');
    await sbx.commands.run('echo kept > /tmp/note');
    await sbx.pause();
    expect(await sbx.getInfo()).toMatchObject({ state: 'suspended', suspendReason: 'paused' });
    await sbx.connect();
    expect((await sbx.getInfo()).state).toBe('running');
    expect((await sbx.commands.run('cat /tmp/note')).stdout).toBe('kept\n');
    await sbx.pause();
    // Any SDK call resumes a suspended sandbox first (autoResume is on by default).
    expect((await sbx.commands.run('echo again')).stdout).toBe('again\n');
    await sbx.kill();
    expect(await sbx.getInfo()).toMatchObject({ state: 'ended', endReason: 'killed' });
    expect(await states).toEqual(['running', 'suspended', 'running', 'suspended', 'running']);
    expect(await cp.driver.list()).not.toContain(sbx.sandboxId);
  });

  it('lets another process connect with the token and re-attach to a background command after pause/resume', async () => {
    const sbx = await create();
    const ticker = await sbx.commands.run('for i in 1 2 3; do echo tick $i; sleep 0.3; done', {
      background: true,
    });
    await sbx.pause();
    await sbx.connect();
    const script = `
      const { Sandbox } = await import('sdk');
      const sbx = await Sandbox.connect(process.argv[1], { controlPlaneUrl: process.argv[2] });
      const handle = await sbx.commands.connect(Number(process.argv[3]));
      const result = await handle.wait();
      console.log(JSON.stringify({ stdout: result.stdout, id: (await sbx.commands.run('id -u')).stdout }));
    `;
    expect(await inAnotherSdkProcess(script, sbx, cp.url, String(ticker.pid))).toEqual({
      stdout: 'tick 1\ntick 2\ntick 3\n',
      id: '1000\n',
    });
    await sbx.kill();
  });

  it('refuses connect without a token, and a wrong token at the first authenticated call', async () => {
    const sbx = await create();
    const saved = process.env.SDK_ACCESS_TOKEN;
    delete process.env.SDK_ACCESS_TOKEN;
    try {
      await expect(Sandbox.connect(sbx.sandboxId, { controlPlaneUrl: cp.url })).rejects.toBeInstanceOf(
        AuthenticationError,
      );
      // A token the sandbox refuses does not fail connect: gateways stay empty, the first call raises.
      const wrong = await Sandbox.connect(sbx.sandboxId, {
        controlPlaneUrl: cp.url,
        accessToken: 'not-the-token',
      });
      expect(wrong.gateways.size).toBe(0);
      await expect(wrong.commands.run('true')).rejects.toBeInstanceOf(AuthenticationError);
      await expect(wrong.kill()).rejects.toBeInstanceOf(AuthenticationError);
      await expect(Sandbox.connect('not-an-id', { accessToken: 'x' })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    } finally {
      if (saved !== undefined) process.env.SDK_ACCESS_TOKEN = saved;
    }
    await sbx.kill();
  });

  it('refuses closed egress on a template that cannot close it, before launching anything', async () => {
    const before = await cp.driver.list();
    await expect(create({ template: 'sdk-base' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await cp.driver.list()).toEqual(before);
  });

  it('suspends after the idle time and resumes on the next SDK call', async () => {
    const sbx = await create({ idlePolicy: new IdlePolicy({ maxIdleSeconds: 1 }) });
    await sbx.commands.run('echo busy > /tmp/state');
    await expect
      .poll(async () => (await sbx.getInfo()).state, { timeout: 5_000, interval: 200 })
      .toBe('suspended');
    expect((await sbx.getInfo()).suspendReason).toBe('idle');
    expect((await sbx.commands.run('cat /tmp/state')).stdout).toBe('busy\n');
    expect((await sbx.getInfo()).state).toBe('running');
    await sbx.kill();
  });

  it('streams every state change of the control plane, and gives a lazy agent that makes no call', async () => {
    const seen: string[] = [];
    let id = '';
    const subscription = Sandbox.events({ controlPlaneUrl: cp.url }).subscribe(({ sandboxId, state }) => {
      if (sandboxId === id) seen.push(state);
    });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the stream is open
    const sbx = await create();
    id = sbx.sandboxId;
    expect(sbx.agent).toBe(sbx.agent);
    await sbx.pause();
    await sbx.connect();
    await sbx.kill();
    // The creation itself ('running') may arrive before this test knows the id.
    await expect.poll(() => seen.slice(-3)).toEqual(['suspended', 'running', 'ended']);
    expect(seen.length).toBeLessThanOrEqual(4);
    subscription.unsubscribe();
  });

  it('serves its OpenAPI document', async () => {
    const doc = (await (await fetch(`${cp.url}/v1/openapi.json`)).json()) as {
      openapi: string;
      paths: object;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/sandboxes',
        '/v1/sandboxes/{sandboxId}',
        '/v1/sandboxes/{sandboxId}/pause',
      ]),
    );
  });
});
