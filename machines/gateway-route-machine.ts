/**
 * One gateway route's lifecycle, SPEC "States and transitions / Gateway route": absent, open, closed.
 * Effects (`openListener`, `swapValues`, `closeListener`) are named actions the gateway host provides.
 */
import { assign, setup } from 'xstate';

/** The gateway route machine's context. */
export interface GatewayRouteContext {
  /** OS-chosen loopback port, set once by `listening` and kept across refreshes. */
  readonly port: number | undefined;
  /** Version of the configuration in force for this route. */
  readonly configVersion: number;
  /** Failure class of the last configuration this route refused. */
  readonly lastErrorClass: string | undefined;
}

/** Events of the gateway route machine. */
export type GatewayRouteEvent =
  /** The host accepted a whole configuration; `included` says whether it still has this route. */
  | { readonly type: 'configure'; readonly version: number; readonly included: boolean }
  /** The host refused a configuration: the previous one stays in force. */
  | { readonly type: 'configure_rejected'; readonly errorClass: string }
  /** The listener is bound. */
  | { readonly type: 'listening'; readonly port: number };

/**
 * The gateway route machine.
 *
 * @example
 * ```ts
 * const [s0] = initialTransition(gatewayRouteMachine);
 * const [s1] = transition(gatewayRouteMachine, s0, { type: 'configure', version: 1, included: true }); // open
 * ```
 */
export const gatewayRouteMachine = setup({
  types: { context: {} as GatewayRouteContext, events: {} as GatewayRouteEvent },
  actions: {
    /** Bind a loopback listener on an OS-chosen port. */
    openListener: () => undefined,
    /** Use the new values from the next request on, on open connections too. */
    swapValues: () => undefined,
    /** Stop accepting, close idle connections, let at most the in-flight request finish. */
    closeListener: () => undefined,
    adopt: assign({
      configVersion: ({ context, event }) =>
        event.type === 'configure' ? event.version : context.configVersion,
      lastErrorClass: undefined,
    }),
  },
  guards: {
    included: ({ event }) => event.type === 'configure' && event.included,
  },
}).createMachine({
  id: 'gatewayRoute',
  context: { port: undefined, configVersion: 0, lastErrorClass: undefined },
  initial: 'absent',
  states: {
    absent: {
      on: { configure: { guard: 'included', target: 'open', actions: ['adopt', 'openListener'] } },
    },
    open: {
      on: {
        configure: [
          { guard: 'included', actions: ['adopt', 'swapValues'] },
          { target: 'closed', actions: 'closeListener' },
        ],
        configure_rejected: {
          actions: assign({ lastErrorClass: ({ event }) => event.errorClass }),
        },
        listening: {
          actions: assign({ port: ({ context, event }) => context.port ?? event.port }),
        },
      },
    },
    closed: { type: 'final' },
  },
});
