/**
 * One call to sandboxd's API as its route handlers see it (the credential already checked, the call
 * recorded), and what every group of routes shares: the answer, the JSON body's bound, the `?after=`
 * cursor.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { cursorOf } from '../protocol/cursor.js';
import type { RouteReply } from '../protocol/router.js';
import { readJson as readBodyJson } from './request-body.js';
import { RequestError } from './request-error.js';

/** Largest JSON request body. */
const MAX_JSON_BYTES = 4 * 1024 * 1024;

/** One call as a handler sees it. */
export interface DaemonCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
}

/** A route's handler: a JSON answer, or `'streamed'` once it answered on `res` itself. */
export type DaemonHandler = (call: DaemonCall) => RouteReply | Promise<RouteReply>;

/** Routes by `'METHOD /path'` pattern. */
export type DaemonRoutes = Record<string, DaemonHandler>;

/** A 200 answer. */
export const ok = (body: unknown = {}): RouteReply => ({ status: 200, body });

/** The request's JSON body, checked by `schema`, at most 4 MiB. */
export const readJson = <T extends z.ZodType>(req: IncomingMessage, schema: T): Promise<z.output<T>> =>
  readBodyJson(req, schema, MAX_JSON_BYTES);

/** The `?after=` cursor of a stream request. @throws RequestError when it is not a number */
export function afterOf(url: URL): number | undefined {
  const after = cursorOf(url);
  if (after === 'invalid') throw new RequestError('invalid_argument', 'after: must be a sequence number');
  return after;
}

/**
 * Middleware: `routes` with `guard` run before each handler (a version gate, say), refusing by throwing.
 */
export function guarded(routes: DaemonRoutes, guard: (call: DaemonCall) => void): DaemonRoutes {
  return Object.fromEntries(
    Object.entries(routes).map(([endpoint, handler]) => [
      endpoint,
      (call: DaemonCall) => {
        guard(call);
        return handler(call);
      },
    ]),
  );
}
