/**
 * The control plane's REST API (DESIGN.md §3): JSON under /v1, errors as envelopes with the registry's
 * status, the sandbox access token as a bearer token where a call acts on a sandbox.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { map } from 'rxjs';
import { envelopeOf, httpStatusOf, type ErrorEnvelope } from '../protocol/error-envelope.js';
import type { Duplex } from 'node:stream';
import { exposePortRequestSchema, PORT_PLACEHOLDER } from '../protocol/preview-wire.js';
import { parseOptions } from '../rules/parse-options.js';
import { previewRequestOf, type PreviewRequest } from './preview-target.js';
import { daemonPathOf, daemonRequestOf, type DaemonRequest } from './daemon-proxy.js';
import { sandboxStateSchema, type CreateSandboxRequest } from '../protocol/control-plane-api.js';
import { sandboxMetadataSchema } from '../rules/sandbox-metadata.js';
import { z } from 'zod';
import { cursorOf } from '../protocol/cursor.js';
import { Router, type RouteReply } from '../protocol/router.js';
import { SANDBOXD_VERSION } from '../protocol/versions.js';
import { AuthenticationError, InvalidArgumentError } from '../rules/errors.js';
import type { ControlPlane } from './control-plane.js';
import { API_CSP, COMMON_HEADERS, hostName, refuseCrossOrigin, refuseForeignHost } from './browser-policy.js';
import { inspectorAsset } from './inspector-assets.js';
import { MACHINE_GRAPHS } from './machine-graphs.js';
import { streamNdjson } from './ndjson-stream.js';
import { openApiDocument } from './openapi.js';

const MAX_BODY = 64 * 1024;

type Reply = RouteReply;

/** One call as a handler sees it. */
interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: Readonly<Record<string, string>>;
  /** The bearer credential: a sandbox access token or the operator key. */
  readonly caller: string | undefined;
}

type Handler = (call: Call) => Reply | Promise<Reply>;

function send(
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

/** Answers with one of the inspector page's files. */
async function sendAsset(res: ServerResponse, name: string): Promise<Reply> {
  const asset = await inspectorAsset(name);
  res.writeHead(200, { ...asset.headers, 'content-length': asset.body.length });
  res.end(asset.body);
  return 'streamed';
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > MAX_BODY) throw new InvalidArgumentError('body: larger than 64 KiB');
  }
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('body: not JSON');
  }
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') === true ? header.slice(7) : undefined;
}

/** `?after=<seq>`: the stream resumes after that event. */
function cursor(req: IncomingMessage): number | undefined {
  const after = cursorOf(new URL(req.url ?? '/', 'http://control-plane'));
  if (after === 'invalid') throw new InvalidArgumentError('after: must be a sequence number');
  return after;
}

/**
 * `GET /v1/sandboxes`'s filter: `state` (repeated or comma-separated: running, suspended, ended) and
 * `metadata` (as E2B's API takes it: one parameter holding `key=value` pairs, URL-encoded).
 *
 * @throws InvalidArgumentError for an unknown state or metadata that is not a map
 */
function listFilter(req: IncomingMessage): Parameters<ControlPlane['list']>[0] {
  const query = new URL(req.url ?? '/', 'http://control-plane').searchParams;
  const states = query
    .getAll('state')
    .flatMap((value) => value.split(','))
    .filter((value) => value !== '');
  const metadataText = query.get('metadata');
  const metadata =
    metadataText === null ? undefined : Object.fromEntries(new URLSearchParams(metadataText).entries());
  return {
    ...(states.length === 0
      ? {}
      : { states: parseOptions(z.array(sandboxStateSchema), states, 'list', ['state']) }),
    ...(metadata === undefined
      ? {}
      : { metadata: parseOptions(sandboxMetadataSchema, metadata, 'list', ['metadata']) }),
  };
}

/** Options of the control plane's HTTP server. */
export interface ControlPlaneServerOptions {
  /**
   * Host names (or addresses) it answers to, at any port, besides loopback's (`localhost`, `127.0.0.1`,
   * `[::1]`) and the address it listens on, at its port: a request with another `Host` is refused with
   * `forbidden_host` (403), so a site whose name resolves to this address (DNS rebinding) reaches nothing.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * The wildcard domain of host-based preview URLs (`<port>-<id>.<domain>`, `sdk serve
   * --preview-domain`); without one, previews are path-based (`/v1/sandboxes/<id>/ports/<port>/`).
   */
  readonly previewDomain?: string;
}

/** Creates the HTTP server of a control plane (not yet listening). */
export function createControlPlaneServer(
  plane: ControlPlane,
  options: ControlPlaneServerOptions = {},
): Server {
  const allowedHosts = new Set((options.allowedHosts ?? []).map(hostName));
  const operatorOnly = (caller: string | undefined): void => {
    if (!plane.isOperator(caller)) throw new AuthenticationError('missing or invalid operator key');
  };
  const id = (params: Readonly<Record<string, string>>): string => params['id'] ?? '';
  const json = (status: number, body: unknown): Reply => ({ status, body });

  const redirect = (): Reply => ({ status: 302, body: {}, headers: { location: '/inspector/' } });
  const router = new Router<Handler>({
    'GET /': redirect,
    // `/inspector` and `/inspector/` meet here (the router ignores empty segments): the page's relative
    // asset URLs need the trailing slash.
    'GET /inspector': ({ req, res }) =>
      (req.url ?? '').split('?')[0]?.endsWith('/') === true ? sendAsset(res, 'index.html') : redirect(),
    'GET /inspector/:file': ({ res, params }) => sendAsset(res, params['file'] ?? ''),
    'GET /v1/openapi.json': () => json(200, openApiDocument(SANDBOXD_VERSION)),
    'GET /v1/machines': ({ caller }) => {
      operatorOnly(caller);
      return json(200, MACHINE_GRAPHS);
    },
    'GET /v1/inspector/sandboxes': async ({ caller }) => {
      operatorOnly(caller);
      return json(200, await plane.inspectorSandboxes());
    },
    'GET /v1/sandboxes/:id/records': ({ req, res, params, caller }) => {
      streamNdjson(
        res,
        plane
          .records(id(params), caller, cursor(req))
          .pipe(map(({ seq, ...record }) => ({ ...record, cursor: seq }))),
      );
      return 'streamed';
    },
    'GET /v1/sandboxes/:id/history': async ({ params, caller }) =>
      json(200, await plane.history(id(params), caller)),
    'GET /v1/sandboxes/:id/agent/executions': async ({ params, caller }) =>
      json(200, await plane.executions(id(params), caller)),
    'GET /v1/sandboxes/:id/agent/executions/:eid/events': async ({ req, res, params, caller }) => {
      await plane.executionEvents(id(params), caller, params['eid'] ?? '', cursor(req), res);
      return 'streamed' as const;
    },
    'POST /v1/sandboxes/:id/agent/executions/:eid/abort': async ({ params, caller }) => {
      await plane.abortExecution(id(params), caller, params['eid'] ?? '');
      return json(200, {});
    },
    'POST /v1/sandboxes': async ({ req, caller }) => {
      operatorOnly(caller);
      const created = await plane.create((await readJson(req)) as CreateSandboxRequest); // checked inside
      return json(201, reachable(req, created));
    },
    'POST /v1/templates': async ({ req, res, caller }) => {
      streamNdjson(res, plane.buildTemplate(await readJson(req), caller));
      return 'streamed' as const;
    },
    'GET /v1/sandboxes': ({ req, caller }) => {
      operatorOnly(caller);
      return json(200, plane.list(listFilter(req)));
    },
    'POST /v1/sandboxes/:id/timeout': async ({ req, params, caller }) =>
      json(200, await plane.setTimeout(id(params), await readJson(req), caller)),
    'GET /v1/sandboxes/:id/metrics': ({ req, params, caller }) =>
      json(
        200,
        plane.metrics(
          id(params),
          Object.fromEntries(new URL(req.url ?? '/', 'http://control-plane').searchParams),
          caller,
        ),
      ),
    'GET /v1/sandboxes/:id': ({ params, caller }) => {
      plane.authorize(id(params), caller);
      return json(200, plane.get(id(params)));
    },
    'DELETE /v1/sandboxes/:id': async ({ params, caller }) => json(200, await plane.kill(id(params), caller)),
    'POST /v1/sandboxes/:id/pause': async ({ params, caller }) =>
      json(200, await plane.pause(id(params), caller)),
    'POST /v1/sandboxes/:id/connect': async ({ req, params, caller }) => {
      // A wrong token does not fail connect (SPEC Authentication 1); no credential at all does.
      if (caller === undefined) throw new AuthenticationError('missing sandbox access token');
      return json(200, reachable(req, await plane.connect(id(params), caller)));
    },
    'GET /v1/sandboxes/:id/previews': ({ params, caller }) =>
      json(200, {
        ports: plane.previews.publicPorts(id(params), caller).map((port) => ({ port, public: true })),
      }),
    'PUT /v1/sandboxes/:id/previews/:port': async ({ req, params, caller }) => {
      const { public: isPublic } = parseOptions(
        exposePortRequestSchema,
        await readJson(req),
        'sbx.ports.expose',
      );
      const port = Number(params['port']);
      await plane.previews.expose(id(params), port, isPublic, caller);
      return json(200, { port, public: isPublic });
    },
    'POST /v1/sandboxes/:id/terminals': async ({ req, params, caller }) =>
      json(201, await plane.terminals.open(id(params), await readJson(req), caller)),
    'GET /v1/sandboxes/:id/terminals/:pid/events': async ({ req, res, params, caller }) => {
      await plane.terminals.events(id(params), params['pid'] ?? '', cursor(req), caller, res);
      return 'streamed' as const;
    },
    'POST /v1/sandboxes/:id/terminals/:pid/input': async ({ req, params, caller }) => {
      await plane.terminals.input(id(params), params['pid'] ?? '', await readJson(req), caller);
      return json(200, {});
    },
    'POST /v1/sandboxes/:id/terminals/:pid/resize': async ({ req, params, caller }) => {
      await plane.terminals.resize(id(params), params['pid'] ?? '', await readJson(req), caller);
      return json(200, {});
    },
    'DELETE /v1/sandboxes/:id/terminals/:pid': async ({ params, caller }) => {
      await plane.terminals.close(id(params), params['pid'] ?? '', caller);
      return json(200, {});
    },
    'PUT /v1/sandboxes/:id/egress': async ({ req, params, caller }) =>
      json(200, await plane.updateEgress(id(params), await readJson(req), caller)),
    'POST /v1/sandboxes/:id/activity': async ({ params, caller }) =>
      json(200, await plane.activity(id(params), caller)),
    'POST /v1/sandboxes/:id/snapshots': async ({ params, caller }) =>
      json(201, await plane.snapshot(id(params), caller)),
    'GET /v1/sandboxes/:id/snapshots': ({ params, caller }) =>
      json(200, { snapshots: plane.snapshots(caller, id(params)) }),
    'POST /v1/sandboxes/:id/fork': async ({ req, params, caller }) => {
      const forked = await plane.fork(id(params), await readJson(req), caller);
      return json(201, {
        ...forked,
        sandboxes: forked.sandboxes.map((sandbox) => reachable(req, sandbox)),
      });
    },
    'GET /v1/snapshots': ({ caller }) => json(200, { snapshots: plane.snapshots(caller) }),
    'DELETE /v1/snapshots/:snapshotId': async ({ params, caller }) => {
      await plane.deleteSnapshot(params['snapshotId'] ?? '', caller);
      return json(200, {});
    },
    'GET /v1/events': ({ req, res, caller }) => {
      operatorOnly(caller);
      streamNdjson(res, plane.events({ after: cursor(req) }));
      return 'streamed';
    },
    'GET /v1/inspect': ({ req, res, caller }) => {
      operatorOnly(caller);
      streamNdjson(res, plane.inspections(cursor(req)));
      return 'streamed';
    },
    'GET /v1/sandboxes/:id/events': ({ req, res, params, caller }) => {
      plane.authorize(id(params), caller);
      streamNdjson(res, plane.events({ sandboxId: id(params), after: cursor(req) }));
      return 'streamed';
    },
  });

  const previewDomain = options.previewDomain?.toLowerCase();
  /**
   * A sandbox's answer as its caller reaches it, on the host and port the caller used: its preview URL
   * pattern, and its sandboxd behind this control plane's daemon proxy.
   */
  const reachable = <T extends { sandboxId: string; daemonUrl: string }>(
    req: IncomingMessage,
    answer: T,
  ): T & { previewUrl: string } => {
    const host = req.headers.host ?? '127.0.0.1';
    const previewUrl =
      previewDomain === undefined
        ? `http://${host}/v1/sandboxes/${answer.sandboxId}/ports/${PORT_PLACEHOLDER}/`
        : `http://${PORT_PLACEHOLDER}-${answer.sandboxId}.${previewDomain}${/:[0-9]+$/.exec(host)?.[0] ?? ''}/`;
    return { ...answer, previewUrl, daemonUrl: daemonPathOf(`http://${host}`, answer.sandboxId) };
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<Reply> => {
    refuseForeignHost(req, server.address(), allowedHosts); // before anything, the page's files included
    const path = new URL(req.url ?? '/', 'http://control-plane').pathname;
    const match = router.match(req.method ?? '', path);
    if (!match.matched) {
      const { status, envelope, headers } = match.refusal;
      return { status, body: envelope, headers };
    }
    // The page's own files may be opened from anywhere (a link); the API only from the page itself.
    if (path.split('/').find((segment) => segment !== '') === 'v1') refuseCrossOrigin(req);
    return match.handler({ req, res, params: match.params, caller: bearer(req) });
  };

  const server = createServer((req, res) => {
    const daemon = daemonRequestOf(req.url);
    if (daemon !== undefined) {
      forwardDaemon(req, res, daemon).catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const envelope = envelopeOf(error, 'the control plane failed to forward the call');
        send(res, httpStatusOf(envelope), envelope);
      });
      return;
    }
    const preview = previewRequestOf(req, previewDomain);
    // A preview answers with the page's own headers (framing, scripts): none of the API's is added.
    if (preview !== undefined && preview !== 'add-slash') {
      forwardPreview(req, res, preview).catch((error: unknown) => {
        if (res.headersSent) res.destroy();
        else sendPreviewRefusal(res, error);
      });
      return;
    }
    for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
    res.setHeader('content-security-policy', API_CSP); // the page's files answer with their own
    if (preview === 'add-slash') {
      const url = new URL(req.url ?? '/', 'http://control-plane');
      send(res, 308, {}, { location: `${url.pathname}/${url.search}` });
      return;
    }
    route(req, res).then(
      (reply) => {
        if (reply !== 'streamed') send(res, reply.status, reply.body, reply.headers);
      },
      (error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const envelope = envelopeOf(error, 'the control plane failed to handle the request');
        send(res, httpStatusOf(envelope), envelope);
      },
    );
  });
  const forwardDaemon = async (req: IncomingMessage, res: ServerResponse, daemon: DaemonRequest) => {
    refuseForeignHost(req, server.address(), allowedHosts);
    refuseCrossOrigin(req);
    await plane.daemonProxy.request(req, res, daemon);
  };
  const forwardPreview = async (
    req: IncomingMessage,
    res: ServerResponse,
    preview: PreviewRequest,
  ): Promise<void> => {
    // By path, a preview shares the control plane's names (DNS rebinding); a preview host is its own.
    if (preview.cookiePath !== '/') refuseForeignHost(req, server.address(), allowedHosts);
    await plane.previewProxy.request(req, res, preview);
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const preview = previewRequestOf(req, previewDomain);
    if (preview === undefined || preview === 'add-slash') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    (async () => {
      if (preview.cookiePath !== '/') refuseForeignHost(req, server.address(), allowedHosts);
      await plane.previewProxy.upgrade(req, socket, head, preview);
    })().catch((error: unknown) => {
      const envelope = envelopeOf(error, 'the control plane failed to forward the preview');
      const body = JSON.stringify(envelope);
      socket.end(
        `HTTP/1.1 ${String(previewStatus(envelope))} ${envelope.code}\r\ncontent-type: application/json\r\ncontent-length: ${String(Buffer.byteLength(body))}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
  return server;
}

/** The status of a refusal; a preview of an ended sandbox is gone for good: 410. */
function previewStatus(envelope: ErrorEnvelope): number {
  return envelope.code === 'sandbox_ended' ? 410 : httpStatusOf(envelope);
}

/** Answers a preview's refusal with its envelope and the API's headers (none of the app's). */
function sendPreviewRefusal(res: ServerResponse, error: unknown): void {
  for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
  res.setHeader('content-security-policy', API_CSP);
  const envelope = envelopeOf(error, 'the control plane failed to handle the request');
  send(res, previewStatus(envelope), envelope);
}
