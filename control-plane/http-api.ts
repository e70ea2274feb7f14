/**
 * The control plane's REST API (DESIGN.md §3): JSON under /v1, errors as envelopes with the registry's
 * status, the sandbox access token as a bearer token where a call acts on a sandbox.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ERROR_HTTP_STATUS } from '../spec/error-codes.js';
import type { Observable } from 'rxjs';
import { AuthenticationError, InvalidArgumentError, SdkError } from '../spec/errors.js';
import { SANDBOXD_VERSION } from '../daemon/version.js';
import type { CreateSandboxRequest } from './api-schemas.js';
import type { ControlPlane } from './control-plane.js';
import { openApiDocument } from './openapi.js';

const MAX_BODY = 64 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
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
  const after = new URL(req.url ?? '/', 'http://control-plane').searchParams.get('after');
  if (after === null) return undefined;
  if (!/^\d{1,15}$/.test(after)) throw new InvalidArgumentError('after: must be a sequence number');
  return Number(after);
}

/** Writes records as NDJSON until the stream ends or the client goes away. */
function streamNdjson(res: ServerResponse, events: Observable<unknown>): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders(); // a live-only feed may have nothing to write for a while
  const subscription = events.subscribe({
    next: (event) => res.write(`${JSON.stringify(event)}\n`),
    complete: () => res.end(),
    error: () => res.destroy(),
  });
  res.once('close', () => subscription.unsubscribe());
}

/** Creates the HTTP server of a control plane (not yet listening). */
export function createControlPlaneServer(plane: ControlPlane): Server {
  const route = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<[number, unknown] | 'streamed'> => {
    const path = new URL(req.url ?? '/', 'http://control-plane').pathname;
    const [, v1, collection, id, verb] = path.split('/');
    const key = `${req.method ?? ''} /${[v1, collection, id === undefined ? undefined : ':id', verb].filter((p) => p !== undefined).join('/')}`;
    const caller = bearer(req);
    const operatorOnly = (): void => {
      if (!plane.isOperator(caller)) throw new AuthenticationError('missing or invalid operator key');
    };
    switch (key) {
      case 'GET /v1/openapi.json':
        return [200, openApiDocument(SANDBOXD_VERSION)];
      case 'POST /v1/sandboxes':
        operatorOnly();
        return [201, await plane.create((await readJson(req)) as CreateSandboxRequest) /* checked inside */];
      case 'GET /v1/sandboxes':
        operatorOnly();
        return [200, plane.list()];
      case 'GET /v1/sandboxes/:id':
        plane.authorize(id ?? '', caller);
        return [200, plane.get(id ?? '')];
      case 'DELETE /v1/sandboxes/:id':
        return [200, await plane.kill(id ?? '', bearer(req))];
      case 'POST /v1/sandboxes/:id/pause':
        return [200, await plane.pause(id ?? '', bearer(req))];
      case 'POST /v1/sandboxes/:id/connect':
        // A wrong token does not fail connect (SPEC Authentication 1); no credential at all does.
        if (caller === undefined) throw new AuthenticationError('missing sandbox access token');
        return [200, await plane.connect(id ?? '', caller)];
      case 'POST /v1/sandboxes/:id/activity':
        return [200, await plane.activity(id ?? '', bearer(req))];
      case 'GET /v1/events':
        operatorOnly();
        streamNdjson(res, plane.events({ after: cursor(req) }));
        return 'streamed';
      case 'GET /v1/inspect':
        operatorOnly();
        streamNdjson(res, plane.inspect$);
        return 'streamed';
      case 'GET /v1/sandboxes/:id/events':
        plane.authorize(id ?? '', caller);
        streamNdjson(res, plane.events({ sandboxId: id ?? '', after: cursor(req) }));
        return 'streamed';
      default:
        return [404, { code: 'invalid_argument', message: 'no such endpoint' }];
    }
  };
  return createServer((req, res) => {
    route(req, res).then(
      (reply) => {
        if (reply !== 'streamed') send(res, ...reply);
      },
      (error: unknown) => {
        if (res.headersSent) {
          res.destroy();
        } else if (error instanceof SdkError) {
          send(res, ERROR_HTTP_STATUS[error.code], {
            code: error.code,
            message: error.message,
            ...(error.context === undefined ? {} : { context: error.context }),
          });
        } else {
          send(res, 500, {
            code: 'sandbox_error',
            message: 'the control plane failed to handle the request',
          });
        }
      },
    );
  });
}
