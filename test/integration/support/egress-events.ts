/** The `egress` records of a sandbox's event stream, as the egress and credential broker tests wait for them. */
import { filter, firstValueFrom } from 'rxjs';
import type { DaemonEvent } from '../../../protocol/daemon-events.js';
import type { Sandbox } from '../../../sdk/sandbox.js';

/** An `egress` record. */
export type EgressEvent = Extract<DaemonEvent, { type: 'egress' }>;

/**
 * The first `egress` event of `sbx` that `match` accepts. Subscribed at once, so call it before what
 * should cause the event; a test that fails first leaves the wait to the sandbox's end.
 */
export function egressEvent(sbx: Sandbox, match: (event: EgressEvent) => boolean): Promise<EgressEvent> {
  const found = firstValueFrom(
    sbx.events$.pipe(
      filter((event): event is EgressEvent => event.type === 'egress'),
      filter(match),
    ),
  );
  found.catch(() => undefined);
  return found;
}
