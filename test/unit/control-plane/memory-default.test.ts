/**
 * The memory default per template: sandboxes of `sdk-agent` get at least 1 GiB (opencode peaks near
 * 600 MiB), the others 512 MiB, and an explicit `memoryMb` always wins: in the rule, the SDK's options,
 * the wire schema and the control plane.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../control-plane/openapi.js';
import { createSandboxRequestSchema } from '../../../protocol/control-plane-api.js';
import { DEFAULT_CPUS, DEFAULT_MEMORY_MB, defaultCpus, defaultMemoryMb } from '../../../rules/limits.js';
import { AGENT_TEMPLATE, TEMPLATE_NAME } from '../../../rules/names.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBaseTemplates, readManifest } from '../../../sandbox-drivers/namespace/base-template.js';
import { resolveSandboxOptions } from '../../../sdk/sandbox-options.js';
import { MEMORY_BASE_TEMPLATES, MemoryDriver } from '../../support/memory-driver.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const MiB = 2 ** 20;

describe('the memory default rule', () => {
  it('gives sdk-agent at least 1 GiB and every other template 512 MiB', () => {
    expect(AGENT_TEMPLATE).toBe('sdk-agent');
    expect(defaultMemoryMb('sdk-agent')).toBeGreaterThanOrEqual(1024);
    for (const template of ['sdk-base', 'sdk-base-caps', 'my-image', 'sdk-agent2']) {
      expect(defaultMemoryMb(template)).toBe(DEFAULT_MEMORY_MB);
    }
    expect(DEFAULT_MEMORY_MB).toBe(512);
  });

  it('is left to the control plane by the SDK (it knows the template), where an explicit memoryMb is checked', () => {
    expect(resolveSandboxOptions().memoryMb).toBeUndefined();
    expect(resolveSandboxOptions({ template: 'sdk-agent' }).memoryMb).toBeUndefined();
    expect(resolveSandboxOptions({ template: 'sdk-agent', memoryMb: 600 }).memoryMb).toBe(600);
    expect(resolveSandboxOptions({ template: 'sdk-base-caps', memoryMb: 2048 }).memoryMb).toBe(2048);
    expect(() => resolveSandboxOptions({ template: 'sdk-agent', memoryMb: 31 })).toThrow(/memoryMb/);
  });

  it('leaves the default to the control plane on the wire, and names it in the OpenAPI document', () => {
    expect(TEMPLATE_NAME.test('sdk-agent')).toBe(true);
    const parsed = createSandboxRequestSchema.parse({ template: 'sdk-agent' });
    expect(parsed.template).toBe('sdk-agent');
    expect(parsed.memoryMb).toBeUndefined();
    expect(createSandboxRequestSchema.parse({ template: 'sdk-agent', memoryMb: 700 }).memoryMb).toBe(700);
    expect(JSON.stringify(openApiDocument('0.10.0'))).toContain('1024 for template sdk-agent');
  });

  it('is an agent template of the namespace driver, on sdk-base-caps, with that default', () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sdk-templates-'));
    try {
      ensureBaseTemplates(stateDir);
      expect(readManifest(stateDir, 'sdk-agent')).toMatchObject({
        canCloseEgress: true,
        base: 'sdk-base-caps',
        memoryMb: defaultMemoryMb('sdk-agent'),
        cpus: defaultCpus('sdk-agent'),
      });
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe('the CPU default rule', () => {
  it('gives sdk-agent 2 CPUs and every other template 1; an explicit cpus wins', () => {
    expect(defaultCpus('sdk-agent')).toBe(2);
    for (const template of ['sdk-base', 'sdk-base-caps', 'sdk-agent2'])
      expect(defaultCpus(template)).toBe(DEFAULT_CPUS);
    expect(resolveSandboxOptions().cpus).toBeUndefined();
    expect(resolveSandboxOptions({ template: 'sdk-agent' }).cpus).toBeUndefined();
    expect(resolveSandboxOptions({ template: 'sdk-agent', cpus: 0.5 }).cpus).toBe(0.5);
    expect(createSandboxRequestSchema.parse({ template: 'sdk-agent' }).cpus).toBeUndefined();
  });
});

describe('the control plane', () => {
  let world: MemoryPlaneWorld;
  beforeEach(() => {
    world = new MemoryPlaneWorld();
    const agent = {
      ...MEMORY_BASE_TEMPLATES[1],
      name: 'sdk-agent',
    } as (typeof MEMORY_BASE_TEMPLATES)[number];
    world.driver = new MemoryDriver({ templates: [...MEMORY_BASE_TEMPLATES, agent] });
  });
  afterEach(() => world.dispose());

  it('launches sdk-agent sandboxes with the agent default unless memoryMb is given', async () => {
    const plane = await world.start();
    const closed = { allowInternetAccess: false } as const;
    const launched = async (request: Parameters<typeof plane.create>[0]) =>
      world.driver.sandbox((await plane.create(request)).sandboxId)?.request.memoryBytes;
    expect(await launched({ ...closed, template: 'sdk-agent' })).toBe(defaultMemoryMb('sdk-agent') * MiB);
    expect(await launched({ ...closed, template: 'sdk-agent', memoryMb: 640 })).toBe(640 * MiB);
    expect(await launched({ ...closed, template: 'sdk-base-caps' })).toBe(512 * MiB);
    expect(await launched({ template: 'sdk-base' })).toBe(512 * MiB);
  });

  it('launches sdk-agent sandboxes with 2 CPUs unless cpus is given', async () => {
    const plane = await world.start();
    const cpus = async (request: Parameters<typeof plane.create>[0]) =>
      world.driver.sandbox((await plane.create(request)).sandboxId)?.request.cpus;
    expect(await cpus({ allowInternetAccess: false, template: 'sdk-agent' })).toBe(2);
    expect(await cpus({ allowInternetAccess: false, template: 'sdk-agent', cpus: 1.5 })).toBe(1.5);
    expect(await cpus({ template: 'sdk-base' })).toBe(1);
  });
});
