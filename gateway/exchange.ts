/**
 * Steps 3-6 of SPEC "In-sandbox gateway listener" for one admitted request: build the upstream headers,
 * stream the request body up and the response down with backpressure both ways, map failures to 502/504,
 * and abort the upstream request when the client goes away.
 */
import type { IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import type { GatewayRejectionCode } from '../rules/error-codes.js';
import type { CheckedRoute } from './configuration.js';
import type { Inbound } from './inbound.js';
import type { InjectedValues } from './injected-values.js';
import { sendRejection } from './rejection.js';
import { buildUpstreamHeaders } from './request-headers.js';
import { filterResponseHeaders } from './response-headers.js';

/** What an exchange needs from its host. */
export interface ExchangeDeps {
  readonly dispatcher: Dispatcher;
  readonly injected: InjectedValues;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);

/** 504 for the two time-outs of SPEC step 5, 502 for every other failure. */
export function upstreamFailureCode(error: unknown): GatewayRejectionCode {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMEOUT_CODES.has(code) ? 'upstream_timeout' : 'upstream_error';
}

class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Forwards one admitted request to the route's upstream. The request is undici's body stream, so after
 * the body is sent its `socket` is null (see `Inbound`).
 *
 * @param pathAndQuery - the request target exactly as received
 */
export function forward(
  inbound: Inbound,
  route: CheckedRoute,
  pathAndQuery: string,
  deps: ExchangeDeps,
): void {
  const { req, res } = inbound;
  const values = route.headers.map((h) => h.value);
  deps.injected.hold(values);
  let controller: Dispatcher.DispatchController | undefined;
  let clientGone = false;
  // Body bytes still due by Content-Length (-1: unknown), so the last chunk can go out with the end.
  let remaining = -1;
  let ended = false;
  const resume = (): void => controller?.resume();

  res.once('close', () => {
    deps.injected.release(values);
    if (!res.writableFinished) {
      clientGone = true;
      controller?.abort(new ClientGoneError('the client went away'));
    }
  });

  deps.dispatcher.dispatch(
    {
      origin: route.upstream.origin,
      path: pathAndQuery,
      method: req.method as Dispatcher.HttpMethod,
      headers: buildUpstreamHeaders(req.rawHeaders, route),
      body: hasBody(req) ? req : null,
    },
    {
      onRequestStart(c) {
        controller = c;
        if (clientGone) c.abort(new ClientGoneError('the client went away'));
      },
      onResponseStart(c, statusCode, headers) {
        if (clientGone || statusCode < 200) return; // 1xx are not relayed (DESIGN.md §5)
        res.writeHead(statusCode, filterResponseHeaders(headers, route, deps.injected));
        const length = headers['content-length'];
        remaining = typeof length === 'string' && req.method !== 'HEAD' ? Number(length) : -1;
        // A stream (server-sent events) may wait long for its first byte: its head goes out now.
        if (typeof length !== 'string') res.flushHeaders();
      },
      onResponseData(c, chunk) {
        if (clientGone || ended) return;
        if (remaining > 0 && (remaining -= chunk.length) === 0) {
          ended = true;
          res.end(chunk); // headers, body and end in one write
        } else if (!res.write(chunk)) {
          c.pause();
          res.once('drain', resume);
        }
      },
      onResponseEnd(c, trailers) {
        if (ended) return;
        const kept = filterResponseHeaders(trailers, route, deps.injected, false);
        if (kept.length > 0 && res.chunkedEncoding) {
          const pairs: [string, string][] = [];
          for (let i = 0; i < kept.length; i += 2) pairs.push([kept[i] ?? '', kept[i + 1] ?? '']);
          res.addTrailers(pairs);
        }
        res.end();
      },
      onResponseError(c, error) {
        if (clientGone) return;
        try {
          sendRejection(inbound, upstreamFailureCode(error));
        } catch {
          // undici re-emits a throw from here as an 'error' no one listens to: cut this request only.
          inbound.socket.destroy();
        }
      },
    },
  );
}
