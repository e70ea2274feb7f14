/**
 * sandboxd's entry. Its settings arrive as one JSON object on stdin, so the access token never sits on
 * a command line, in an environment or in a file: `{ token, host?, port?, user? }`. Prints
 * `{"port": N}` once listening.
 */
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { GatewayHost } from '../gateway/gateway-host.js';
import { BoxLoopback } from './box-loopback.js';
import { processRecord } from './audit-records.js';
import { createDaemonServer } from './daemon-server.js';
import { installLastResort } from './last-resort.js';
import { ownAddresses } from './own-addresses.js';
import { ActorSystem } from '../actors/actor-system.js';
import { SequencedLog } from '../actors/sequenced-log.js';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import { ProcessTable } from './process-table.js';
import { AgentConfigs, listenersOf } from './agent-configs.js';
import { AgentHost } from './agent-host.js';
import { AGENTS_DIR } from '../runtime-drivers/runtime-site.js';
import { TokenCheck } from './token.js';
import { warmPageCache } from './page-cache-warmer.js';
import { dialOwnLoopback } from './port-tunnel.js';
import { SANDBOXD_VERSION } from '../protocol/versions.js';
import { snapshotCarrySchema } from '../protocol/snapshot-carry.js';
import { egressSettingsSchema } from '../protocol/egress-wire.js';
import { EgressFilter } from './egress/egress-filter.js';
import { installSandboxCa } from './egress/trust-store.js';

const settingsSchema = z.strictObject({
  token: z.string().min(16),
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(0),
  user: z
    .strictObject({ uid: z.number().int(), gid: z.number().int(), home: z.string() })
    .default({ uid: 1000, gid: 1000, home: '/home/user' }),
  /** The version to report: the one the sandbox's template was built with (DESIGN.md §3). */
  version: z.string().default(SANDBOXD_VERSION),
  /** Trust roots for gateway upstreams, PEM, replacing the defaults (a private CA). */
  gatewayCa: z.string().optional(),
  /** Gateway time-outs in milliseconds; the spec's (10 s connect, 600 s headers) by default. */
  gatewayTimeouts: z
    .strictObject({ connectMs: z.number().int().positive(), headersMs: z.number().int().positive() })
    .optional(),
  /** How long a command's event stream may leave its socket full before it is cut (tests shorten it). */
  streamStallMs: z.number().int().positive().optional(),
  /** Create the user's home (inside a sandbox it is a fresh tmpfs). */
  prepareHome: z.boolean().default(false),
  /** The `cgroup.procs` file of the memory cgroup commands join (inside a sandbox). */
  commandCgroup: z.string().optional(),
  /**
   * The sandbox this daemon runs beside (`sandbox-spawn.ts`): a namespace sandbox's pid 1 in this
   * daemon's pid namespace, `sdk-exec`'s path and the seccomp program of sandbox code (base64); or a
   * gVisor box's control socket, container, `gvisor-exec`'s path and this daemon's address on the link.
   */
  box: z
    .discriminatedUnion('kind', [
      z.strictObject({
        kind: z.literal('namespace'),
        pid: z.number().int().positive(),
        exec: z.string().startsWith('/'),
        seccomp: z.base64(),
      }),
      z.strictObject({
        kind: z.literal('gvisor'),
        socket: z.string().startsWith('/'),
        container: z.string().min(1),
        exec: z.string().startsWith('/'),
        link: z.ipv4(),
      }),
    ])
    .optional(),
  /**
   * The control plane's credential: this daemon's event stream, the gateways' status, the agent's
   * executions and their abort (`CONTROL_ENDPOINTS` in audit-records.ts).
   */
  controlToken: z.string().min(16).optional(),
  /** Files read into the page cache at start and after each resume (an agent template's `prefetch`). */
  prefetch: z.array(z.string().startsWith('/')).max(16).default([]),
  /** What the sandbox a memory snapshot was taken of left this copy (protocol/snapshot-carry.ts). */
  carried: snapshotCarrySchema.optional(),
  /** The egress policy's resolver and name checks (inside a sandbox; `daemon/egress/`). */
  egress: egressSettingsSchema.optional(),
});

// Read synchronously, without a top-level await: the bundle that runs in sandboxes is then a script whose
// compiled code V8 caches (daemon/build.mjs), and the whole start up to `listen` runs in one go.
const settings = settingsSchema.parse(JSON.parse(readFileSync(0, 'utf8')));
if (settings.prepareHome) {
  mkdirSync(settings.user.home, { recursive: true, mode: 0o750 });
  chownSync(settings.user.home, settings.user.uid, settings.user.gid);
}
process.stdout.on('error', () => undefined); // the launcher stops reading after the ready line
const processes = new ProcessTable({
  ...settings.user,
  ...(settings.commandCgroup === undefined ? {} : { cgroupProcs: settings.commandCgroup }),
  ...(settings.box === undefined
    ? {}
    : {
        box:
          settings.box.kind === 'namespace'
            ? { ...settings.box, seccomp: Buffer.from(settings.box.seccomp, 'base64') }
            : settings.box,
      }),
});
// The actors this daemon hosts (gateway routes) report every transition here.
const actors = new ActorSystem();
// Beside a gVisor box the sandbox's loopback is the box's own: the gateway reaches it through a relay.
const loopback =
  processes.user.box?.kind === 'gvisor'
    ? new BoxLoopback({ ...processes.user, box: processes.user.box })
    : undefined;
// What this daemon sees, for the control plane: calls (recorded by the server), gateway requests, their
// responses and route changes (from the gateway host), commands started and ended.
const audit = new SequencedLog<DaemonRecord>((record) => record.type);
// The sandbox's own addresses: never an upstream of the gateway, the resolver or the broker.
const own = ownAddresses();
const egress =
  settings.egress === undefined
    ? undefined
    : new EgressFilter(settings.egress, own, (record) => audit.append(record));
const gateways = new GatewayHost({
  system: actors,
  // A copy keeps its routes' ports, as its box's processes were configured with them.
  ...(settings.carried === undefined ? {} : { preferredPorts: settings.carried.gatewayPorts }),
  ...(loopback === undefined ? {} : { loopback }),
  // An upstream resolving to the sandbox's own interfaces would reach the sandbox itself.
  metadataAddresses: own,
  ...(settings.gatewayCa === undefined ? {} : { ca: settings.gatewayCa }),
  // Inside a sandbox upstream names are asked of the control plane's DNS servers, as sandbox code's are.
  ...(egress === undefined ? {} : { lookup: egress.gatewayLookup() }),
  ...(settings.gatewayTimeouts === undefined
    ? {}
    : {
        connectTimeoutMs: settings.gatewayTimeouts.connectMs,
        headersTimeoutMs: settings.gatewayTimeouts.headersMs,
      }),
});
// The credential broker (issue 27): under the egress filter's policy, inside a sandbox only (its CA goes
// into the sandbox's trust store as the sandbox's root).
const broker =
  egress === undefined || processes.user.box === undefined
    ? undefined
    : egress.createBroker({
        label: 'sdk',
        installCa: (certificatePem) => installSandboxCa(processes.user, certificatePem),
        ...(loopback === undefined ? {} : { loopback }),
        ...(settings.gatewayCa === undefined ? {} : { upstreamCa: settings.gatewayCa }),
        ...(settings.gatewayTimeouts === undefined
          ? {}
          : {
              connectTimeoutMs: settings.gatewayTimeouts.connectMs,
              headersTimeoutMs: settings.gatewayTimeouts.headersMs,
            }),
      });
gateways.events$.subscribe((event) => {
  const at = Date.now();
  const { route } = event;
  switch (event.type) {
    case 'request':
      // At the start: the idle policy counts it while a long response is still streaming.
      audit.append({ at, type: 'gateway_request', route, method: event.method });
      break;
    case 'response': {
      const { method, path, status, latencyMs, bytes } = event;
      audit.append({ at, type: 'gateway_response', route, method, path, status, latencyMs, bytes });
      break;
    }
    case 'route_opened':
      audit.append({ at, type: 'route', route, event: 'opened', port: event.port });
      break;
    case 'route_closed':
      audit.append({ at, type: 'route', route, event: 'closed' });
      break;
    case 'route_failed':
      audit.append({ at, type: 'route', route, event: 'failed', errorClass: event.errorClass });
      break;
  }
});
const agents = new AgentHost({
  user: processes.user,
  system: actors,
  configs: new AgentConfigs({ agentsDir: AGENTS_DIR, listeners: () => listenersOf(gateways) }),
  onProcess: (pid, command, event) => audit.append(processRecord(pid, command, event)),
  ...(broker === undefined ? {} : { environment: () => broker.environment() }),
});
// A copy takes over the runtime its original prepared (its box holds it, waiting for a bridge).
if (settings.carried?.standby !== undefined) agents.adopt(settings.carried.standby);
actors.inspect$.subscribe((record) => {
  if (record.kind === 'sandbox') return;
  audit.append({
    at: record.at,
    type: 'transition',
    actorId: record.actorId,
    kind: record.kind,
    actorSeq: record.seq,
    event: record.event.type,
    state: record.state,
    // A run names the execution it starts: the control plane learns its id here, never by asking.
    ...('executionId' in record.event && typeof record.event.executionId === 'string'
      ? { executionId: record.event.executionId }
      : {}),
  });
});
const server = createDaemonServer({
  audit,
  agents,
  // Beside a namespace sandbox sandboxd shares its network namespace, so its loopback is the sandbox's;
  // a gVisor box's loopback is reached through the box's relay.
  ...(loopback !== undefined
    ? { previewDial: (port: number) => loopback.dial(port) }
    : processes.user.box?.kind === 'namespace'
      ? { previewDial: dialOwnLoopback }
      : {}),
  ...(settings.controlToken === undefined ? {} : { controlToken: new TokenCheck(settings.controlToken) }),
  token: new TokenCheck(settings.token),
  version: settings.version,
  processes,
  gateways,
  ...(egress === undefined ? {} : { egress }),
  ...(broker === undefined ? {} : { broker }),
  ...(settings.streamStallMs === undefined ? {} : { streamStallMs: settings.streamStallMs }),
});
// Ready once the API and the egress filter both listen: no sandbox code runs before.
server.listen(settings.port, settings.host, () => {
  void (egress?.listen() ?? Promise.resolve()).then(() => {
    // From here a fault nothing else caught is logged (never its message) and the daemon keeps serving;
    // before, a failed start still ends the process.
    process.stderr.on('error', () => undefined); // a fault line must never become a fault itself
    installLastResort(process, (line) => process.stderr.write(line));
    const address = server.address();
    process.stdout.write(
      `${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`,
    );
    warmPageCache(settings.prefetch);
  });
});
// Stopping ends every command's tree first, so no process outlives the daemon that started it.
process.on('SIGTERM', () => {
  agents.close();
  loopback?.stop();
  egress?.close();
  broker?.close();
  server.close();
  server.closeAllConnections();
  void Promise.all([processes.killAll(), gateways.close()]).then(() => process.exit(0));
});
