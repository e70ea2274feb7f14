/**
 * What a runtime is to sandboxd: a folder `runtime-drivers/runtime-<name>/` whose `driver.ts` exports
 * `driver`, a `RuntimeDriver`. sandboxd finds it by the request's runtime name (`registry.ts`); nothing
 * else names a runtime's configuration, command line or output.
 */
import type { z } from 'zod';
import type { WireAgentSpec } from '../protocol/agent-request.js';
import type { LineParser } from './run-accumulator.js';

/** A file a configuration refers to. */
export interface ConfigFile {
  /** Absolute path in the sandbox. */
  readonly path: string;
  /** Its content. */
  readonly content: string;
}

/** Where things are in the sandbox. */
export interface RuntimeSite {
  /** The template's agents folder (`/opt/agents`): runtimes and their tools. */
  readonly agentsDir: string;
  /** The root-owned folder configuration files go to (`/run/agent`), read-only to the agent. */
  readonly configDir: string;
  /** A read-only folder for the runtime's `XDG_CONFIG_HOME`. */
  readonly configHome: string;
}

/** The fields of one run a configuration depends on. */
export interface RunFacts {
  /** A model id of the spec's provider the run names instead of the spec's. */
  readonly model?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly reasoning: boolean;
  readonly workdir: string;
}

/** How one run starts. */
export interface RunPlan {
  /** Configuration files, written (root's, 0644) before the run: absolute paths directly in `site.configDir`. */
  readonly configFiles: readonly ConfigFile[];
  /** The command line (`exec …`, so the runtime is the process sandboxd started). */
  readonly cmd: string;
  /** Its environment, on top of the clean one every command gets. */
  readonly environment: Record<string, string>;
  /** Files that must be in the image; a missing one ends the run with `runtime_missing`. */
  readonly files: readonly string[];
  /** The runtime's output, line by line, as spec events. */
  readonly parse: LineParser;
}

/** A spec the runtime cannot run, or a request it cannot build (the message names fields, never values). */
export class RuntimeConfigError extends Error {
  override readonly name = 'RuntimeConfigError';
  constructor(
    message: string,
    /** The field named first (`spec.mcp`, `options.entrypoint`). */
    readonly field: string,
  ) {
    super(message);
  }
}

/** A request as the driver reads it: the spec and its own options, checked. */
export interface RuntimeRequest<Options = unknown> {
  readonly spec: WireAgentSpec;
  readonly options: Options;
}

/** One runtime. */
export interface RuntimeDriver<Options = unknown> {
  /** Its name on the wire (`runtime_a`). */
  readonly name: string;
  /** Its own options in a request (runtime_b: `entrypoint`). */
  readonly options: z.ZodType<Options>;
  /**
   * The spec's problems for this runtime (SPEC rules the SDKs check too, checked again here).
   *
   * @throws RuntimeConfigError naming the first one
   */
  check(spec: WireAgentSpec): void;
  /**
   * One run of `request`: its configuration with each gateway the spec names pointed at
   * `listeners[name]` (`http://127.0.0.1:<port>`), command line, environment and parser.
   *
   * @throws RuntimeConfigError when a gateway has no listener
   */
  plan(
    request: RuntimeRequest<Options>,
    listeners: Readonly<Record<string, string>>,
    run: RunFacts,
    site: RuntimeSite,
  ): RunPlan;
  /** Files the runtime needs in its read-only config home (paths relative to it), written once. */
  readonly homeFiles?: readonly ConfigFile[];
  /** The file read into the page cache ahead of a run (`prepare`). */
  readonly binary: (site: RuntimeSite) => string;
  /** Whether `prepare` may start a runtime ahead and hand it to the next run that fits. */
  readonly startsAhead: boolean;
}
