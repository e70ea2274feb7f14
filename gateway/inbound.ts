/**
 * One client request as a route listener holds it. The socket is taken when the connection opens and
 * carried beside the request, never read back from `req.socket` later: once undici has sent a request
 * body (the `IncomingMessage` itself) it sets that body's `socket` to null, before the response's
 * `'close'`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A client request, its response and the connection both travel on. */
export interface Inbound {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly socket: Socket;
}
