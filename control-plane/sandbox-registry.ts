/**
 * The sandboxes a control plane knows: live ones (actor, the input its machine started from, facts),
 * ended ones as tombstones (released from memory but for their facts and last info; the journal keeps
 * their history), and the launches journaled but not yet created or failed.
 */
import { SandboxActor } from '../actors/sandbox-actor.js';
import type { SandboxMachineInput } from '../machines/sandbox-machine.js';
import type { SandboxInfo } from '../protocol/control-plane-api.js';
import { policyOfInternetAccess, type EgressPolicy } from '../rules/egress-policy.js';
import { SandboxError } from '../rules/errors.js';
import type { SandboxFacts } from './journal-records.js';
import type { Projection } from './projection.js';

/** A live sandbox. */
export interface LiveSandbox {
  readonly actor: SandboxActor;
  /** What its machine started from (kept for compaction). */
  readonly input: SandboxMachineInput;
  /** Replaced whole when its egress policy or public ports change (`setEgress`, `setPublicPorts`). */
  facts: SandboxFacts;
}

/** What stays of an ended sandbox. */
export interface EndedSandbox {
  readonly info: SandboxInfo;
  readonly facts: SandboxFacts;
}

/**
 * Live sandboxes, tombstones and launches in flight, by id.
 *
 * @example
 * ```ts
 * const registry = new SandboxRegistry(projection);
 * const sandbox = registry.adopt(id, input, facts);
 * registry.info(id).state; // 'running'
 * ```
 */
export class SandboxRegistry {
  /** Launches journaled and not yet created or failed. */
  readonly launching = new Set<string>();
  readonly #live = new Map<string, LiveSandbox>();
  readonly #ended = new Map<string, EndedSandbox>();
  readonly #projection: Projection;
  readonly #onAdopt: ((sandbox: LiveSandbox, restored: boolean) => void) | undefined;

  /**
   * Actors record into `projection`'s system and log their states there; `onAdopt` hears of each
   * adoption (`restored`: from a compacted journal's snapshot, its creation behind it).
   */
  constructor(projection: Projection, onAdopt?: (sandbox: LiveSandbox, restored: boolean) => void) {
    this.#projection = projection;
    this.#onAdopt = onAdopt;
  }

  /** Makes the actor of a created (or compacted) sandbox and registers it as live. */
  adopt(
    id: string,
    input: SandboxMachineInput,
    facts: SandboxFacts,
    restore?: { readonly snapshot: unknown; readonly seq: number },
  ): LiveSandbox {
    const actor = new SandboxActor(id, input, {
      system: this.#projection.system,
      ...(restore === undefined ? {} : { restore }),
    });
    const sandbox = { actor, input, facts };
    this.#live.set(id, sandbox);
    this.#projection.track(actor);
    this.#onAdopt?.(sandbox, restore !== undefined);
    return sandbox;
  }

  /** A replayed tombstone (a compacted journal's `ended` record), completed when an older one lacks a fact. */
  bury(id: string, ended: EndedSandbox): void {
    const { info, facts } = ended;
    // A tombstone written before issue 27 has no egress, before issue 28 no start time or metadata.
    const old = info as Partial<SandboxInfo>;
    const egress = old.egress ?? policyOfInternetAccess(info.allowInternetAccess);
    const startedAt = old.startedAt ?? 0; // not journaled before: unknown
    const metadata = old.metadata ?? facts.metadata ?? {};
    this.#ended.set(id, { info: { ...info, egress, startedAt, metadata: { ...metadata } }, facts });
  }

  /** A live sandbox's new egress policy (journaled first); a sandbox no longer live is left. */
  setEgress(id: string, egress: EgressPolicy): void {
    const sandbox = this.#live.get(id);
    // `allowInternetAccess` keeps its SPEC meaning: false is closed egress.
    if (sandbox !== undefined) {
      sandbox.facts = { ...sandbox.facts, egress, allowInternetAccess: egress.mode !== 'closed' };
    }
  }

  /** A live sandbox's public ports (journaled first); a sandbox no longer live is left. */
  setPublicPorts(id: string, publicPorts: readonly number[]): void {
    const sandbox = this.#live.get(id);
    if (sandbox !== undefined) sandbox.facts = { ...sandbox.facts, publicPorts };
  }

  /** A live sandbox, or undefined (ended or unknown). */
  find(id: string): LiveSandbox | undefined {
    return this.#live.get(id);
  }

  /**
   * A live sandbox; an ended one is refused with `sandbox_ended`, an unknown one with
   * `sandbox_not_found`.
   *
   * @throws SandboxError
   */
  live(id: string): LiveSandbox {
    const sandbox = this.#live.get(id);
    if (sandbox !== undefined) return sandbox;
    const ended = this.#ended.get(id);
    if (ended === undefined) throw new SandboxError('no such sandbox', { code: 'sandbox_not_found' });
    throw new SandboxError(`sandbox ${id} has ended (${ended.info.endReason ?? 'killed'})`, {
      code: 'sandbox_ended',
    });
  }

  /**
   * The facts of a sandbox, live or ended.
   *
   * @throws SandboxError `sandbox_not_found`
   */
  factsOf(id: string): SandboxFacts {
    const facts = this.#live.get(id)?.facts ?? this.#ended.get(id)?.facts;
    if (facts === undefined) throw new SandboxError('no such sandbox', { code: 'sandbox_not_found' });
    return facts;
  }

  /** Live sandboxes in the order they were adopted; one released meanwhile is skipped. */
  liveSandboxes(): Iterable<LiveSandbox> {
    return this.#live.values();
  }

  /** Tombstones by id. */
  tombstones(): Iterable<readonly [string, EndedSandbox]> {
    return this.#ended.entries();
  }

  /** An ended sandbox leaves memory; its facts and last info stay for reads, its history in the journal. */
  release(sandbox: LiveSandbox): void {
    const { id } = sandbox.actor;
    if (sandbox.actor.state !== 'ended' || this.#live.get(id) !== sandbox) return;
    this.#ended.set(id, {
      info: this.#projection.info(sandbox.actor, sandbox.facts, sandbox.input),
      facts: sandbox.facts,
    });
    this.#live.delete(id);
  }

  /**
   * A sandbox's public facts, live or ended.
   *
   * @throws SandboxError `sandbox_not_found`
   */
  info(id: string): SandboxInfo {
    const ended = this.#ended.get(id);
    if (ended !== undefined) return ended.info;
    const sandbox = this.live(id);
    return this.#projection.info(sandbox.actor, sandbox.facts, sandbox.input);
  }

  /** Every sandbox's public facts, live ones first, then ended ones. */
  list(): SandboxInfo[] {
    return [
      ...[...this.#live.values()].map((sandbox) =>
        this.#projection.info(sandbox.actor, sandbox.facts, sandbox.input),
      ),
      ...[...this.#ended.values()].map((ended) => ended.info),
    ];
  }
}
