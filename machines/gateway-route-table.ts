/** SPEC "States and transitions / Gateway route", as data. */
import type { TransitionTable } from './transition-table.js';

/** Gateway route states. */
export type GatewayRouteState = 'absent' | 'open' | 'closed';

/** The gateway route table. */
export const GATEWAY_ROUTE_TABLE: TransitionTable<
  GatewayRouteState,
  'configure' | 'configure_rejected',
  'included' | 'not_included'
> = {
  states: ['absent', 'open', 'closed'],
  terminal: ['closed'],
  rows: [
    {
      from: 'absent',
      trigger: 'configure',
      when: 'included',
      to: 'open',
      effects: ['openListener'],
      spec: 'create/take with gateways, valid config',
    },
    {
      from: 'open',
      trigger: 'configure',
      when: 'included',
      to: 'open',
      effects: ['swapValues'],
      spec: 'refresh(), route still configured: same port',
    },
    {
      from: 'open',
      trigger: 'configure',
      when: 'not_included',
      to: 'closed',
      effects: ['closeListener'],
      spec: 'configuration without the route',
    },
    {
      from: 'open',
      trigger: 'configure_rejected',
      to: 'open',
      spec: 'refresh() rejected: previous config kept',
    },
  ],
};
