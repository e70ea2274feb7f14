/** The interface every isolation engine implements (DESIGN.md §4). */
import type { AgentTemplateSpec, BuiltTemplate } from '../protocol/template-api.js';

import type { Isolation, SnapshotKind } from '../protocol/control-plane-api.js';
import type { SnapshotCarry } from '../protocol/snapshot-carry.js';
import type { EgressPolicy } from '../rules/egress-policy.js';

export type { Isolation, SnapshotKind };

/** What a new sandbox needs from the driver. */
export interface LaunchRequest {
  /** Sandbox id: `[a-z0-9]{12}`; every resource of the sandbox is named after it and the driver's instance. */
  readonly id: string;
  /** Its isolation: one of the driver's `isolations`. */
  readonly isolation: Isolation;
  /** Template name. */
  readonly template: string;
  /** false closes egress for sandbox code (only its own loopback), keeping sandboxd's path. */
  readonly allowInternetAccess: boolean;
  /** Where sandbox code may connect; when absent, `allowInternetAccess` decides (open or closed). */
  readonly egress?: EgressPolicy;
  /** DNS servers sandboxd's resolver asks for the names sandbox code may reach (`address[:port]`). */
  readonly dnsServers?: readonly string[];
  /** Memory limit of the whole sandbox, bytes. */
  readonly memoryBytes: number;
  /** Process limit of the whole sandbox. */
  readonly maxPids: number;
  /** CPU limit of the whole sandbox, in CPUs (0.5 is half of one CPU's time). */
  readonly cpus: number;
  /** The sandbox access token sandboxd checks; handed over on its stdin only. */
  readonly accessToken: string;
  /** The control plane's credential for sandboxd (event stream, agent reads, abort); on stdin only, too. */
  readonly controlToken?: string;
  /** Trust roots for gateway upstreams, PEM (a private CA); the defaults when absent. */
  readonly gatewayCa?: string;
  /** Gateway time-outs in milliseconds; the spec's by default. */
  readonly gatewayTimeouts?: { readonly connectMs: number; readonly headersMs: number };
  /** A snapshot's folder (`snapshot`) the sandbox starts from instead of its template's image alone. */
  readonly from?: string;
  /** What the sandboxd of a memory snapshot's sandbox left its copies, given to the copy's. */
  readonly carried?: SnapshotCarry;
}

/** A snapshot a driver wrote. */
export interface SavedSnapshot {
  readonly kind: SnapshotKind;
  /** Bytes of its files. */
  readonly bytes: number;
}

/** A launched sandbox as the driver reports it. */
export interface LaunchedSandbox {
  readonly id: string;
  /** `http://<address>:<port>` of sandboxd, reachable from the host. */
  readonly daemonUrl: string;
}

/** A template's manifest: what the control plane checks before it asks for a launch. */
export interface TemplateManifest {
  readonly name: string;
  /** The sandboxd version the template was built with. */
  readonly sandboxdVersion: string;
  /** Whether a sandbox of this template can have closed egress. */
  readonly canCloseEgress: boolean;
  /** Memory of sandbox code when a create names none, MiB (the SDK's default when absent). */
  readonly memoryMb?: number;
  /** CPUs when a create names none (the SDK's default when absent). */
  readonly cpus?: number;
}

/** How a template build runs. */
export interface TemplateBuildOptions {
  /** Build it again, its own layers too, even when a template of the name exists. */
  readonly force?: boolean;
  /** Ends the build: the running step fails and nothing of it is left. */
  readonly signal?: AbortSignal;
  /** Each step as it begins (`cached`: already built), `index` of `total` from 1. */
  readonly onStep?: (step: { step: string; cached: boolean; index: number; total: number }) => void;
}

/**
 * What a sandbox uses now, as its engine counts it (issue 28, `sbx.getMetrics()`): counters since the
 * sandbox's start (CPU time, network bytes) and gauges with their limits.
 */
export interface SandboxUsage {
  /** CPU time of every process of the sandbox (sandboxd's and a gVisor kernel's included), µs. */
  readonly cpuUsec: number;
  /** Memory of sandbox code (its processes and the tmpfs pages they wrote) and its limit, bytes. */
  readonly memoryUsedBytes: number;
  readonly memoryLimitBytes: number;
  /** Bytes of the sandbox's writable file systems (its layer over the template, `/home`) and their size. */
  readonly diskUsedBytes: number;
  readonly diskLimitBytes: number;
  /** Bytes the sandbox received and sent on its network link (sandboxd's API traffic included). */
  readonly netRxBytes: number;
  readonly netTxBytes: number;
}

/** An isolation engine, templates included: the control plane reaches a driver only through this. */
export interface SandboxDriver {
  /** The isolations this driver launches; a launch asks for one of them. */
  readonly isolations: readonly Isolation[];
  /** The manifest of the template named `name`, or undefined when this driver has none by that name. */
  template(name: string): Promise<TemplateManifest | undefined>;
  /**
   * Builds an agent template (SPEC "Image tooling"); an engine that cannot has none, and the control
   * plane answers `unimplemented`.
   */
  buildTemplate?(spec: AgentTemplateSpec, options?: TemplateBuildOptions): Promise<BuiltTemplate>;
  /** Starts a sandbox and waits until its sandboxd answers. Leaves nothing behind on failure. */
  launch(request: LaunchRequest): Promise<LaunchedSandbox>;
  /**
   * Saves the running sandbox `id` into the empty folder `dir` (the sandbox goes on running): a later
   * `launch` with `from: dir` starts a new sandbox from it. Nothing of sandboxd's goes in (a gateway's
   * value, a token).
   */
  snapshot(id: string, dir: string): Promise<SavedSnapshot>;
  /**
   * Applies a new egress policy to running sandbox `id`'s network (its tables, in one transaction);
   * sandboxd's own part is the caller's (`PUT /v1/egress`).
   */
  updateEgress(id: string, policy: EgressPolicy): Promise<void>;
  /** Freezes every process of the sandbox, memory kept. */
  pause(id: string): Promise<void>;
  /** Thaws it. */
  resume(id: string): Promise<void>;
  /** Ends every process and removes every resource of the sandbox; a no-op when nothing is left. */
  destroy(id: string): Promise<void>;
  /** Ids of sandboxes that have resources on this host (for reconciliation after a restart). */
  list(): Promise<string[]>;
  /** What the sandbox uses now (CPU, memory, disk, network); undefined when it has no resources. */
  usage(id: string): Promise<SandboxUsage | undefined>;
  /**
   * Calls `listener` with the id of a sandbox whose sandboxd ended without `destroy` (it crashed or was
   * killed): the sandbox is dead and must end as failed. Returns the unsubscribe.
   */
  onExit(listener: (id: string) => void): () => void;
  /** Watches a sandbox this driver did not launch in this process (adopted after a restart). */
  watch(id: string): void;
  /** Stops watching; sandboxes keep running. */
  close(): void;
}
