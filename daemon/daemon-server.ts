/**
 * sandboxd's HTTP API (DESIGN.md §3): token-authenticated JSON, process events as NDJSON streams.
 *
 *   GET  /v1/health                     readiness, no token: { ok }
 *   GET  /v1/version                    { version }
 *   POST /v1/gateways                   { routes }: the whole configuration, values included → route state
 *   GET  /v1/gateways                   route state: { routes: { name: { port, url, lastErrorClass } } }
 *   GET  /v1/snapshot-carry             what a memory snapshot's copy takes over: protocol/snapshot-carry.ts
 *   PUT  /v1/egress                     the egress policy (control plane only): protocol/egress-wire.ts
 *   PUT  /v1/secrets                    { envs }: `secrets=`, values included, for every command → { names }
 *   POST /v1/credentials                { rules }: the credential broker's rules, values included → state
 *   GET  /v1/credentials                the broker's state: { hosts, proxy, caFingerprint256 }
 *   GET  /v1/events                     NDJSON: what the daemon saw (calls, gateway requests and
 *                                       responses, commands, routes), from ?after=<seq>
 *   POST /v1/processes                  start a command (the secrets under its own envs) as `user` (the
 *                                       default) or `root` → { pid }; with ?stream=true its event stream
 *   GET  /v1/processes                  [{ pid, cmd, running }]
 *   GET  /v1/processes/:pid/events      NDJSON: history, then live events, keepalives; ends after `end`
 *   POST /v1/processes/:pid/stdin       raw body appended to stdin
 *   POST /v1/processes/:pid/stdin/close
 *   POST /v1/processes/:pid/resize      { cols, rows }: a terminal's new size (a command started with `pty`)
 *   POST /v1/processes/:pid/signal      { signal, tree }
 *   /v1/agent/...                       the sandbox's agent: protocol/agent-wire.ts
 *   GET|PUT /v1/home/archive            the user's home as a gzip tar stream: protocol/home-archive.ts
 *   /v1/files/...                       files as the sandbox user or root: protocol/files-wire.ts
 *
 *   CONNECT 127.0.0.1:<port>            a preview's tunnel to the sandbox's loopback (control plane only,
 *                                       never to sandboxd's own ports): port-tunnel.ts
 *
 * The routes live by concern (`config-api.ts`, `process-api.ts`, `agent-api.ts` behind its version gate,
 * `files-api.ts`, `home-archive.ts`); every call passes `call-admission.ts` first (the credential check:
 * the control plane's is admitted to `CONTROL_ENDPOINTS` only; the call's record).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import { EGRESS_PORTS } from '../protocol/egress-wire.js';
import { envelopeOf, httpStatusOf, type ErrorEnvelope } from '../protocol/error-envelope.js';
import { Router, type RouteReply } from '../protocol/router.js';
import type { SequencedLog } from '../actors/sequenced-log.js';
import type { GatewayHost } from '../gateway/gateway-host.js';
import { CONNECTION_LIMITS } from '../gateway/connection-limits.js';
import type { AgentHost } from './agent-host.js';
import { agentRoutes } from './agent-api.js';
import { CallAdmission } from './call-admission.js';
import { configRoutes } from './config-api.js';
import { afterOf, ok, type DaemonHandler } from './daemon-call.js';
import type { CredentialBroker } from './egress/credential-broker.js';
import type { EgressFilter } from './egress/egress-filter.js';
import { StreamQuota, streamAudit } from './event-streams.js';
import { filesRoutes } from './files-api.js';
import { homeArchiveRoutes } from './home-archive.js';
import { openPortTunnel } from './port-tunnel.js';
import { processRoutes } from './process-api.js';
import type { ProcessTable } from './process-table.js';
import { SecretEnvs } from './secret-envs.js';
import type { TokenCheck } from './token.js';

/** What the server needs. */
export interface DaemonServerOptions {
  readonly token: TokenCheck;
  readonly version: string;
  readonly processes: ProcessTable;
  /** The sandbox's gateway routes. */
  readonly gateways: GatewayHost;
  /** Interval of keepalive events on open event streams. */
  readonly keepaliveMs?: number;
  /** How long a command's event stream may leave its socket full before it is cut (`process-stream.ts`). */
  readonly streamStallMs?: number;
  /** What the daemon saw, streamed at `GET /v1/events`. */
  readonly audit: SequencedLog<DaemonRecord>;
  /** The control plane's credential: admitted to `CONTROL_ENDPOINTS` and nothing else. */
  readonly controlToken?: TokenCheck;
  /** The sandbox's agent. */
  readonly agents: AgentHost;
  /** The egress policy's resolver and name checks (inside a sandbox). */
  readonly egress?: EgressFilter;
  /** The credential broker (inside a sandbox). */
  readonly broker?: CredentialBroker;
  /**
   * How preview tunnels reach the sandbox's `127.0.0.1:<port>` (`port-tunnel.ts`); absent (sandboxd run
   * outside a sandbox) they are refused as `unimplemented`.
   */
  readonly previewDial?: (port: number) => Promise<Socket>;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sendError(res: ServerResponse, envelope: ErrorEnvelope): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, httpStatusOf(envelope), envelope);
}

/**
 * Connections sandboxd holds at once; each has the gateway's request-head deadline. Only the host's
 * side reaches sandboxd's port (the sandbox's table refuses sandbox code), so these bound what a host
 * process that opens connections and sends nothing can make sandboxd hold.
 */
const MAX_CONNECTIONS = 1024;

/** Open streams of each kind at most (see `event-streams.ts` for what each may hold). */
const STREAM_LIMITS = { commands: 32, agent: 16, records: 16 } as const;

/** Creates the daemon's HTTP server (not yet listening). */
export function createDaemonServer(options: DaemonServerOptions): Server {
  const keepaliveMs = options.keepaliveMs ?? 10_000;
  /** Terminals the control plane's credential opened (`POST /v1/terminals`), while they run. */
  const operatorTerminals = new Set<number>();
  // `secrets=`: in this closure's memory only, for commands; the agent host never sees them.
  const secretEnvs = new SecretEnvs();
  const records = new StreamQuota(STREAM_LIMITS.records, 'record streams');

  const router = new Router<DaemonHandler>({
    // Readiness; nothing secret (answered before the token check).
    'GET /v1/health': () => ok({ ok: true }),
    'GET /v1/version': () => ok({ version: options.version }),
    'GET /v1/events': ({ res, url }) => {
      const after = afterOf(url);
      records.take(res);
      streamAudit(res, options.audit, after);
      return 'streamed';
    },
    ...configRoutes({ ...options, secretEnvs }),
    ...homeArchiveRoutes(options.processes.user),
    ...filesRoutes(options.processes.user),
    ...processRoutes({
      processes: options.processes,
      audit: options.audit,
      // The broker's proxy and trust variables, then the secrets, then the command's own.
      environment: (own) => ({ ...options.broker?.environment(), ...secretEnvs.under(own) }),
      quota: new StreamQuota(STREAM_LIMITS.commands, 'command event streams'),
      keepaliveMs,
      ...(options.streamStallMs === undefined ? {} : { streamStallMs: options.streamStallMs }),
      operatorTerminals,
    }),
    ...agentRoutes({
      agents: options.agents,
      version: options.version,
      quota: new StreamQuota(STREAM_LIMITS.agent, 'agent event streams'),
      keepaliveMs,
    }),
  });

  const admission = new CallAdmission({
    token: options.token,
    controlToken: options.controlToken,
    operatorTerminals,
    audit: options.audit,
  });
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<RouteReply> => {
    const url = new URL(req.url ?? '/', 'http://sandboxd');
    const match = router.match(req.method ?? '', url.pathname);
    // Readiness needs no token.
    if (match.matched && match.endpoint === 'GET /v1/health') {
      return match.handler({ req, res, url, params: match.params });
    }
    admission.admit(req, match.matched ? match : undefined);
    if (!match.matched) {
      const { status, envelope, headers } = match.refusal;
      return { status, body: envelope, headers };
    }
    return match.handler({ req, res, url, params: match.params });
  };

  const server = createServer(
    // Streams and uploads have no overall deadline; a request head has the gateway listeners' one.
    {
      requestTimeout: 0,
      headersTimeout: CONNECTION_LIMITS.requestHeadTimeoutMs,
      connectionsCheckingInterval: CONNECTION_LIMITS.checkIntervalMs,
    },
    (req, res) => {
      // A fault anywhere in one request, its reply included, answers that request (or cuts only its
      // socket once the answer has started); it never reaches the rest of the daemon.
      route(req, res)
        .then((reply) => {
          if (reply !== 'streamed') sendJson(res, reply.status, reply.body, reply.headers);
        })
        .catch((error: unknown) => {
          sendError(res, envelopeOf(error, 'the daemon failed to handle the request'));
        })
        .catch(() => res.destroy());
    },
  );
  server.maxConnections = MAX_CONNECTIONS;
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const dial = options.previewDial;
    if (dial === undefined) {
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 501 Not Implemented\r\nx-sdk-error: unimplemented\r\nconnection: close\r\n\r\n');
      return;
    }
    openPortTunnel(req, socket, head, {
      controlToken: options.controlToken,
      ownPorts: () => ownPorts(server, options),
      dial,
      record: (record) => options.audit.append(record),
    });
  });
  return server;
}

/** Every port sandboxd listens on that sandbox code's loopback reaches: never a preview's target. */
function ownPorts(server: Server, options: DaemonServerOptions): ReadonlySet<number> {
  const address = server.address();
  const ports = new Set<number>([...options.gateways.status().values()].map((route) => route.port));
  if (typeof address === 'object' && address !== null) ports.add(address.port);
  if (options.egress !== undefined) for (const port of Object.values(EGRESS_PORTS)) ports.add(port);
  const broker = options.broker?.port;
  if (broker !== undefined) ports.add(broker);
  return ports;
}
