/**
 * The actor system's inspection feed: one record per transition of every actor (sandboxes, gateway
 * routes, agent executions), live and from replay alike, so what the journal holds can be drawn again.
 * This is what the inspector page draws and what the SDK's observables are built on.
 */
import { Subject, type Observable } from 'rxjs';

/** Kinds of actors. */
export type ActorKind = 'sandbox' | 'gateway_route' | 'agent_execution';

/** One transition of one actor. */
export interface InspectionRecord {
  readonly actorId: string;
  readonly kind: ActorKind;
  /** The actor's own sequence number of the event: its position in that actor's journal. */
  readonly seq: number;
  /** The event, as journaled (events carry no secret: they are journaled too). */
  readonly event: { readonly type: string };
  /** The state after the event. */
  readonly state: string;
  /** Wall-clock time of the transition, milliseconds. */
  readonly at: number;
  /** True while a journal is replayed (the transition happened before this process). */
  readonly replayed: boolean;
}

/** The actor system: where actors report their transitions. */
export class ActorSystem {
  readonly #inspect = new Subject<InspectionRecord>();

  /** Every transition of every actor, as it happens. */
  readonly inspect$: Observable<InspectionRecord> = this.#inspect.asObservable();

  /** Reports a transition. */
  record(record: InspectionRecord): void {
    this.#inspect.next(record);
  }

  /** Ends the feed. */
  close(): void {
    this.#inspect.complete();
  }
}
