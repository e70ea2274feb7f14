/**
 * SPEC "Versioning" 0.8.0: the agent exists from daemon images 0.8.0 on. A daemon reporting an older
 * template version answers every agent endpoint with `unimplemented` (UnimplementedError in the
 * message) before it touches anything.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SequencedLog } from '../../../actors/sequenced-log.js';
import { AgentConfigs } from '../../../daemon/agent-configs.js';
import { AgentHost } from '../../../daemon/agent-host.js';
import { createDaemonServer } from '../../../daemon/daemon-server.js';
import { ProcessTable } from '../../../daemon/process-table.js';
import { TokenCheck } from '../../../daemon/token.js';
import { GatewayHost } from '../../../gateway/gateway-host.js';
import type { DaemonRecord } from '../../../protocol/daemon-events.js';

const TOKEN = 'unit-test-token-0123456789';
const user = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, home: '/' };
const server = createDaemonServer({
  token: new TokenCheck(TOKEN),
  version: '0.7.2',
  processes: new ProcessTable(user),
  gateways: new GatewayHost(),
  audit: new SequencedLog<DaemonRecord>((record) => record.type),
  agents: new AgentHost({
    user,
    configs: new AgentConfigs({ agentsDir: '/nonexistent/agents', listeners: () => ({}) }),
  }),
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('a daemon older than the agent (0.8.0)', () => {
  for (const [method, path] of [
    ['PUT', '/v1/agent/config'],
    ['POST', '/v1/agent/executions'],
    ['GET', '/v1/agent/executions'],
    ['POST', '/v1/agent/executions/exe_x/prompt'],
    ['GET', '/v1/agent/executions/exe_x/events'],
    ['POST', '/v1/agent/executions/exe_x/abort'],
    ['POST', '/v1/agent/prepare'],
  ] as const) {
    it(`answers ${method} ${path} with unimplemented`, async () => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}` },
        ...(method === 'GET' ? {} : { body: '{}' }),
      });
      expect(res.status).toBe(501);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('unimplemented');
      expect(body.message).toContain('UnimplementedError');
    });
  }
});
