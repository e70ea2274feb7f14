/**
 * What each sandbox's sandboxd reported, kept for the inspector: its records (commands, gateway
 * requests and responses, route changes, hosted actors' transitions) in a bounded log per sandbox with
 * cursors, and a summary of the routes and the agent as last heard. A sandbox's log ends with it; the
 * logs of the most recently ended sandboxes stay readable, and a record that comes after the end opens
 * no new one. What a sandboxd can make it keep is bounded: records per log, routes and actors per sandbox.
 */
import { EMPTY, type Observable } from 'rxjs';
import { SequencedLog } from '../actors/sequenced-log.js';
import type { DaemonEvent } from '../protocol/daemon-events.js';
import { LIMITS } from '../rules/limits.js';

/** Records kept per sandbox for cursors. */
const RECORDS_PER_SANDBOX = 2_000;

/** Ended sandboxes whose records stay readable. */
const ENDED_KEPT = 50;

/**
 * Ended sandboxes remembered after their records are dropped, so a record of theirs that comes late
 * (sandboxd's stream is read in chunks) opens no new log that nothing would ever end.
 */
const FORGOTTEN_KEPT = 10_000;

/**
 * Route names summarized per sandbox: its routes (at most `routesPerSandbox` at a time) with room for
 * closed ones; a sandboxd naming more (taken over by sandbox code) is not believed past that.
 */
const ROUTES_KEPT = 4 * LIMITS.routesPerSandbox;

/** Hosted actors (routes and the agent) whose transitions are believed, per sandbox. */
const ACTORS_KEPT = ROUTES_KEPT + 1;

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
  /** The hosted actors whose transitions were taken (at most `ACTORS_KEPT`). */
  readonly actors: Set<string>;
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
  /** Ended sandboxes whose entries were dropped, oldest first (at most `FORGOTTEN_KEPT`). */
  readonly #forgotten = new Set<string>();

  /**
   * Adds one of sandboxd's records (an agent's `run` names the execution it starts). A record of an
   * ended sandbox is dropped, also once its records are no longer kept.
   */
  append(sandboxId: string, event: DaemonEvent): void {
    if (this.#forgotten.has(sandboxId)) return;
    const entry = this.#entry(sandboxId);
    if (entry.ended) return;
    const { seq: daemonSeq, ...rest } = event;
    entry.log.append({ ...rest, sandboxId, daemonSeq });
    this.#summarize(entry, event);
  }

  /**
   * A sandbox's records: after the cursor `after` (0: all still held), then live until the sandbox
   * ends. `live` false: the sandbox has ended (nothing is made for it).
   */
  stream(sandboxId: string, after = 0, live = true): Observable<SandboxRecord & { readonly seq: number }> {
    // An ended sandbox whose records are no longer kept has none to give, and gets no new log.
    const entry =
      live && !this.#forgotten.has(sandboxId) ? this.#entry(sandboxId) : this.#entries.get(sandboxId);
    return entry === undefined ? EMPTY : entry.log.stream({ after });
  }

  /** The routes as last heard of, by name. */
  routes(sandboxId: string): RouteSummary[] {
    return [...(this.#entries.get(sandboxId)?.routes.values() ?? [])];
  }

  /**
   * True when the sandbox's transitions of hosted actor `actorId` are taken: it is one of the first
   * `ACTORS_KEPT` it reported (the inspection feed keeps the latest transition of each actor it is given).
   */
  hosts(sandboxId: string, actorId: string): boolean {
    return this.#entries.get(sandboxId)?.actors.has(actorId) === true;
  }

  /** The running agent execution, if any. */
  execution(sandboxId: string): { readonly executionId: string; readonly state: string } | null {
    const entry = this.#entries.get(sandboxId);
    if (entry === undefined || entry.agentState === 'idle' || entry.executionId === undefined) return null;
    return { executionId: entry.executionId, state: entry.agentState };
  }

  /** The sandbox ended: its streams complete; its records stay readable while it is among the last ended. */
  end(sandboxId: string): void {
    const entry = this.#entries.get(sandboxId);
    if (entry === undefined) this.#forget(sandboxId); // nothing heard of it yet: nothing will be
    if (entry === undefined || entry.ended) return;
    entry.ended = true;
    entry.agentState = 'idle';
    entry.log.close();
    const ended = [...this.#entries].filter(([, other]) => other.ended);
    for (const [id] of ended.slice(0, Math.max(0, ended.length - ENDED_KEPT))) {
      this.#entries.delete(id);
      this.#forget(id);
    }
  }

  /** Ends every stream. */
  close(): void {
    for (const entry of this.#entries.values()) entry.log.close();
  }

  /** Remembers an ended sandbox that has no entry, among the last `FORGOTTEN_KEPT`. */
  #forget(sandboxId: string): void {
    this.#forgotten.add(sandboxId);
    for (const id of this.#forgotten) {
      if (this.#forgotten.size <= FORGOTTEN_KEPT) break;
      this.#forgotten.delete(id);
    }
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
        actors: new Set(),
        agentState: 'idle',
        executionId: undefined,
        ended: false,
      };
      this.#entries.set(sandboxId, entry);
    }
    return entry;
  }

  #summarize(entry: SandboxEntry, event: DaemonEvent): void {
    const routeName =
      event.type === 'route'
        ? event.route
        : event.type === 'transition' && event.kind === 'gateway_route'
          ? event.actorId
          : undefined;
    // More routes or actors than a sandbox can have: the log keeps the record, the summary does not.
    if (routeName !== undefined && !entry.routes.has(routeName) && entry.routes.size >= ROUTES_KEPT) {
      return;
    }
    if (event.type === 'transition' && !entry.actors.has(event.actorId)) {
      if (entry.actors.size >= ACTORS_KEPT) return;
      entry.actors.add(event.actorId);
    }
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
      entry.agentState = event.state;
      if (event.executionId !== undefined) entry.executionId = event.executionId;
      if (event.state === 'idle') entry.executionId = undefined;
    }
  }
}
