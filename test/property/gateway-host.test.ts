import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { GatewayHost } from '../../gateway/index.js';
import { connectionRefused } from '../support/loopback.js';

const NAMES = ['a', 'b', 'c', 'd'] as const;

const route = (value: string) => ({
  upstream: 'https://api.vendor.example',
  headers: { authorization: `Bearer ${value}` },
  allow: [['POST', '/v1/*']] as const,
});

type Operation =
  { kind: 'apply'; names: readonly string[]; value: string } | { kind: 'reject'; names: readonly string[] };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('apply' as const),
    names: fc.subarray([...NAMES]),
    value: fc.stringMatching(/^[a-z0-9]{8,16}$/),
  }),
  fc.record({ kind: fc.constant('reject' as const), names: fc.subarray([...NAMES]) }),
);

/** The gateway-route table, per route: what status must show after each whole configuration. */
interface ModelRoute {
  port: number | undefined;
  lastErrorClass: string | undefined;
}

test.prop([fc.array(operation, { minLength: 1, maxLength: 8 })], { numRuns: 40 })(
  'a host follows the gateway-route table: ports kept across refresh, removed routes closed, refused configurations change nothing but lastErrorClass',
  async (operations) => {
    const host = new GatewayHost();
    const model = new Map<string, ModelRoute>();
    try {
      for (const op of operations) {
        if (op.kind === 'apply') {
          const outcome = await host.apply(
            Object.fromEntries(op.names.map((name) => [name, route(op.value)])),
          );
          expect(outcome.ok).toBe(true);
          const removed = [...model.entries()].filter(([name]) => !op.names.includes(name));
          for (const [name] of removed) model.delete(name);
          for (const name of op.names) {
            model.set(name, { port: model.get(name)?.port, lastErrorClass: undefined });
          }
          for (const [, gone] of removed)
            if (gone.port !== undefined) expect(await connectionRefused(gone.port)).toBe(true);
        } else {
          const configuration = Object.fromEntries(
            [...op.names, 'bad'].map((name) => [
              name,
              route(name === 'bad' ? 'broken\nvalue' : 'fresh-value'),
            ]),
          );
          const outcome = await host.apply(configuration);
          expect(outcome.ok).toBe(false);
          for (const entry of model.values()) entry.lastErrorClass = 'InvalidHeaderValueError';
        }
        const status = host.status();
        expect([...status.keys()].sort()).toEqual([...model.keys()].sort());
        for (const [name, expected] of model) {
          const actual = status.get(name);
          expect(actual?.lastErrorClass).toBe(expected.lastErrorClass);
          expect(actual?.url).toBe(`http://127.0.0.1:${String(actual?.port)}`);
          if (expected.port !== undefined) expect(actual?.port).toBe(expected.port);
          expected.port = actual?.port;
        }
      }
    } finally {
      await host.close();
    }
  },
);
