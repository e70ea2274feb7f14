import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { gatewayRouteMachine, type GatewayRouteEvent } from '../../machines/gateway-route-machine.js';
import { GATEWAY_ROUTE_TABLE } from '../../machines/gateway-route-table.js';
import { checkAgainstTable, type Oracle } from './support/table-checker.js';

interface Model {
  readonly port: number | undefined;
  readonly version: number;
}

const oracle: Oracle<Model, GatewayRouteEvent, 'included' | 'not_included'> = {
  conditions: {
    included: (_m, e) => e.type === 'configure' && e.included,
    not_included: (_m, e) => e.type === 'configure' && !e.included,
  },
  update: (m, e, from, to) => ({
    // The port is set once, while open, and kept across every refresh.
    port: m.port ?? (e.type === 'listening' && from === 'open' && to === 'open' ? e.port : undefined),
    version: e.type === 'configure' && to === 'open' ? e.version : m.version,
  }),
  check: (m, _e, _from, to, context) => {
    const ctx = context as { port?: number; configVersion: number };
    if (to === 'open') {
      expect(ctx.port).toBe(m.port);
      // A rejected configuration leaves the previous one in force.
      expect(ctx.configVersion).toBe(m.version);
    }
  },
};

const event = fc.oneof(
  fc.record({ type: fc.constant('configure' as const), version: fc.nat(), included: fc.boolean() }),
  fc.record({
    type: fc.constant('configure_rejected' as const),
    errorClass: fc.constantFrom('InvalidHeaderValue', 'UnimplementedError'),
  }),
  fc.record({ type: fc.constant('listening' as const), port: fc.integer({ min: 1, max: 65535 }) }),
);

test.prop([fc.array(event, { maxLength: 40 }), fc.nat()], { numRuns: 1000 })(
  'the gateway route machine follows the spec table',
  (events, restoreAt) => {
    checkAgainstTable(
      gatewayRouteMachine,
      undefined,
      GATEWAY_ROUTE_TABLE,
      oracle,
      { port: undefined, version: 0 },
      events,
      restoreAt,
    );
  },
);
