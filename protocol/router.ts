/**
 * The one router of both servers (sandboxd and the control plane): `'METHOD /v1/path/:param'` →
 * handler. Pure: it says which handler a request reaches, with its `:param` segments, or the refusal
 * both servers answer with the envelope: 404 `not_found` for a path no route has, 405
 * `method_not_allowed` with an `Allow` header (those methods, sorted) for a path only other methods
 * have. Empty segments are ignored (`/v1//health/` is `/v1/health`); segments are matched as sent,
 * not percent-decoded.
 */
import { ERROR_HTTP_STATUS } from '../rules/error-codes.js';
import { errorEnvelope, type ErrorEnvelope } from './error-envelope.js';

/** What a handler answers: a JSON reply, or `'streamed'` when it wrote the response itself. */
export type RouteReply =
  | { readonly status: number; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | 'streamed';

/** The answer to a request no route takes. */
export interface RouteRefusal {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly envelope: ErrorEnvelope;
}

/** Where a request goes. */
export type RouteMatch<H> =
  | {
      readonly matched: true;
      readonly handler: H;
      /** The route's key, `METHOD /pattern` (names the endpoint without its parameters). */
      readonly endpoint: string;
      /** `:param` segments by name. */
      readonly params: Readonly<Record<string, string>>;
    }
  | { readonly matched: false; readonly refusal: RouteRefusal };

interface Route<H> {
  readonly method: string;
  readonly segments: readonly string[];
  readonly endpoint: string;
  readonly handler: H;
}

const segmentsOf = (path: string): string[] => path.split('/').filter((segment) => segment !== '');

/** Routes by method and path pattern; the first route listed wins where two match. */
export class Router<H> {
  readonly #routes: readonly Route<H>[];

  /** @param routes - `'GET /v1/processes/:pid/events': handler`, … */
  constructor(routes: Readonly<Record<string, H>>) {
    this.#routes = Object.entries(routes).map(([endpoint, handler]) => {
      const [method, path, ...rest] = endpoint.split(' ');
      if (
        method === undefined ||
        !/^[A-Z]+$/.test(method) ||
        path?.startsWith('/') !== true ||
        rest.length > 0
      ) {
        throw new Error(`route ${endpoint}: must be 'METHOD /path'`);
      }
      return { method, segments: segmentsOf(path), endpoint, handler };
    });
  }

  /** The route `method` and `pathname` (without the query) reach, or the refusal to answer. */
  match(method: string, pathname: string): RouteMatch<H> {
    const segments = segmentsOf(pathname);
    const allowed = new Set<string>();
    for (const route of this.#routes) {
      const params = paramsOf(route.segments, segments);
      if (params === undefined) continue;
      if (route.method === method) {
        return { matched: true, handler: route.handler, endpoint: route.endpoint, params };
      }
      allowed.add(route.method);
    }
    if (allowed.size === 0) {
      return { matched: false, refusal: refusal(errorEnvelope('not_found', 'no such endpoint'), {}) };
    }
    return {
      matched: false,
      refusal: refusal(errorEnvelope('method_not_allowed', 'no such method on this endpoint'), {
        allow: [...allowed].sort().join(', '),
      }),
    };
  }
}

function refusal(envelope: ErrorEnvelope, headers: Record<string, string>): RouteRefusal {
  return { status: ERROR_HTTP_STATUS[envelope.code], headers, envelope };
}

/** The `:param` values when `segments` fit `pattern`, else undefined. */
function paramsOf(
  pattern: readonly string[],
  segments: readonly string[],
): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of pattern.entries()) {
    const segment = segments[i] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part !== segment) return undefined;
  }
  return params;
}
