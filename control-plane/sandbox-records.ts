/**
 * What each sandbox's sandboxd reported, kept for the inspector: its records (commands, gateway
 * requests and responses, route changes, hosted actors' transitions) in a bounded log per sandbox with
 * cursors, and a summary of the routes and the agent as last heard. A sandbox's log ends with it; the
 * logs of the most recently ended sandboxes stay readable.
 */
import { EMPTY, type Observable } from 'rxjs';
import { SequencedLog } from '../actors/sequenced-log.js';
import type { DaemonEvent } from '../protocol/daemon-events.js';

/** Records kept per sandbox for cursors. */
const RECORDS_PER_SANDBOX = 2_000;

/** Ended sandboxes whose records stay readable. */
const ENDED_KEPT = 50;

/** A record as the log hands it out: sandboxd's own `seq` kept as `daemonSeq`. */
export type SandboxRecord = Omit<DaemonEvent, 'seq'> & {
  readonly sandboxId: string;
  readonly daemonSeq: number;
};

/** A gateway route as last heard of. */
export interface RouteSummary {
  readonly name: string;
  readonly state: string;
  readonly port: number | null;
  readonly lastErrorClass: string | null;
}

interface SandboxEntry {
  readonly log: SequencedLog<SandboxRecord>;
  readonly routes: Map<string, RouteSummary>;
  /** The agent actor's state; `idle` when nothing runs. */
  agentState: string;
  /** The running execution, once known (learnt from sandboxd when the agent starts running). */
  executionId: string | undefined;
  ended: boolean;
}

/**
 * Records and summaries by sandbox.
 *
 * @example
 * ```ts
 * const records = new SandboxRecords();
 * records.append(id, event); // from the sandbox's daemon follower
 * records.stream(id, 0).subscribe((record) => console.log(record.type));
 * ```
 */
export class SandboxRecords {
  readonly #entries = new Map<string, SandboxEntry>();

  /** Adds one of sandboxd's records; returns true when it set the agent running (its id is unknown). */
  append(sandboxId: string, event: DaemonEvent): boolean {
    const entry = this.#entry(sandboxId);
    if (entry.ended) return false;
    const { seq: daemonSeq, ...rest } = event;
    entry.log.append({ ...rest, sandboxId, daemonSeq });
    return this.#summarize(entry, event);
  }

  /**
   * A sandbox's records: after the cursor `after` (0: all still held), then live until the sandbox
   * ends. `live` false: the sandbox has ended (nothing is made for it).
   */
  stream(sandboxId: string, after = 0, live = true): Observable<SandboxRecord & { readonly seq: number }> {
    // An ended sandbox whose records are no longer kept has none to give, and gets no new log.
    const entry = live ? this.#entry(sandboxId) : this.#entries.get(sandboxId);
    return entry === undefined ? EMPTY : entry.log.stream({ after });
  }

  /** The routes as last heard of, by name. */
  routes(sandboxId: string): RouteSummary[] {
    return [...(this.#entries.get(sandboxId)?.routes.values() ?? [])];
  }

  /** The running agent execution, if any. */
  execution(sandboxId: string): { readonly executionId: string; readonly state: string } | null {
    const entry = this.#entries.get(sandboxId);
    if (entry === undefined || entry.agentState === 'idle' || entry.executionId === undefined) return null;
    return { executionId: entry.executionId, state: entry.agentState };
  }

  /** The running execution's id, learnt from sandboxd. */
  setExecution(sandboxId: string, executionId: string | null): void {
    const entry = this.#entries.get(sandboxId);
    if (entry !== undefined) entry.executionId = executionId ?? undefined;
  }

  /** The sandbox ended: its streams complete; its records stay readable while it is among the last ended. */
  end(sandboxId: string): void {
    const entry = this.#entries.get(sandboxId);
    if (entry === undefined || entry.ended) return;
    entry.ended = true;
    entry.agentState = 'idle';
    entry.log.close();
    const ended = [...this.#entries].filter(([, other]) => other.ended);
    for (const [id] of ended.slice(0, Math.max(0, ended.length - ENDED_KEPT))) this.#entries.delete(id);
  }

  /** Ends every stream. */
  close(): void {
    for (const entry of this.#entries.values()) entry.log.close();
  }

  #entry(sandboxId: string): SandboxEntry {
    let entry = this.#entries.get(sandboxId);
    if (entry === undefined) {
      entry = {
        log: new SequencedLog<SandboxRecord>(
          (record) => record.type,
          () => false,
          RECORDS_PER_SANDBOX,
        ),
        routes: new Map(),
        agentState: 'idle',
        executionId: undefined,
        ended: false,
      };
      this.#entries.set(sandboxId, entry);
    }
    return entry;
  }

  #summarize(entry: SandboxEntry, event: DaemonEvent): boolean {
    if (event.type === 'route') {
      const previous = entry.routes.get(event.route);
      entry.routes.set(event.route, {
        name: event.route,
        state: { opened: 'open', closed: 'closed', failed: previous?.state ?? 'open' }[event.event],
        port: event.port ?? previous?.port ?? null,
        lastErrorClass: event.event === 'failed' ? (event.errorClass ?? null) : null,
      });
    } else if (event.type === 'transition' && event.kind === 'gateway_route') {
      const previous = entry.routes.get(event.actorId);
      entry.routes.set(event.actorId, {
        name: event.actorId,
        state: event.state,
        port: previous?.port ?? null,
        lastErrorClass: previous?.lastErrorClass ?? null,
      });
    } else if (event.type === 'transition' && event.kind === 'agent_execution') {
      const started = entry.agentState === 'idle' && event.state !== 'idle';
      entry.agentState = event.state;
      if (event.state === 'idle') entry.executionId = undefined;
      return started;
    }
    return false;
  }
}
