import { AGENT_TEMPLATE } from './names.js';

/**
 * The numbers of SPEC "Limits", in one place. Every other module reads them from here, so a test that
 * changes nothing but this table exercises the same bound everywhere.
 */
export const LIMITS = {
  /** Gateway routes per sandbox. */
  routesPerSandbox: 8,
  /** Injected headers per route. */
  headersPerRoute: 16,
  /** Allow rules per route. */
  allowRulesPerRoute: 32,
  /** `ratePerMinute: 0` means this. */
  defaultRatePerMinute: 600,
  /** Highest explicit `ratePerMinute`. */
  maxRatePerMinute: 6000,
  /** Upstream connect time-out. */
  upstreamConnectTimeoutMs: 10_000,
  /** Wait for upstream response headers. */
  upstreamHeadersTimeoutMs: 600_000,
  /** Injected values this long or longer are redacted from response headers. */
  minRedactedValueLength: 8,
  /** Agent runtime deadline by default. */
  agentTimeoutMs: 600_000,
  /** Agent step limit by default. */
  agentMaxSteps: 50,
  /** Agent token budget by default (`null` disables). */
  agentMaxTotalTokens: 1_000_000,
  /** Runtime output the SDK keeps by default. */
  agentMaxOutputBytes: 16 * 1024 * 1024,
  /** Grace between SIGTERM and the frozen tree kill at an agent timeout. */
  agentKillGraceMs: 5_000,
  /** Sandbox lifetime by default (running plus suspended). */
  sandboxTimeoutMs: 3_600_000,
  /** Longest sandbox lifetime (running plus suspended). */
  sandboxMaxTimeoutMs: 8 * 3_600_000,
  /** Entries of `secrets` (environment variables fed from the secret store) per sandbox. */
  secretEnvsPerSandbox: 64,
  /** Idle time before auto-suspend by default. */
  idleSeconds: 300,
} as const;

/** Memory of sandbox code by default, MiB (`memoryMb`). */
export const DEFAULT_MEMORY_MB = 512;

/**
 * Memory of sandbox code by default in sandboxes of the agent template, MiB: opencode peaks near
 * 600 MiB in one run (notes/runtimes.md §1.12), and 512 MiB gets it OOM-killed.
 */
export const AGENT_TEMPLATE_MEMORY_MB = 1024;

/** The `memoryMb` a sandbox of `template` gets when none is asked for; an explicit one always wins. */
export function defaultMemoryMb(template: string): number {
  return template === AGENT_TEMPLATE ? AGENT_TEMPLATE_MEMORY_MB : DEFAULT_MEMORY_MB;
}

/** CPUs of a sandbox by default (`cpus`). */
export const DEFAULT_CPUS = 1;

/**
 * CPUs by default in sandboxes of the agent template: opencode starts on several threads, and under one
 * CPU's quota its first model request comes about a third later than unconstrained (bench:agent).
 */
export const AGENT_TEMPLATE_CPUS = 2;

/** The `cpus` a sandbox of `template` gets when none is asked for; an explicit one always wins. */
export function defaultCpus(template: string): number {
  return template === AGENT_TEMPLATE ? AGENT_TEMPLATE_CPUS : DEFAULT_CPUS;
}
