/**
 * Issue 13: the inspector page in a real browser (Debian chromium driven by playwright-core) against a
 * real control plane with real sandboxes, gateway routes and an agent (opencode and the scripted model
 * over HTTPS). The browser reaches the control plane through a recording proxy, so every byte the page
 * received can be searched for the planted model key (and for the credentials of command lines, masked
 * by sandboxd: issue 24). Snapshots (issue 26) are listed in a sandbox's view, and a sandbox is started
 * from one there. A sandbox's egress policy (issue 27) is shown in the table and its view, and the names
 * its egress filter refused are logged. Screenshots go to test/artifacts/.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxHistorySchema } from '../../../protocol/inspector-api.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { CREDENTIAL_FORMS } from '../../support/credential-forms.js';
import { text, toolCall } from '../../support/model-server/index.js';
import { MODEL_KEY, useAgentWorld } from '../agent/agent-world.js';
import { launchBrowser, screenshot } from '../support/browser.js';
import { TEST_OPERATOR_KEY } from '../support/control-plane.js';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.js';

const world = useAgentWorld(26);

/** Markup a hostile sandbox writes where the page shows it: it must stay text. */
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;

/** What the hostile markup would have set, read in the page (a string: the page's globals are not ours). */
const PWNED = '(globalThis.__pwned)';

let browser: Browser | undefined;
let page: Page;
let proxy: RecordingProxy | undefined;
let agentSandbox: Sandbox | undefined;
let proxyUrl = '';
let agent: Sandbox;

beforeAll(async () => {
  proxy = await startRecordingProxy(world.cp.url);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on('pageerror', (error) => console.error('page error:', error.message));
  agentSandbox = await world.sandbox();
  proxyUrl = proxy.url;
  agent = agentSandbox;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await agentSandbox?.kill();
});

const row = (id: string) => page.locator(`tr[data-sandbox-id="${id}"]`);

async function signIn(): Promise<void> {
  await page.goto(`${proxyUrl}/inspector/`);
  await page.locator('[data-testid=signin] input[name=operator-key]').fill(TEST_OPERATOR_KEY);
  await page.locator('[data-testid=signin] [type=submit]').click();
  await page.locator('[data-testid=sandbox-table]').waitFor();
}

/** The page shows the sandbox view of `id`. */
async function openSandbox(id: string): Promise<void> {
  await page.goto(`${proxyUrl}/inspector/#/sandboxes/${id}`);
  await page.locator(`[data-testid=sandbox-view]`).waitFor();
}

async function history(id: string) {
  const res = await request(`${world.cp.url}/v1/sandboxes/${id}/history`, {
    headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}` },
  });
  return sandboxHistorySchema.parse(await res.body.json());
}

describe('the inspector page', () => {
  it('shows only a sign-in without the operator key, and refuses a wrong one', async () => {
    await page.goto(`${proxyUrl}/inspector/`);
    await page.locator('[data-testid=signin]').waitFor();
    await screenshot(page, 'inspector-sign-in');
    expect(await page.locator('[data-testid=sandbox-table]').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toContain(agent.sandboxId);
    await page.locator('[data-testid=signin] input[name=operator-key]').fill('not-the-operator-key');
    await page.locator('[data-testid=signin] [type=submit]').click();
    await expect.poll(() => page.locator('[data-testid=signin]').isVisible()).toBe(true);
    await page.waitForTimeout(300);
    expect(await page.locator('[data-testid=sandbox-table]').count()).toBe(0);
    await signIn();
    await expect.poll(() => row(agent.sandboxId).getAttribute('data-state')).toBe('running');
  });

  it('shows a new sandbox, its pause within a second, and resumes it from the page', async () => {
    const sbx = await world.cp.createSandbox();
    try {
      await expect.poll(() => row(sbx.sandboxId).count()).toBe(1);
      await sbx.pause();
      await expect
        .poll(() => row(sbx.sandboxId).getAttribute('data-state'), { timeout: 1_000 })
        .toBe('suspended');
      await screenshot(page, 'inspector-table');
      await page.locator('[data-testid=filter]').fill('suspended');
      await expect.poll(() => row(agent.sandboxId).isVisible()).toBe(false);
      expect(await row(sbx.sandboxId).isVisible()).toBe(true);
      await page.locator('[data-testid=filter]').fill('');

      await openSandbox(sbx.sandboxId);
      const view = page.locator('[data-testid=sandbox-view]');
      await expect.poll(() => view.getAttribute('data-state')).toBe('suspended');
      const current = page.locator('svg[data-testid=statechart] g.current');
      await expect.poll(() => current.getAttribute('data-state-id')).toBe('suspended');
      await page.locator('button[data-action=resume]').click();
      await expect.poll(() => view.getAttribute('data-state')).toBe('running');
      await expect.poll(() => current.getAttribute('data-state-id')).toBe('running');
      expect((await sbx.getInfo()).state).toBe('running');
      await page.locator('button[data-action=pause]').click();
      await expect.poll(() => view.getAttribute('data-state')).toBe('suspended');
      expect(world.cp.plane.get(sbx.sandboxId).state).toBe('suspended');
      await page.locator('button[data-action=resume]').click();
      await expect.poll(() => view.getAttribute('data-state')).toBe('running');
      const logged = await page.locator('[data-testid=transition-log] [data-seq]').count();
      expect(logged).toBeGreaterThanOrEqual(2);

      // Time travel: the state at the pause's sequence number, then at creation.
      const { entries } = await history(sbx.sandboxId);
      const paused = entries.find((entry) => entry.event.type === 'pause');
      expect(paused).toBeDefined();
      const travel = page.locator('[data-testid=time-travel]');
      const banner = page.locator('[data-testid=time-travel-banner]');
      for (const [seq, state] of [
        [paused?.seq ?? -1, 'suspended'],
        [0, 'running'],
      ] as const) {
        await travel.fill(String(seq));
        await travel.dispatchEvent('change');
        // A replay of the journal, however long a loaded machine takes for it (no bound is the spec's).
        await expect.poll(() => banner.getAttribute('data-state'), { timeout: 30_000 }).toBe(state);
        await expect.poll(() => current.getAttribute('data-state-id'), { timeout: 30_000 }).toBe(state);
      }
      await screenshot(page, 'inspector-time-travel');
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });

  it('lists commands with their exit codes, hostile command lines as text', async () => {
    const sbx = await world.cp.createSandbox();
    try {
      const result = await sbx.commands.run(`echo '${HOSTILE}' > /dev/null; exit 3`).catch((e: unknown) => e);
      expect(result).toMatchObject({ exitCode: 3 });
      await openSandbox(sbx.sandboxId);
      const commands = page.locator('[data-testid=commands] [data-pid]');
      await expect.poll(() => commands.count()).toBeGreaterThanOrEqual(1);
      const shown = await commands.last().innerText();
      expect(shown).toContain('<img src=x onerror=');
      expect(shown).toContain('3');
      expect(await page.evaluate(PWNED)).toBeUndefined();
      expect(await page.locator('img[src=x]').count()).toBe(0);
      // Its resources: the sample taken at create at least, drawn as both lines, with the figures.
      const chart = page.locator('[data-testid=metrics] svg[data-testid=metrics-chart]');
      await expect
        .poll(async () => Number(await chart.getAttribute('data-samples')), { timeout: 30_000 })
        .toBeGreaterThanOrEqual(1);
      expect(await chart.locator('polyline[data-line]').count()).toBe(2);
      expect(await page.locator('[data-testid=metrics] [data-metric=memory]').innerText()).toContain(
        'memory',
      );
      await screenshot(page, 'inspector-commands');
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });

  it('opens a terminal in the sandbox: types a command, shows its output as text, resizes, reattaches (also after a pause), closes', async () => {
    const sbx = await world.cp.createSandbox();
    try {
      await openSandbox(sbx.sandboxId);
      await page.locator('button[data-action=open-terminal]').click();
      const term = page.locator('[data-testid=terminal]');
      await expect.poll(() => term.getAttribute('data-pid'), { timeout: 30_000 }).toMatch(/^[0-9]+$/);
      const prompt = /[$#]\s*$/m;
      await expect.poll(() => term.innerText(), { timeout: 30_000 }).toMatch(prompt);
      await term.click();
      await page.keyboard.type(`echo $((6*7))-done; printf '%s\\n' '${HOSTILE}'`);
      await page.keyboard.press('Enter');
      await expect.poll(() => term.innerText(), { timeout: 30_000 }).toContain('42-done');
      expect(await term.innerText()).toContain('<img src=x onerror=');
      expect(await page.locator('img[src=x]').count()).toBe(0);
      expect(await page.evaluate(PWNED)).toBeUndefined();
      await page.locator('[data-testid=terminal-panel] input[name=cols]').fill('61');
      await page.locator('[data-testid=terminal-panel] input[name=rows]').fill('19');
      await page.locator('button[data-action=resize-terminal]').click();
      await expect.poll(() => term.locator('.terminal-row').count(), { timeout: 30_000 }).toBe(19);
      await term.click();
      await page.keyboard.type('stty size');
      await page.keyboard.press('Enter');
      await expect.poll(() => term.innerText(), { timeout: 30_000 }).toContain('19 61');
      await screenshot(page, 'inspector-terminal');
      // The shell outlives the page: the view opened again finds it, its screen replayed.
      const pid = await term.getAttribute('data-pid');
      await page.goto(`${proxyUrl}/inspector/#/sandboxes`);
      await openSandbox(sbx.sandboxId);
      await expect.poll(() => term.getAttribute('data-pid'), { timeout: 30_000 }).toBe(pid);
      await expect.poll(() => term.innerText(), { timeout: 30_000 }).toContain('42-done');
      // Opened while the sandbox is suspended, the view waits, and follows the shell once it runs.
      await sbx.pause();
      await page.goto(`${proxyUrl}/inspector/#/sandboxes`);
      await openSandbox(sbx.sandboxId);
      const panel = page.locator('[data-testid=terminal-panel]');
      await expect.poll(() => panel.innerText(), { timeout: 30_000 }).toContain('suspended');
      await sbx.connect();
      await expect.poll(() => term.getAttribute('data-pid'), { timeout: 30_000 }).toBe(pid);
      await expect.poll(() => term.innerText(), { timeout: 30_000 }).toContain('42-done');
      await page.locator('button[data-action=close-terminal]').click();
      await expect
        .poll(() => page.locator('[data-testid=terminal-panel]').innerText(), { timeout: 30_000 })
        .toContain('ended');
      expect(await page.locator('button[data-action=open-terminal]').count()).toBe(1);
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });

  it("shows a sandbox's egress policy and metadata, and logs the names its egress filter refused", async () => {
    const sbx = await world.cp.createSandbox({
      template: 'sdk-base',
      allowInternetAccess: true,
      egress: { mode: 'allowlist', allow: ['allowed.test'] },
      metadata: { owner: 'ci', note: HOSTILE },
    });
    try {
      // The table's chip names the mode.
      await page.goto(`${proxyUrl}/inspector/`);
      const chip = row(sbx.sandboxId).locator('.chip[data-mode]');
      await expect.poll(() => chip.textContent()).toBe('allowlist');

      await openSandbox(sbx.sandboxId);
      const policy = page.locator('[data-testid=sandbox-view] .facts [data-testid=egress-policy]');
      await expect.poll(() => policy.getAttribute('data-mode')).toBe('allowlist');
      expect(await policy.textContent()).toContain('allowed.test');
      expect(await policy.getAttribute('title')).toContain('allow: allowed.test');
      // Metadata (issue 28), as text: markup in a value stays text.
      const metadata = page.locator('[data-testid=sandbox-view] .facts [data-testid=metadata]');
      await expect
        .poll(() => metadata.allTextContents(), { timeout: 30_000 })
        .toEqual(['ownerci', `note${HOSTILE}`]);
      expect(await page.evaluate(PWNED)).toBeUndefined();

      // NXDOMAIN from sandboxd's resolver, and a refused row for the name, via dns, by the allowlist.
      const result = await sbx.commands.run('getent hosts denied.test').catch((e: unknown) => e);
      expect(result).toMatchObject({ exitCode: 2 });
      const refused = page
        .locator('[data-testid=egress-log] tr[data-event=refused][data-via=dns]')
        .filter({ hasText: 'denied.test' });
      await expect.poll(() => refused.count()).toBeGreaterThanOrEqual(1);
      const cells = await refused.first().locator('td').allTextContents();
      expect(cells.slice(1, 4)).toEqual(['refused', 'dns', 'denied.test']);
      expect(cells[5]).toBe('allowlist');
      expect(await page.locator('[data-testid=egress-counts]').textContent()).toMatch(/[1-9]\d* refused/);
      await screenshot(page, 'inspector-egress');
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });

  it('lists command lines with their credentials masked, and no secret reaches the page', async () => {
    const secret = 'S3cr3t-Inspector_0123456789';
    const sbx = await world.cp.createSandbox();
    try {
      // With PATH pointing nowhere none of the programs runs: the lines are recorded all the same.
      for (const form of CREDENTIAL_FORMS) {
        await sbx.commands.run(form.line(secret), { envs: { PATH: '/nonexistent' } }).catch(() => undefined);
      }
      await openSandbox(sbx.sandboxId);
      const cells = page.locator('[data-testid=commands] [data-pid] td.command');
      await expect.poll(() => cells.count()).toBeGreaterThanOrEqual(CREDENTIAL_FORMS.length);
      const shown = await cells.allTextContents();
      for (const form of CREDENTIAL_FORMS) expect(shown, form.name).toContain(form.masked);
      expect(await page.content()).not.toContain(secret);
      expect(proxy?.received().includes(secret)).toBe(false);
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });

  it("streams an agent execution's events, and aborts it from the page", async () => {
    world.upstream.model.reset([
      toolCall('bash', { command: 'ls', description: 'look' }, { usage: { input: 120, output: 30 } }),
      text(`Done. ${HOSTILE}`, { input: 200, output: 40 }),
    ]);
    const done = await agent.agent.run('look around', { spec: world.spec() });
    const [execution] = (await agent.agent.executions()).executions;
    expect(execution).toBeDefined();
    await page.goto(
      `${proxyUrl}/inspector/#/sandboxes/${agent.sandboxId}/executions/${execution?.executionId ?? ''}`,
    );
    const view = page.locator('[data-testid=execution-view]');
    await view.waitFor();
    const events = page.locator('[data-testid=agent-events]');
    await expect.poll(() => events.innerText()).toContain('Done.');
    expect(await events.innerText()).toContain('<script>window.__pwned=2</script>');
    expect(await events.innerText()).toContain('bash');
    expect(done.steps).toBe(2);
    await expect
      .poll(() => page.locator('svg[data-testid=token-chart] rect').count())
      .toBeGreaterThanOrEqual(2);
    // Steps of maxSteps and tokens of maxTotalTokens (the spec's defaults), once the execution is read.
    await expect.poll(() => page.locator('[data-testid=steps-gauge]').innerText()).toContain('2 / 50');
    expect(await page.locator('[data-testid=tokens-gauge]').innerText()).toMatch(/390 \/ 1[,.]?000[,.]?000/);
    await expect.poll(() => page.locator('[data-testid=time-gauge]').innerText()).toMatch(/\//);
    expect(await page.evaluate(PWNED)).toBeUndefined();
    await screenshot(page, 'inspector-execution');

    // A long one, aborted from the page.
    world.upstream.model.reset([toolCall('bash', { command: 'sleep 60', description: 'wait' })]);
    const stream = agent.agent.stream('wait a minute', { spec: world.spec() });
    // Running once the model has asked for the tool (the tool's call lasts a minute).
    await expect.poll(() => world.upstream.model.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const running = (await agent.agent.executions()).current;
    expect(running).not.toBeNull();
    await page.goto(`${proxyUrl}/inspector/#/sandboxes/${agent.sandboxId}/executions/${running ?? ''}`);
    await page.locator('[data-testid=execution-view] button[data-action=abort]').click();
    const error = await stream.result().catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'aborted' });
    await expect.poll(() => view.getAttribute('data-state')).toMatch(/aborted|failed/);
    await screenshot(page, 'inspector-execution-aborted');
    stream.close();
  });

  it("logs the gateway route's requests, and the planted key is in nothing the page received", async () => {
    await openSandbox(agent.sandboxId);
    const routes = page.locator('[data-testid=routes] [data-route="llm"]');
    await routes.waitFor();
    expect(await routes.innerText()).toMatch(/\d{4,5}/); // its port
    const requests = page.locator('[data-testid=request-log] tr');
    await expect
      .poll(() => page.locator('[data-testid=request-log]').innerText())
      .toContain('/v1/chat/completions');
    expect(await requests.count()).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.locator('[data-testid=executions] tr').count()).toBe(2);
    await screenshot(page, 'inspector-gateway');

    const received = proxy?.received() ?? Buffer.alloc(0);
    const sent = proxy?.sent() ?? Buffer.alloc(0);
    expect(received.length).toBeGreaterThan(10_000);
    for (const form of [
      MODEL_KEY,
      Buffer.from(MODEL_KEY).toString('base64'),
      encodeURIComponent(MODEL_KEY),
    ]) {
      expect(received.includes(form)).toBe(false);
      expect(sent.includes(form)).toBe(false);
    }
    expect(await page.content()).not.toContain(MODEL_KEY);
    // The operator key travels only in the Authorization header, never in a URL the page asked for.
    expect(sent.toString('latin1')).not.toMatch(new RegExp(`GET [^\\r\\n]*${TEST_OPERATOR_KEY}`));
  });

  it('a page of another origin cannot use the operator key against the control plane', async () => {
    const other = createServer((_, res) => res.end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const before = world.cp.plane.list().length;
    try {
      const elsewhere = await browser?.newPage();
      if (elsewhere === undefined) throw new Error('no browser');
      await elsewhere.goto(`http://127.0.0.1:${String((other.address() as AddressInfo).port)}/`);
      const outcomes = await elsewhere.evaluate(
        async ({ target, key }) => {
          const attempt = (path: string, init: RequestInit) =>
            fetch(`${target}${path}`, init).then(
              (res) => String(res.status),
              () => 'blocked',
            );
          return [
            await attempt('/v1/inspector/sandboxes', { headers: { authorization: `Bearer ${key}` } }),
            await attempt('/v1/sandboxes', {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: '{}',
            }),
            // A request the browser sends without asking first: refused for its origin.
            await attempt('/v1/sandboxes', { method: 'POST', mode: 'no-cors', body: '{}' }),
          ];
        },
        { target: proxyUrl, key: TEST_OPERATOR_KEY },
      );
      expect(outcomes.slice(0, 2)).toEqual(['blocked', 'blocked']);
      expect(['blocked', '0']).toContain(outcomes[2]); // opaque: the page learns nothing
      await elsewhere.close();
    } finally {
      other.close();
    }
    expect(world.cp.plane.list()).toHaveLength(before);
    expect(proxy?.received().toString('latin1')).not.toContain('access-control-allow-origin');
  });

  it("lists a sandbox's snapshots, takes one, deletes one, and starts a sandbox from one", async () => {
    const original = await world.cp.createSandbox();
    const snapshotIds: string[] = [];
    let copyId: string | undefined;
    try {
      await original.commands.run('echo kept-in-the-snapshot > /home/user/notes');
      const snapshot = await original.snapshot();
      snapshotIds.push(snapshot.id);
      expect(snapshot.kind).toBe('filesystem'); // a namespace sandbox's

      await openSandbox(original.sandboxId);
      const rows = page.locator('[data-testid=snapshots] tr[data-snapshot-id]');
      const listed = page.locator(`[data-testid=snapshots] tr[data-snapshot-id="${snapshot.id}"]`);
      await listed.waitFor();
      expect(await listed.getAttribute('data-kind')).toBe('filesystem');
      expect(await listed.innerText()).toContain('filesystem');

      // One more from the page, listed at once; then deleted from the page (after its confirm step).
      await page.locator('button[data-action=take-snapshot]').click();
      await expect.poll(() => rows.count()).toBe(2);
      const taken = world.cp.plane
        .snapshots(TEST_OPERATOR_KEY, original.sandboxId)
        .find((info) => info.snapshotId !== snapshot.id);
      expect(taken).toBeDefined();
      snapshotIds.push(taken?.snapshotId ?? '');
      await screenshot(page, 'inspector-snapshots');
      const second = page.locator(
        `[data-testid=snapshots] tr[data-snapshot-id="${taken?.snapshotId ?? ''}"]`,
      );
      await second.locator('button[data-action=delete-snapshot]').click();
      await second.locator('button[data-action=confirm-delete-snapshot]').click();
      await expect.poll(() => rows.count()).toBe(1);
      expect(world.cp.plane.snapshots(TEST_OPERATOR_KEY).map((info) => info.snapshotId)).not.toContain(
        taken?.snapshotId,
      );

      // Start a sandbox from the first: the page goes to the new sandbox's view.
      const answer = page.waitForResponse(
        (res) => res.request().method() === 'POST' && new URL(res.url()).pathname === '/v1/sandboxes',
      );
      await listed.locator('button[data-action=start-from-snapshot]').click();
      const created = (await (await answer).json()) as { sandboxId: string; accessToken: string };
      copyId = created.sandboxId;
      expect(copyId).not.toBe(original.sandboxId);
      const view = page.locator('[data-testid=sandbox-view]');
      await expect.poll(() => view.getAttribute('data-sandbox-id')).toBe(copyId);
      expect(page.url()).toContain(`#/sandboxes/${copyId}`);
      await expect.poll(() => view.getAttribute('data-state')).toBe('running');
      await expect.poll(() => page.locator('[data-testid=status]').innerText()).toContain(copyId);
      expect(world.cp.plane.get(copyId).state).toBe('running');
      expect(world.cp.plane.get(copyId).template).toBe('sdk-base-caps');
      // The copy runs a command, and the file written before the snapshot is in it.
      const copy = await Sandbox.connect(copyId, {
        accessToken: created.accessToken,
        controlPlaneUrl: world.cp.url,
      });
      expect((await copy.commands.run('cat /home/user/notes')).stdout.trim()).toBe('kept-in-the-snapshot');
      // The copy's own snapshots: none yet.
      await expect
        .poll(() => page.locator('[data-testid=snapshots]').innerText())
        .toContain('No snapshots of this sandbox yet');
      await screenshot(page, 'inspector-started-from-snapshot');
    } finally {
      if (copyId !== undefined) await world.cp.plane.kill(copyId, TEST_OPERATOR_KEY).catch(() => undefined);
      await original.kill().catch(() => undefined);
      for (const id of snapshotIds) {
        await world.cp.plane.deleteSnapshot(id, TEST_OPERATOR_KEY).catch(() => undefined);
      }
    }
  });

  it('kills a sandbox from the page', async () => {
    const sbx = await world.cp.createSandbox();
    await openSandbox(sbx.sandboxId);
    await page.locator('button[data-action=kill]').click();
    await page.locator('button[data-action=confirm-kill]').click();
    await expect
      .poll(() => page.locator('[data-testid=sandbox-view]').getAttribute('data-state'))
      .toBe('ended');
    expect(world.cp.plane.get(sbx.sandboxId).state).toBe('ended');
    await screenshot(page, 'inspector-killed');
  });
});
