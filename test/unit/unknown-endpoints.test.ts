/**
 * Both servers route through `protocol/router.ts` and answer an endpoint they do not have the same way:
 * 404 `not_found`, or 405 `method_not_allowed` with `Allow` for a path only other methods have, as an
 * error envelope the SDK turns into a `SandboxError`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SequencedLog } from '../../actors/sequenced-log.js';
import { createControlPlaneServer } from '../../control-plane/http-api.js';
import { createDaemonServer } from '../../daemon/daemon-server.js';
import { AgentConfigs } from '../../daemon/agent-configs.js';
import { AgentHost } from '../../daemon/agent-host.js';
import { ProcessTable } from '../../daemon/process-table.js';
import { TokenCheck } from '../../daemon/token.js';
import { GatewayHost } from '../../gateway/gateway-host.js';
import type { DaemonRecord } from '../../protocol/daemon-events.js';
import { errorFromEnvelope } from '../../protocol/error-envelope.js';
import { SandboxError } from '../../rules/errors.js';
import { MemoryPlaneWorld } from '../support/memory-control-plane.js';

const TOKEN = 'unit-test-token-0123456789';
const world = new MemoryPlaneWorld();
const gateways = new GatewayHost();
const audit = new SequencedLog<DaemonRecord>((record) => record.type);
type Which = 'sandboxd' | 'control plane';
const servers: Server[] = [];
const urls = new Map<Which, string>();

async function listen(which: Which, server: Server): Promise<void> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.set(which, `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`);
}

beforeAll(async () => {
  const user = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, home: '/' };
  const daemon = createDaemonServer({
    token: new TokenCheck(TOKEN),
    version: '0.10.0',
    processes: new ProcessTable(user),
    gateways,
    audit,
    agents: new AgentHost({
      user,
      configs: new AgentConfigs({ agentsDir: '/nonexistent/agents', listeners: () => ({}) }),
    }),
  });
  const plane = createControlPlaneServer(await world.start({ operatorKey: TOKEN }));
  await listen('sandboxd', daemon);
  await listen('control plane', plane);
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await gateways.close();
  await world.dispose();
});

const call = async (which: Which, method: string, path: string) => {
  const res = await fetch(`${urls.get(which) ?? ''}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return { status: res.status, allow: res.headers.get('allow'), body: await res.json() };
};

describe.each(['sandboxd', 'control plane'] as const)('%s', (which) => {
  it('answers an unknown endpoint 404 not_found', async () => {
    const answer = await call(which, 'GET', '/v1/no-such-thing');
    expect(answer).toEqual({
      status: 404,
      allow: null,
      body: { code: 'not_found', message: 'no such endpoint' },
    });
    const error = errorFromEnvelope(answer.body);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error.code).toBe('not_found');
  });

  it('answers a wrong method 405 method_not_allowed with Allow', async () => {
    const path = which === 'sandboxd' ? '/v1/processes' : '/v1/sandboxes';
    expect(await call(which, 'PUT', path)).toEqual({
      status: 405,
      allow: 'GET, POST',
      body: { code: 'method_not_allowed', message: 'no such method on this endpoint' },
    });
  });
});

describe('sandboxd', () => {
  it('checks the token before it says whether an endpoint exists', async () => {
    const res = await fetch(`${urls.get('sandboxd') ?? ''}/v1/no-such-thing`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('records a call to an unknown endpoint as traffic without its path', async () => {
    await call('sandboxd', 'GET', '/v1/no-such-thing');
    const records: DaemonRecord[] = [];
    audit
      .stream({ after: 0 })
      .subscribe((record) => records.push(record))
      .unsubscribe();
    expect(records.at(-1)).toMatchObject({ type: 'call', method: 'GET', endpoint: 'no such endpoint' });
    expect(JSON.stringify(records)).not.toContain('no-such-thing');
  });
});
