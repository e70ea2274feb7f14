/**
 * The inspector's read side: the sandbox table (each live sandbox's facts, timers, memory, routes and
 * running execution, and the last rows of those that ended here) and each sandbox's records from its
 * sandboxd (`sandbox-records.ts`). Derived, never journaled.
 */
import type { InspectorSandbox } from '../protocol/inspector-api.js';
import type { SandboxInfo } from '../protocol/control-plane-api.js';
import type { DaemonEvent } from '../protocol/daemon-events.js';
import type { SandboxDriver, SandboxUsage } from '../sandbox-drivers/sandbox-driver.js';
import type { LiveSandbox } from './sandbox-registry.js';
import { SandboxRecords } from './sandbox-records.js';

/** Rows of ended sandboxes kept for the table. */
const ENDED_ROWS = 50;

/**
 * The table and the records.
 *
 * @example
 * ```ts
 * const view = new InspectorView(driver);
 * view.watch(sandbox); // from its creation or adoption on
 * const rows = await view.rows(registry.liveSandboxes(), (s) => projection.info(s.actor, s.facts, s.input));
 * ```
 */
export class InspectorView {
  /** sandboxd's records, by sandbox. */
  readonly records = new SandboxRecords();
  readonly #driver: SandboxDriver;
  /** Rows of sandboxes that ended while this process watched them, oldest first. */
  readonly #ended = new Map<string, InspectorSandbox>();

  constructor(driver: SandboxDriver) {
    this.#driver = driver;
  }

  /** Follows a live sandbox to its end: its records then stop and its last row is kept. */
  watch(sandbox: LiveSandbox, info: () => SandboxInfo): void {
    const subscription = sandbox.actor.state$.subscribe((state) => {
      if (state !== 'ended') return;
      this.records.end(sandbox.actor.id);
      this.#ended.set(sandbox.actor.id, this.#row(sandbox, info(), null));
      for (const id of [...this.#ended.keys()].slice(0, Math.max(0, this.#ended.size - ENDED_ROWS))) {
        this.#ended.delete(id);
      }
      queueMicrotask(() => subscription.unsubscribe());
    });
  }

  /** Adds a record of the sandbox's daemon. */
  record(sandboxId: string, event: DaemonEvent): void {
    this.records.append(sandboxId, event);
  }

  /** Rows of `live` sandboxes (memory read from the driver), then of those that ended here, newest first. */
  async rows(
    live: Iterable<LiveSandbox>,
    info: (sandbox: LiveSandbox) => SandboxInfo,
  ): Promise<InspectorSandbox[]> {
    const current = await Promise.all(
      [...live].map(async (sandbox) => {
        const usage = await this.#driver.usage(sandbox.actor.id).catch(() => undefined);
        return this.#row(sandbox, info(sandbox), usage ?? null);
      }),
    );
    const ids = new Set(current.map((row) => row.sandboxId));
    const ended = [...this.#ended.values()].filter((row) => !ids.has(row.sandboxId)).reverse();
    return [...current, ...ended];
  }

  /** Ends every record stream. */
  close(): void {
    this.records.close();
  }

  #row(sandbox: LiveSandbox, info: SandboxInfo, usage: SandboxUsage | null): InspectorSandbox {
    const { context } = sandbox.actor.snapshot;
    const { id } = sandbox.actor;
    return {
      ...info,
      createdAt: sandbox.input.now,
      lastActivityAt: context.lastActivityAt,
      maxIdleMs: context.maxIdleMs,
      autoResume: context.autoResume,
      memoryBytes: usage?.memoryUsedBytes ?? null,
      memoryLimitBytes: usage?.memoryLimitBytes ?? null,
      routes: this.records.routes(id),
      execution: info.state === 'ended' ? null : this.records.execution(id),
    };
  }
}
