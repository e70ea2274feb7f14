/**
 * Answers a request the gateway will not forward: `{"code": ...}` with the status of SPEC
 * (`GATEWAY_REJECTION_STATUS`). A request whose body is still arriving is drained for a bounded time
 * before the connection is cut, so the client reads the answer instead of a reset.
 */
import { GATEWAY_REJECTION_STATUS, type GatewayRejectionCode } from '../rules/error-codes.js';
import type { Inbound } from './inbound.js';

/** How long an unwanted request body may keep draining after the answer. */
const DRAIN_MS = 2_000;

const BODIES = Object.fromEntries(
  Object.keys(GATEWAY_REJECTION_STATUS).map((code) => [code, Buffer.from(JSON.stringify({ code }))]),
) as Record<GatewayRejectionCode, Buffer>;

/**
 * Sends a rejection, or cuts the response when its headers are already out (a response already started
 * is never ended cleanly).
 *
 * @param retryAfterMs - for 429: when the next token is due
 */
export function sendRejection(
  { req, res, socket }: Inbound,
  code: GatewayRejectionCode,
  retryAfterMs?: number,
): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = BODIES[code];
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': body.length,
  };
  if (retryAfterMs !== undefined) headers['retry-after'] = Math.max(1, Math.ceil(retryAfterMs / 1000));
  // A request refused for its framing may have been read differently by whatever sent it: nothing else
  // on that connection is trusted, so it closes after this answer.
  if (code === 'bad_request') res.shouldKeepAlive = false;
  res.writeHead(GATEWAY_REJECTION_STATUS[code], headers);
  res.end(body);
  if (!req.complete) {
    // Node drains the rest of the body after the response; bound that in time.
    const timer = setTimeout(() => {
      if (!req.complete) socket.destroy();
    }, DRAIN_MS);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
  }
}
