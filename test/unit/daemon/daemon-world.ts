/**
 * An in-process sandboxd for a unit test file: process table, gateway host, an agent host over a temp
 * folder with a stand-in runtime, the audit log, and the daemon's HTTP server on loopback.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { SequencedLog } from '../../../actors/sequenced-log.js';
import { AgentConfigs, listenersOf } from '../../../daemon/agent-configs.js';
import { AgentHost } from '../../../daemon/agent-host.js';
import { processRecord } from '../../../daemon/audit-records.js';
import { createDaemonServer } from '../../../daemon/daemon-server.js';
import { ProcessTable } from '../../../daemon/process-table.js';
import { TokenCheck } from '../../../daemon/token.js';
import { GatewayHost } from '../../../gateway/gateway-host.js';
import type { DaemonRecord } from '../../../protocol/daemon-events.js';
import { SANDBOXD_VERSION } from '../../../protocol/versions.js';
import { agentRequestHash } from '../../../protocol/agent-request-hash.js';
import type { WireAgentSpec } from '../../../protocol/agent-request.js';
import type { AgentConfigWrite } from '../../../protocol/agent-wire.js';

/** Where the stand-in route `llm` of a world's requests "listens" (nothing does). */
const STAND_IN_LISTENER = 'http://127.0.0.1:9';

/**
 * The body of `PUT /v1/agent/config` for a runtime_a spec on route `llm` (`spec` replaces its fields),
 * named by its hash.
 */
export function agentRequestBody(spec: Partial<WireAgentSpec> = {}): AgentConfigWrite {
  const request = {
    spec: {
      model: { provider: 'compatible', id: 'model-x', gateway: 'llm', promptCaching: true },
      smallModel: 'model-x',
      permissions: { default: 'allow', tools: {} },
      agents: {},
      mcp: {},
      ...spec,
    },
    options: {},
  };
  const text = JSON.stringify(request);
  return { runtime: 'runtime_a', hash: agentRequestHash('runtime_a', text), text };
}

/** How the daemon of a test file is set up. */
export interface DaemonWorldOptions {
  /** Prefix of the temp folder's name. */
  readonly name: string;
  /** The sandbox's token. */
  readonly token: string;
  /** The control plane's token; without it the daemon admits no control credential. */
  readonly controlToken?: string;
  /** The stand-in runtime, a shell script written to `agents/bin/opencode` before the daemon listens. */
  readonly runtime: string;
  /** The agent's runtime processes go to the audit log as `process` records, as daemon/main.ts wires it. */
  readonly recordAgentProcesses?: boolean;
}

/** What a test file uses. */
export interface DaemonWorld {
  /** The temp folder: the agents in `agents`, their configuration in `config` and `config-home`. */
  readonly dir: string;
  /** The daemon's base URL, once `beforeAll` has run. */
  readonly url: string;
  /** Every record the audit log (what `GET /v1/events` serves) holds now; needs no `this`. */
  readonly records: () => DaemonRecord[];
  /** Calls the daemon with the sandbox's token; a body that is not a string goes as JSON. */
  readonly call: (method: string, path: string, body?: unknown) => Promise<Response>;
}

/**
 * Builds the world at once and registers the hooks that start it listening (`beforeAll`, before any the
 * file registers afterwards) and tear it down (`afterAll`).
 */
export function useDaemonWorld(options: DaemonWorldOptions): DaemonWorld {
  const user = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, home: '/' };
  const dir = mkdtempSync(join(tmpdir(), options.name));
  const audit = new SequencedLog<DaemonRecord>((record) => record.type);
  const gateways = new GatewayHost();
  const agents = new AgentHost({
    user,
    configs: new AgentConfigs({
      agentsDir: join(dir, 'agents'),
      // The stand-in runtime never calls its model: route `llm` is named, never listened on.
      listeners: () => ({ llm: STAND_IN_LISTENER, ...listenersOf(gateways) }),
      dir: join(dir, 'config'),
      configHome: join(dir, 'config-home'),
    }),
    ...(options.recordAgentProcesses === true
      ? { onProcess: (pid, command, event) => audit.append(processRecord(pid, command, event)) }
      : {}),
  });
  const server = createDaemonServer({
    token: new TokenCheck(options.token),
    ...(options.controlToken === undefined ? {} : { controlToken: new TokenCheck(options.controlToken) }),
    version: SANDBOXD_VERSION,
    processes: new ProcessTable(user),
    gateways,
    audit,
    agents,
  });
  let url = '';

  beforeAll(async () => {
    const runtime = join(dir, 'agents', 'bin', 'opencode');
    mkdirSync(join(dir, 'agents', 'bin'), { recursive: true });
    writeFileSync(runtime, options.runtime);
    chmodSync(runtime, 0o755);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });

  afterAll(async () => {
    agents.close();
    server.closeAllConnections();
    server.close();
    await gateways.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    call: (method, path, body) =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${options.token}` },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    dir,
    get url() {
      return url;
    },
    records: () => {
      // A snapshot: subscribe, take what is there, and leave before anything live arrives.
      const seen: DaemonRecord[] = [];
      audit
        .stream({ after: 0 })
        .subscribe((record) => seen.push(record))
        .unsubscribe();
      return seen;
    },
  };
}
