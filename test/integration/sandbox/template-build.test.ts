/**
 * Issue 14 on the real driver: `sdk template build` makes an agent image of its own on sdk-base-caps
 * (runtime_b left out on request), a second build of the same options does nothing, a build whose
 * runtime folder is missing fails at that step and leaves no template; every sandbox gets a
 * copy-on-write view of its template (sandbox code installs into /usr/local, a second sandbox and the
 * image never see it, the view's size is bounded, destroy removes it); and `prefetch` reads the runtime
 * into the page cache again after a resume.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { templateBuild } from '../../../cli/template-build.js';
import { AGENTS_STEP, DEFAULT_AGENT_SPEC } from '../../../sandbox-drivers/namespace/agent-template.js';
import { ImageBuildError } from '../../../sandbox-drivers/namespace/image-layers.js';
import { NamespaceDriver } from '../../../sandbox-drivers/namespace/namespace-driver.js';
import { viewPaths } from '../../../sandbox-drivers/namespace/root-view.js';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { sandboxdPid } from '../support/namespace-sandbox.js';

let cp: InProcessControlPlane;
const savedUrl = process.env.SDK_CONTROL_PLANE_URL;

beforeAll(async () => {
  cp = await startControlPlane();
  process.env.SDK_CONTROL_PLANE_URL = cp.url;
});
afterAll(async () => {
  if (savedUrl === undefined) delete process.env.SDK_CONTROL_PLANE_URL;
  else process.env.SDK_CONTROL_PLANE_URL = savedUrl;
  await cp.stop();
});

const output = (): { text: string; write(text: string): void } => {
  const out = {
    text: '',
    write(text: string): void {
      out.text += text;
    },
  };
  return out;
};

/** Bytes sandboxd of `sbx` has read so far (`rchar` of its /proc/<pid>/io). */
const bytesRead = (sbx: Sandbox): number =>
  Number(
    /rchar: (\d+)/.exec(
      readFileSync(`/proc/${sandboxdPid(cp.driver.instance, sbx.sandboxId)}/io`, 'utf8'),
    )?.[1],
  );

describe('sdk template build', () => {
  it('builds an agent image without runtime_b, which sandboxes of it run; the same build again does nothing', async () => {
    const out = output();
    const args = ['--name', 'lean-agent', '--no-runtime-b', '--no-prefetch', '--memory-mb', '768'];
    expect(await templateBuild(args, out)).toBe(0);
    expect(out.text).toMatch(/^step 1\/\d+: agents runtime/);
    expect(out.text).toMatch(/built template lean-agent on sdk-base-caps/);
    const manifest = JSON.parse(
      readFileSync(join(cp.stateDir, 'templates', 'lean-agent', 'manifest.json'), 'utf8'),
    ) as { recipe: { trees: unknown }; agent: unknown; memoryMb: number };
    expect(manifest.agent).toEqual({ runtimeB: false, prefetch: false, kernelWarmup: false });
    expect(manifest.recipe.trees).toEqual([
      { name: 'agents', to: '/opt/agents', without: ['node', 'runtime-b'] },
    ]);

    const sbx = await cp.createSandbox({ template: 'lean-agent' });
    try {
      const { stdout } = await sbx.commands.run(
        'id -u; /opt/agents/bin/opencode --version; /opt/agents/bin/rg --version | head -1; ls /opt/agents',
      );
      const lines = stdout.split('\n');
      expect(lines[0]).toBe('1000');
      expect(lines[1]).toMatch(/^\d+\.\d+\.\d+$/);
      expect(lines[2]).toMatch(/^ripgrep /);
      expect(lines[3]).toBe('bin');
      expect(stdout).not.toContain('runtime-b');
      // The template's memory default (--memory-mb 768), as the sandbox's limit.
      const limit = readFileSync(
        join(cgroupPaths(cp.driver.instance, sbx.sandboxId).userMemory, 'memory.limit_in_bytes'),
        'utf8',
      );
      expect(Number(limit)).toBe(768 * 2 ** 20);
    } finally {
      await sbx.kill();
    }

    const again = output();
    expect(await templateBuild(args, again)).toBe(0);
    expect(again.text).toMatch(/template lean-agent is up to date/);
    expect(again.text).not.toMatch(/step \d+\/\d+: (debian|npm|agents at).*[^)]$/m); // every layer cached
  });

  it('refuses other options under the same name without --force', async () => {
    const out = output();
    expect(await templateBuild(['--name', 'lean-agent'], out)).toBe(2);
    expect(out.text).toMatch(/lean-agent is an agent template of other options; build with force/);
  });

  it('fails at the runtime step when the runtime folder is missing, and leaves no template', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sdk-state-'));
    const driver = new NamespaceDriver({ stateDir, agentsDir: join(stateDir, 'no-such-folder') });
    try {
      const error = await driver
        .buildTemplate({ ...DEFAULT_AGENT_SPEC, name: 'no-runtime' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ImageBuildError);
      expect((error as ImageBuildError).step).toBe(AGENTS_STEP);
      expect(await driver.template('no-runtime')).toBeUndefined();
      expect(existsSync(join(stateDir, 'templates', 'no-runtime'))).toBe(false);
    } finally {
      driver.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe("a sandbox's copy-on-write view of its template", () => {
  it('takes installs into /usr/local; another sandbox and the image never see them', async () => {
    const [a, b] = await Promise.all([cp.createSandbox(), cp.createSandbox()]);
    try {
      const marker = `tool-${randomBytes(4).toString('hex')}`;
      const install = await a.commands.run(
        `printf '#!/bin/sh\\necho installed\\n' > /usr/local/bin/${marker} && chmod +x /usr/local/bin/${marker} && ` +
          `mkdir -p /usr/local/lib/node_modules/${marker} && ${marker}`,
      );
      expect(install.stdout).toBe('installed\n');
      const other = await b.commands.run(`[ -e /usr/local/bin/${marker} ] && echo seen || echo absent`);
      expect(other.stdout).toBe('absent\n');
      // The image every sandbox shares is unchanged.
      for (const image of readdirSync('/run/sdk/images').filter((name) => name.startsWith('template-'))) {
        expect(existsSync(join('/run/sdk/images', image, 'usr/local/bin', marker))).toBe(false);
      }
      // The rest of the system stays out of reach, copy-on-write or not.
      const refused = await a.commands.run(
        'for p in /usr/bin/ls /usr/bin /etc/passwd /usr/local/bin/node; do ' +
          '(echo x >> "$p") 2>/dev/null && echo "wrote $p"; done; ' +
          '(touch /usr/lib/x /etc/x /var/lib/x) 2>/dev/null && echo touched; echo end',
      );
      expect(refused.stdout).toBe('end\n');
    } finally {
      await Promise.all([a.kill(), b.kill()]);
    }
  });

  it('is bounded in size, and gone with its sandbox', async () => {
    const sbx = await cp.createSandbox({ memoryMb: 256 });
    const { dir } = viewPaths(cp.driver.instance, sbx.sandboxId);
    expect(statSync(dir).isDirectory()).toBe(true);
    const fill = await sbx.commands.run(
      'dd if=/dev/zero of=/usr/local/big bs=1M count=200 2>&1; echo "exit $?"',
    );
    expect(fill.stdout).toMatch(/No space left on device/);
    await sbx.kill();
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(sbx.sandboxId);
  });
});

describe('prefetch', () => {
  it('reads the runtime into the page cache at start and again after a resume, only in a template that has it', async () => {
    const agent = await cp.createSandbox({ template: 'sdk-agent' });
    const lean = await cp.createSandbox({ template: 'lean-agent' });
    try {
      const size = Number((await agent.commands.run('stat -c %s /opt/agents/bin/opencode')).stdout);
      expect(size).toBeGreaterThan(50 * 2 ** 20);
      // At start (shortly after sandboxd answers).
      await vi.waitFor(() => expect(bytesRead(agent)).toBeGreaterThan(size), { timeout: 10_000 });
      const before = { agent: bytesRead(agent), lean: bytesRead(lean) };
      await Promise.all([agent.pause(), lean.pause()]);
      await new Promise((resolve) => setTimeout(resolve, 4500)); // longer than the warmer's gap
      await Promise.all([agent.connect(), lean.connect()]);
      await vi.waitFor(() => expect(bytesRead(agent) - before.agent).toBeGreaterThan(size), {
        timeout: 10_000,
      });
      expect(bytesRead(lean) - before.lean).toBeLessThan(size); // --no-prefetch: nothing of the kind
    } finally {
      await Promise.all([agent.kill(), lean.kill()]);
    }
  });
});
