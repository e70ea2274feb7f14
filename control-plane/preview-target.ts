/**
 * Which sandbox port a request to the control plane is a preview of (issue 28): by path,
 * `/v1/sandboxes/<id>/ports/<port>/…`, or by host, `<port>-<id>.<preview domain>` (any path), and the
 * port token it presents (query, header or cookie). The token never travels on to sandbox code: the
 * forwarded path drops its query parameter and the forwarded headers drop the header and the cookie.
 */
import type { IncomingMessage } from 'node:http';
import { PREVIEW_COOKIE, PREVIEW_TOKEN_HEADER, PREVIEW_TOKEN_PARAM } from '../protocol/preview-wire.js';

/** A request for a sandbox's port. */
export interface PreviewRequest {
  readonly sandboxId: string;
  readonly port: number;
  /** Path and query to send to the port, without the preview prefix and the token parameter. */
  readonly path: string;
  /** The path the preview's cookie is scoped to (`/` for a host of its own). */
  readonly cookiePath: string;
  /** The token in the query (a link), exchanged for a cookie on a browser's navigation. */
  readonly queryToken?: string;
  /** The token the request presents: its query's, its header's or its cookie's. */
  readonly token?: string;
}

/** The path-based form; a path without the slash after the port is sent there first. */
const BY_PATH = /^\/v1\/sandboxes\/([a-z0-9]{1,64})\/ports\/([0-9]{1,5})(\/.*)?$/;

/** `<port>-<id>` of a preview host. */
const HOST_LABEL = /^([0-9]{1,5})-([a-z0-9]{1,64})$/;

/**
 * The preview a request is for, `'add-slash'` for the path-based form without the slash after the port
 * (the page's relative links need it), or undefined when it is not a preview.
 *
 * @param domain - the wildcard domain of host-based previews (`sdk serve --preview-domain`), if any
 */
export function previewRequestOf(
  req: IncomingMessage,
  domain: string | undefined,
): PreviewRequest | 'add-slash' | undefined {
  // Taken as sent: a path is never normalised and a query never re-encoded on its way to the port.
  const target = req.url ?? '/';
  const mark = target.indexOf('?');
  const rawPath = mark < 0 ? target : target.slice(0, mark);
  const rawQuery = mark < 0 ? undefined : target.slice(mark + 1);
  const host = (req.headers.host ?? '').toLowerCase().replace(/:[0-9]+$/, '');
  let sandboxId: string;
  let port: number;
  let rest: string;
  let cookiePath: string;
  const label =
    domain !== undefined && host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : undefined;
  const byHost = label === undefined ? null : HOST_LABEL.exec(label);
  if (byHost !== null) {
    sandboxId = byHost[2] ?? '';
    port = Number(byHost[1]);
    rest = rawPath;
    cookiePath = '/';
  } else {
    const byPath = BY_PATH.exec(rawPath);
    if (byPath === null) return undefined;
    if (byPath[3] === undefined) return 'add-slash';
    sandboxId = byPath[1] ?? '';
    port = Number(byPath[2]);
    rest = byPath[3];
    cookiePath = `/v1/sandboxes/${sandboxId}/ports/${String(port)}/`;
  }
  const { queryToken, query } = withoutToken(rawQuery);
  const header = req.headers[PREVIEW_TOKEN_HEADER];
  const token = queryToken ?? (typeof header === 'string' ? header : undefined) ?? cookieToken(req);
  return {
    sandboxId,
    port,
    path: query === undefined ? rest : `${rest}?${query}`,
    cookiePath,
    ...(queryToken === undefined ? {} : { queryToken }),
    ...(token === undefined ? {} : { token }),
  };
}

/** A raw query without the token's parameter (the others byte for byte), and the token. */
function withoutToken(rawQuery: string | undefined): { queryToken?: string; query?: string } {
  if (rawQuery === undefined) return {};
  let queryToken: string | undefined;
  const kept = rawQuery.split('&').filter((pair) => {
    if (!pair.startsWith(`${PREVIEW_TOKEN_PARAM}=`)) return true;
    queryToken = decodeURIComponent(pair.slice(PREVIEW_TOKEN_PARAM.length + 1));
    return false;
  });
  const query = kept.join('&');
  return {
    ...(queryToken === undefined ? {} : { queryToken }),
    // A query that held only the token leaves none; an empty one sent as such stays.
    ...(query === '' && queryToken !== undefined ? {} : { query }),
  };
}

/** The preview cookie's value, if the request carries it. */
function cookieToken(req: IncomingMessage): string | undefined {
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = pair.trim().split('=', 2);
    if (name === PREVIEW_COOKIE && value !== undefined) return value;
  }
  return undefined;
}

/** The request's `Cookie` header without the preview's cookie (undefined when nothing is left). */
export function cookiesWithoutPreview(header: string | undefined): string | undefined {
  const kept = (header ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '' && pair.split('=', 1)[0] !== PREVIEW_COOKIE);
  return kept.length === 0 ? undefined : kept.join('; ');
}
