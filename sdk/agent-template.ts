/**
 * `AgentTemplate` (SPEC "Image tooling"): the agent image on `sdk-base-caps` (or `sdk-base`) with
 * runtime_a and a search tool under /opt/agents, runtime_b unless left out, `prefetch` on and
 * `kernelWarmup` off by default. Options are checked at construction; `build()` asks the control plane
 * to build it (with the operator key, `SDK_API_KEY`) and reports each step. The CLI's
 * `sdk template build` is this class.
 */
import { request } from 'undici';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { ndjsonValues } from '../protocol/ndjson.js';
import {
  agentTemplateSpecSchema,
  templateBuildLineSchema,
  type AgentTemplateOptions,
  type AgentTemplateSpec,
  type BuiltTemplate,
} from '../protocol/template-api.js';
import { InvalidArgumentError, SandboxError, SdkError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import { controlPlaneUrl, operatorKey } from './control-plane-client.js';

/** One step of a build: its name, whether its result was already built, `index` of `total` from 1. */
export interface TemplateBuildStep {
  readonly step: string;
  readonly cached: boolean;
  readonly index: number;
  readonly total: number;
}

/** Options of `AgentTemplate.build()`. */
export interface TemplateBuildOptions {
  /** Build again even when the template exists (its own layers too); replaces one of other options. */
  readonly force?: boolean;
  /** Longest the build may take, ms (30 minutes by default, 3 hours at most). */
  readonly timeoutMs?: number;
  /** Hears each step as it begins. */
  readonly onStep?: (step: TemplateBuildStep) => void;
  /** The control plane (`SDK_CONTROL_PLANE_URL`, else `http://127.0.0.1:4780`). */
  readonly controlPlaneUrl?: string;
}

/** An agent template, checked; `build()` makes it on the control plane's host. */
export class AgentTemplate {
  readonly #spec: AgentTemplateSpec;

  /**
   * @throws InvalidArgumentError naming the field: a name that is not 1-63 characters `[a-z0-9-]` or
   *   names a base template, a base other than `sdk-base-caps`/`sdk-base`, `memoryMb` outside
   *   256-16384, `kernelWarmup: true` (this engine has no kernel of its own)
   */
  constructor(options: AgentTemplateOptions = {}) {
    this.#spec = parseOptions(agentTemplateSpecSchema, options, 'AgentTemplate');
  }

  /** The template's name, the `template` a create gives to use it. */
  get name(): string {
    return this.#spec.name;
  }

  /** The options, defaults filled. */
  get options(): AgentTemplateSpec {
    return { ...this.#spec };
  }

  /**
   * Builds the template: every step reported to `onStep`, cached ones too. A template of these options
   * already built is left as it is (`built: false`) unless `force`.
   *
   * @throws InvalidArgumentError for bad options, or a template of the name with other options (without `force`)
   * @throws AuthenticationError without the operator key
   * @throws SandboxError naming the step that failed or timed out; nothing of the build is left
   */
  async build(options: TemplateBuildOptions = {}): Promise<BuiltTemplate> {
    const { force = false, timeoutMs, onStep } = options;
    if (typeof force !== 'boolean') {
      throw new InvalidArgumentError('AgentTemplate.build: force: must be a boolean', { field: 'force' });
    }
    const url = `${controlPlaneUrl(options.controlPlaneUrl)}/v1/templates`;
    const key = operatorKey();
    let res;
    try {
      res = await request(url, {
        method: 'POST',
        headersTimeout: 60_000,
        bodyTimeout: 0, // a step (Debian's packages) may be quiet for minutes
        headers: {
          'content-type': 'application/json',
          ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        },
        body: JSON.stringify({
          template: this.#spec,
          force,
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
        }),
      });
    } catch {
      throw new SandboxError(`the control plane at ${url} did not answer POST /v1/templates`);
    }
    if (res.statusCode >= 400) throw errorFromEnvelope(await res.body.json().catch(() => undefined));
    try {
      for await (const value of ndjsonValues(res.body)) {
        const line = templateBuildLineSchema.safeParse(value).data;
        if (line?.type === 'step')
          onStep?.({ step: line.step, cached: line.cached, index: line.index, total: line.total });
        else if (line?.type === 'built') return line.template;
        else if (line?.type === 'failed') throw errorFromEnvelope(line.error);
      }
    } catch (error) {
      if (error instanceof SdkError) throw error;
      throw new SandboxError('the template build stream broke');
    }
    throw new SandboxError('the template build ended without saying how');
  }
}
