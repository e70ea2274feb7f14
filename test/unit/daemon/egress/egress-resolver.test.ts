/**
 * sandboxd's resolver (issue 27) against upstream DNS servers of the test's own, on loopback: the policy
 * decides the name, a forbidden answer (rebinding) is NXDOMAIN and recorded, other types of an allowed
 * name are answered empty, and questions waiting on a silent upstream are bounded.
 */
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EgressRefusal } from '../../../../daemon/egress/egress-refusal.js';
import { EgressResolver, MAX_PENDING_QUESTIONS } from '../../../../daemon/egress/egress-resolver.js';
import {
  buildAnswer,
  buildQuery,
  DNS_TYPE,
  parseAnswerAddresses,
  parseQuery,
  RCODE,
} from '../../../../daemon/egress/dns-message.js';
import { UpstreamNames } from '../../../../daemon/egress/upstream-names.js';
import type { EgressPolicy } from '../../../../rules/egress-policy.js';

/** An upstream answering each name from `table` (absent: NXDOMAIN), or never when `silent`. */
async function upstream(
  table: Record<string, string>,
  silent = false,
): Promise<{ socket: Socket; server: string }> {
  const socket = createSocket('udp4');
  socket.on('message', (message, from) => {
    const query = parseQuery(message);
    if (silent || query === undefined) return;
    const address = table[query.name];
    const reply =
      address === undefined
        ? buildAnswer(query, RCODE.NXDOMAIN, [])
        : buildAnswer(query, RCODE.NOERROR, [{ type: 'A', address, ttl: 60 }]);
    socket.send(reply, from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, server: `127.0.0.1:${String(socket.address().port)}` };
}

const policy: EgressPolicy = {
  mode: 'allowlist',
  allow: ['*.allowed.test', 'allowed.test'],
  deny: ['192.0.2.0/24'],
};
const sockets: Socket[] = [];
let resolver: EgressResolver;
const refusals: EgressRefusal[] = [];

beforeAll(async () => {
  const up = await upstream({
    'allowed.test': '198.51.100.7',
    'loop.allowed.test': '127.0.0.1',
    'meta.allowed.test': '169.254.169.254',
    'denied-cidr.allowed.test': '192.0.2.9',
  });
  sockets.push(up.socket);
  resolver = new EgressResolver(
    new UpstreamNames([up.server], []),
    () => policy,
    (r) => refusals.push(r),
  );
});

afterAll(() => {
  for (const socket of sockets) socket.close();
});

const ask = async (name: string, type: number = DNS_TYPE.A) => {
  const reply = await resolver.answer(buildQuery(7, name, type));
  return reply === undefined ? undefined : parseAnswerAddresses(reply, 7);
};

describe("sandboxd's resolver", () => {
  it('answers an allowed name with its upstream addresses', async () => {
    expect(await ask('allowed.test')).toEqual({
      rcode: RCODE.NOERROR,
      records: [{ type: 'A', address: '198.51.100.7', ttl: expect.any(Number) as unknown }],
    });
  });

  it('answers NXDOMAIN for a name the policy refuses, without asking upstream, and records it', async () => {
    expect((await ask('other.test'))?.rcode).toBe(RCODE.NXDOMAIN);
    expect(refusals).toContainEqual({ via: 'dns', name: 'other.test', rule: 'allowlist' });
  });

  it.each([
    ['loop.allowed.test', 'loopback'],
    ['meta.allowed.test', 'metadata'],
    ['denied-cidr.allowed.test', '192.0.2.0/24'],
  ])('answers NXDOMAIN for %s, whose only address is forbidden (%s)', async (name, rule) => {
    expect((await ask(name))?.rcode).toBe(RCODE.NXDOMAIN);
    expect(refusals).toContainEqual({ via: 'dns', name, rule });
  });

  it('answers an allowed name of another type empty, at once', async () => {
    expect(await ask('allowed.test', DNS_TYPE.AAAA)).toEqual({ rcode: RCODE.NOERROR, records: [] });
  });

  it('bounds the questions waiting on a silent upstream: one past the bound gets no answer', async () => {
    const silent = await upstream({}, true);
    sockets.push(silent.socket);
    const slow = new EgressResolver(
      new UpstreamNames([silent.server], []),
      () => policy,
      () => undefined,
    );
    const waiting = Array.from({ length: MAX_PENDING_QUESTIONS }, () =>
      slow.answer(buildQuery(1, 'allowed.test', DNS_TYPE.A)),
    );
    expect(await slow.answer(buildQuery(2, 'allowed.test', DNS_TYPE.A))).toBeUndefined();
    // The waiting ones end with the upstream's time-out (SERVFAIL), and the bound frees again.
    const answers = await Promise.all(waiting);
    expect(
      answers.every((a) => a !== undefined && parseAnswerAddresses(a, 1)?.rcode === RCODE.SERVFAIL),
    ).toBe(true);
    expect(await slow.answer(buildQuery(3, 'other.test', DNS_TYPE.A))).toBeDefined();
  });
});
