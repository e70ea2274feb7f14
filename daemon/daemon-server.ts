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
 * The control plane's credential is admitted to `CONTROL_ENDPOINTS` only, and its calls are not recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import { CONTROL_ENDPOINTS, CONTROL_ONLY, TERMINAL_ENDPOINTS, processRecord } from './audit-records.js';
import { EGRESS_PORTS, egressPolicyWire } from '../protocol/egress-wire.js';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { openPortTunnel } from './port-tunnel.js';
import type { EgressFilter } from './egress/egress-filter.js';
import type { CredentialBroker } from './egress/credential-broker.js';
import { configureCredentialsSchema } from '../protocol/credentials-wire.js';
import { envelopeOf, httpStatusOf, type ErrorEnvelope } from '../protocol/error-envelope.js';
import { configureSandboxSchema, type GatewayState } from '../protocol/gateway-wire.js';
import {
  LOGIN_SHELL,
  signalCommandSchema,
  startCommandSchema,
  terminalSizeSchema,
} from '../protocol/process-events.js';
import { putSecretsSchema } from '../protocol/secrets-wire.js';
import type { SnapshotCarry } from '../protocol/snapshot-carry.js';
import { cursorOf } from '../protocol/cursor.js';
import { AGENT_MIN_VERSION, meetsVersion } from '../protocol/versions.js';
import { agentConfigSchema, prepareAgentSchema, startExecutionSchema } from '../protocol/agent-wire.js';
import type { AgentHost } from './agent-host.js';
import { Router, type RouteReply } from '../protocol/router.js';
import type { SequencedLog } from '../actors/sequenced-log.js';
import type { GatewayHost } from '../gateway/gateway-host.js';
import { CONNECTION_LIMITS } from '../gateway/connection-limits.js';
import type { ManagedProcess } from './managed-process.js';
import type { ProcessTable } from './process-table.js';
import type { TokenCheck } from './token.js';
import { RequestError } from './request-error.js';
import { homeArchiveRoutes } from './home-archive.js';
import { filesRoutes } from './files-api.js';
import { StreamQuota, streamAudit, streamLines } from './event-streams.js';
import { streamProcessEvents } from './process-stream.js';
import { readBody, readJson as readBodyJson } from './request-body.js';
import { SecretEnvs } from './secret-envs.js';
import { checkedAccount } from './sandbox-account.js';
import { DEFAULT_ACCOUNT } from '../protocol/sandbox-accounts.js';

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

/** Largest JSON request body. */
const MAX_JSON_BYTES = 4 * 1024 * 1024;

/** Largest agent prompt. */
const MAX_PROMPT_BYTES = 4 * 1024 * 1024;

type Reply = RouteReply;

/** One call as a handler sees it (the token already checked). */
interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
}

type Handler = (call: Call) => Reply | Promise<Reply>;

/** ConfigureStatus: ports, urls and failure classes, never a value. */
function gatewayState(host: GatewayHost): GatewayState {
  return {
    routes: Object.fromEntries(
      [...host.status()].map(([name, s]) => [
        name,
        { port: s.port, url: s.url, lastErrorClass: s.lastErrorClass ?? null },
      ]),
    ),
  };
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

const readJson = <T extends z.ZodType>(req: IncomingMessage, schema: T): Promise<z.output<T>> =>
  readBodyJson(req, schema, MAX_JSON_BYTES);

/**
 * Connections sandboxd holds at once; each has the gateway's request-head deadline. Only the host's
 * side reaches sandboxd's port (the sandbox's table refuses sandbox code), so these bound what a host
 * process that opens connections and sends nothing can make sandboxd hold.
 */
const MAX_CONNECTIONS = 1024;

/** Open streams of each kind at most (see `event-streams.ts` for what each may hold). */
const STREAM_LIMITS = { commands: 32, agent: 16, records: 16 } as const;

/** The `?after=` cursor of a stream request. @throws RequestError when it is not a number */
function afterOf(url: URL): number | undefined {
  const after = cursorOf(url);
  if (after === 'invalid') throw new RequestError('invalid_argument', 'after: must be a sequence number');
  return after;
}

/** Creates the daemon's HTTP server (not yet listening). */
export function createDaemonServer(options: DaemonServerOptions): Server {
  const { processes } = options;
  const keepaliveMs = options.keepaliveMs ?? 10_000;

  /** Terminals the control plane's credential opened (`POST /v1/terminals`), while they run. */
  const operatorTerminals = new Set<number>();

  const find = (pid: string | undefined): ManagedProcess => {
    const found = processes.get(Number(pid));
    if (found === undefined) throw new RequestError('process_not_found', 'no such process');
    return found;
  };

  const quotas = {
    commands: new StreamQuota(STREAM_LIMITS.commands, 'command event streams'),
    agent: new StreamQuota(STREAM_LIMITS.agent, 'agent event streams'),
    records: new StreamQuota(STREAM_LIMITS.records, 'record streams'),
  };
  /** A command's events after `?after=` (from its start without) at the client's pace. */
  const streamEvents = (res: ServerResponse, proc: ManagedProcess, url: URL): void => {
    const after = afterOf(url);
    quotas.commands.take(res);
    streamProcessEvents(res, proc, after ?? 0, keepaliveMs, options.streamStallMs);
  };

  const ok = (body: unknown = {}): Reply => ({ status: 200, body });

  // `secrets=`: in this closure's memory only, for commands; the agent host never sees them.
  const secretEnvs = new SecretEnvs();

  const brokerOf = (): CredentialBroker => {
    if (options.broker === undefined) {
      throw new RequestError('invalid_argument', 'credentials are brokered inside a sandbox only');
    }
    return options.broker;
  };

  const { agents } = options;
  // A template built before the agent (SPEC 0.8.0) reports an older version: its daemon has no agent.
  const agentsOf = (): AgentHost => {
    if (!meetsVersion(options.version, AGENT_MIN_VERSION)) {
      throw new RequestError(
        'unimplemented',
        `sandbox image ${options.version} predates the agent (${AGENT_MIN_VERSION})`,
        'UnimplementedError',
      );
    }
    return agents;
  };
  const router = new Router<Handler>({
    // Readiness; nothing secret (answered before the token check).
    'GET /v1/health': () => ok({ ok: true }),
    'GET /v1/events': ({ res, url }) => {
      const after = afterOf(url);
      quotas.records.take(res);
      streamAudit(res, options.audit, after);
      return 'streamed';
    },
    'POST /v1/gateways': async ({ req }) => {
      // The body holds header values: it goes to the gateway host and nowhere else.
      const { routes } = await readJson(req, configureSandboxSchema);
      const outcome = await options.gateways.apply(routes);
      if (!outcome.ok) {
        throw new RequestError(outcome.failure.code, outcome.failure.message, outcome.failure.errorClass);
      }
      return ok(gatewayState(options.gateways));
    },
    'GET /v1/gateways': () => ok(gatewayState(options.gateways)),
    // What a memory snapshot's copy takes over (protocol/snapshot-carry.ts): asked as it is taken.
    'GET /v1/snapshot-carry': (): Reply => {
      const gatewayPorts = Object.fromEntries(
        [...options.gateways.status()].map(([name, s]) => [name, s.port]),
      );
      const standby = options.agents.carried();
      return ok({ gatewayPorts, ...(standby === undefined ? {} : { standby }) } satisfies SnapshotCarry);
    },
    // The control plane's alone (CONTROL_ONLY): it changes the driver's tables in the same step.
    'PUT /v1/egress': async ({ req }) => {
      const policy = await readJson(req, egressPolicyWire);
      if (options.egress === undefined) throw new RequestError('not_found', 'no egress filter here');
      options.egress.update(policy);
      return ok(policy);
    },
    'PUT /v1/secrets': async ({ req }) => {
      // The body holds secret values: they go to `secretEnvs` and nowhere else.
      secretEnvs.replace((await readJson(req, putSecretsSchema)).envs);
      return ok({ names: secretEnvs.names });
    },
    'POST /v1/credentials': async ({ req }) => {
      // The body holds header values: they go to the broker and nowhere else.
      const { rules } = await readJson(req, configureCredentialsSchema);
      const started = brokerOf().state().proxy !== null;
      const state = await brokerOf().configure(rules);
      // A runtime prepared before the proxy existed would run the agent's tools without it.
      if (!started && state.proxy !== null) options.agents.environmentChanged();
      return ok(state);
    },
    'GET /v1/credentials': () => ok(brokerOf().state()),
    'GET /v1/version': () => ok({ version: options.version }),
    ...homeArchiveRoutes(processes.user),
    ...filesRoutes(processes.user),
    'POST /v1/processes': async ({ req, res, url }) => {
      const { user, ...spec } = await readJson(req, startCommandSchema);
      // Root outside a sandbox is refused (`invalid_argument`) before the command starts.
      const account = checkedAccount('commands.run', user, processes.user);
      const streamed = url.searchParams.get('stream') === 'true';
      if (streamed) quotas.commands.check(); // refused before the command starts
      const proc = await processes
        .start({
          ...spec,
          account,
          // The broker's proxy and trust variables, then the secrets, then the command's own.
          envs: { ...options.broker?.environment(), ...secretEnvs.under(spec.envs) },
          cwd: spec.cwd,
          timeoutMs: spec.timeoutMs,
        })
        .catch((error: unknown) => {
          throw new RequestError('sandbox_error', error instanceof Error ? error.message : 'could not start');
        });
      proc.follow((event) => {
        if (event.type === 'start' || event.type === 'end') {
          options.audit.append(processRecord(proc.pid, spec.cmd, event));
        }
      });
      // `?stream=true`: the answer is the command's event stream (its start event names the pid), so
      // running a command in the foreground is one call.
      if (streamed) {
        streamEvents(res, proc, url);
        return 'streamed';
      }
      return ok({ pid: proc.pid });
    },
    // The operator's terminal (the inspector's panel, through the control plane): a login shell as the
    // sandbox user, whose calls by pid the control plane's credential may then make.
    'POST /v1/terminals': async ({ req }) => {
      const size = await readJson(req, terminalSizeSchema);
      const proc = await processes
        .start({
          cmd: LOGIN_SHELL,
          pty: size,
          account: checkedAccount('terminal', DEFAULT_ACCOUNT, processes.user),
          envs: { ...options.broker?.environment(), ...secretEnvs.under({}) },
          cwd: undefined,
          timeoutMs: undefined,
          killTree: true,
        })
        .catch((error: unknown) => {
          throw new RequestError('sandbox_error', error instanceof Error ? error.message : 'could not start');
        });
      operatorTerminals.add(proc.pid);
      proc.follow((event) => {
        if (event.type === 'start' || event.type === 'end') {
          options.audit.append(processRecord(proc.pid, LOGIN_SHELL, event));
        }
        if (event.type === 'end') operatorTerminals.delete(proc.pid);
      });
      return ok({ pid: proc.pid });
    },
    'GET /v1/processes': () =>
      ok(
        processes
          .list()
          .map((p) => ({ pid: p.pid, cmd: p.cmd, running: p.running, ...(p.pty ? { pty: true } : {}) })),
      ),
    'GET /v1/processes/:pid/events': ({ res, url, params }) => {
      streamEvents(res, find(params['pid']), url);
      return 'streamed';
    },
    'POST /v1/processes/:pid/stdin': async ({ req, params }) => {
      const proc = find(params['pid']);
      // One chunk at a time, each once the pipe took it: a command that does not read holds the body.
      for await (const chunk of req) await proc.writeStdin(chunk as Buffer);
      return ok();
    },
    'POST /v1/processes/:pid/stdin/close': ({ params }) => {
      find(params['pid']).closeStdin();
      return ok();
    },
    'POST /v1/processes/:pid/resize': async ({ req, params }) => {
      await find(params['pid']).resize(await readJson(req, terminalSizeSchema));
      return ok();
    },
    'POST /v1/processes/:pid/signal': async ({ req, params }) => {
      const proc = find(params['pid']);
      const { signal, tree } = await readJson(req, signalCommandSchema);
      await proc.kill(signal, tree);
      return ok();
    },
    'PUT /v1/agent/config': async ({ req }) =>
      ok(agentsOf().writeConfig(await readJson(req, agentConfigSchema))),
    'POST /v1/agent/executions': async ({ req }) =>
      ok({ executionId: await agentsOf().start(await readJson(req, startExecutionSchema)) }),
    'GET /v1/agent/executions': () => ok(agentsOf().list()),
    'POST /v1/agent/executions/:id/prompt': async ({ req, res, params }): Promise<Reply> => {
      const id = params['id'] ?? '';
      const prompt = await readBody(req, MAX_PROMPT_BYTES);
      agentsOf().prompt(id, prompt);
      quotas.agent.take(res);
      streamLines(res, agents.lines(id), keepaliveMs);
      return 'streamed';
    },
    'GET /v1/agent/executions/:id/events': ({ res, url, params }) => {
      const after = afterOf(url);
      const lines = agentsOf().lines(params['id'] ?? '', after ?? 0);
      quotas.agent.take(res);
      streamLines(res, lines, keepaliveMs);
      return 'streamed';
    },
    'POST /v1/agent/executions/:id/abort': ({ params }) => {
      agentsOf().abort(params['id'] ?? '');
      return ok();
    },
    'POST /v1/agent/prepare': async ({ req }) => {
      const host = agentsOf();
      const { runtime, configHash } = await readJson(req, prepareAgentSchema);
      host.prepare(runtime, configHash);
      return ok();
    },
  });

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<Reply> => {
    const url = new URL(req.url ?? '/', 'http://sandboxd');
    const match = router.match(req.method ?? '', url.pathname);
    const endpoint = match.matched ? match.endpoint : undefined;
    // Readiness needs no token.
    if (match.matched && endpoint === 'GET /v1/health') {
      return match.handler({ req, res, url, params: match.params });
    }
    const user = !(endpoint !== undefined && CONTROL_ONLY.has(endpoint)) && options.token.admits(req);
    const control =
      !user &&
      endpoint !== undefined &&
      (CONTROL_ENDPOINTS.has(endpoint) ||
        (TERMINAL_ENDPOINTS.has(endpoint) &&
          match.matched &&
          operatorTerminals.has(Number(match.params['pid'])))) &&
      options.controlToken?.admits(req) === true;
    if (!user && !control) {
      throw new RequestError('unauthenticated', 'missing or invalid sandbox access token');
    }
    // The control plane watching (the inspector) is not the sandbox's activity: it must not keep the
    // sandbox from going idle. Reading the stream is not activity either.
    const terminal =
      endpoint === 'POST /v1/terminals' || (endpoint !== undefined && TERMINAL_ENDPOINTS.has(endpoint));
    if ((user || (control && terminal)) && endpoint !== 'GET /v1/events') {
      // The endpoint's pattern, never the path as sent.
      const called = endpoint ?? 'no such endpoint';
      options.audit.append({ at: Date.now(), type: 'call', method: req.method ?? '', endpoint: called });
    }
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
