/**
 * The preview URLs' reverse proxy (issue 28): a request admitted by `Previews` goes to the sandbox's
 * `127.0.0.1:<port>` over a tunnel through its sandboxd (`daemon-tunnel.ts`), streamed both ways with
 * backpressure (server-sent events pass as they come), WebSocket and other upgrades spliced after the
 * port's `101`. A link's token becomes an HTTP-only cookie scoped to that sandbox and port on a
 * browser's navigation (303 to the same URL without it), so the page, its iframes and its WebSockets
 * carry it; sandbox code never sees the token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { upgrade, type Agent, type Dispatcher } from 'undici';
import { PREVIEW_COOKIE, PREVIEW_TOKEN_HEADER } from '../protocol/preview-wire.js';
import { SandboxError } from '../rules/errors.js';
import { tunnelOrigin } from './daemon-tunnel.js';
import { HOP_HEADERS, withoutHopHeaders } from './hop-headers.js';
import { cookiesWithoutPreview, type PreviewRequest } from './preview-target.js';
import type { Previews } from './previews.js';

/** Headers never forwarded: one hop's, and the preview's own credential. */
const NOT_FORWARDED: ReadonlySet<string> = new Set([...HOP_HEADERS, 'cookie', PREVIEW_TOKEN_HEADER]);

/** How long a request that resumed its sandbox waits for the port to take connections again. */
const AFTER_RESUME_MS = 10_000;

/** The headers sandbox code's server gets: the client's, less one hop's and the token. */
function forwardedHeaders(req: IncomingMessage, preview: PreviewRequest): Record<string, string | string[]> {
  const headers = withoutHopHeaders(req.headers, NOT_FORWARDED);
  const cookie = cookiesWithoutPreview(req.headers.cookie);
  if (cookie !== undefined) headers['cookie'] = cookie;
  // A dev server allows its own loopback name (Vite refuses other hosts): the public one goes aside.
  headers['host'] = `localhost:${String(preview.port)}`;
  headers['x-forwarded-host'] = req.headers.host ?? '';
  headers['x-forwarded-proto'] = 'http';
  if (preview.cookiePath !== '/') headers['x-forwarded-prefix'] = preview.cookiePath.slice(0, -1);
  return headers;
}

/**
 * True for a browser's navigation to a page or a frame (where a cookie can be set and followed): its
 * `Sec-Fetch-Mode`, or, from a browser that sends none (to a plain-http origin other than loopback),
 * an `Accept` that asks for HTML first. A program that accepts anything gets the answer itself.
 */
function isNavigation(req: IncomingMessage): boolean {
  if (req.method !== 'GET') return false;
  const mode = req.headers['sec-fetch-mode'];
  return mode === undefined ? (req.headers.accept ?? '').startsWith('text/html') : mode === 'navigate';
}

/** The cookie a preview's token becomes. */
function previewCookie(preview: PreviewRequest, token: string): string {
  return `${PREVIEW_COOKIE}=${token}; Path=${preview.cookiePath}; HttpOnly; SameSite=Lax`;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Forwards previews for a control plane. */
export class PreviewProxy {
  readonly #previews: Previews;
  readonly #agent: Agent;

  constructor(previews: Previews, agent: Agent) {
    this.#previews = previews;
    this.#agent = agent;
  }

  /**
   * Answers one HTTP request for a preview. Refusals (unknown, ended, token, suspended, closed port)
   * throw before anything is written, for the caller's error answer.
   */
  async request(req: IncomingMessage, res: ServerResponse, preview: PreviewRequest): Promise<void> {
    const resumed = await this.#admit(preview);
    if (preview.queryToken !== undefined && isNavigation(req)) {
      res.writeHead(303, {
        location: preview.cookiePath === '/' ? preview.path : `${preview.cookiePath}${preview.path.slice(1)}`,
        'set-cookie': previewCookie(preview, preview.queryToken),
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    const options: Dispatcher.RequestOptions = {
      origin: tunnelOrigin(preview.sandboxId, preview.port),
      path: preview.path,
      method: req.method as Dispatcher.HttpMethod,
      headers: forwardedHeaders(req, preview),
      body: hasBody ? req : null,
      signal: abort.signal,
      headersTimeout: 0,
      bodyTimeout: 0,
    };
    await this.#retryingAfterResume(resumed, () =>
      this.#agent.stream(options, ({ statusCode, headers }) => {
        res.writeHead(statusCode, withoutHopHeaders(headers, NOT_FORWARDED));
        res.flushHeaders(); // a stream's head goes out before its first event
        return res;
      }),
    );
  }

  /** Answers an upgrade (a WebSocket) for a preview: the port's 101, then bytes both ways. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, preview: PreviewRequest): Promise<void> {
    const resumed = await this.#admit(preview);
    const upgraded = await this.#retryingAfterResume(resumed, () =>
      upgrade(`${tunnelOrigin(preview.sandboxId, preview.port)}${preview.path}`, {
        dispatcher: this.#agent,
        method: req.method ?? 'GET',
        headers: forwardedHeaders(req, preview), // undici writes `connection` and `upgrade` itself
        protocol: req.headers.upgrade ?? 'websocket',
      }),
    );
    const lines = ['HTTP/1.1 101 Switching Protocols'];
    for (const [name, value] of Object.entries(upgraded.headers)) {
      for (const one of Array.isArray(value) ? value : [value])
        if (one !== undefined) lines.push(`${name}: ${one}`);
    }
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    const upstream = upgraded.socket;
    if (head.length > 0) upstream.write(head);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => socket.destroy());
    socket.pipe(upstream);
    upstream.pipe(socket);
  }

  /** Admits the request; true when it resumed the sandbox. */
  async #admit(preview: PreviewRequest): Promise<boolean> {
    return await this.#previews.open(preview.sandboxId, preview.port, preview.token);
  }

  /**
   * Runs `attempt`; after a resume, a port not taking connections yet (a server whose process was just
   * thawed) is tried again until it does or `AFTER_RESUME_MS` passed: the request is held, not dropped.
   */
  async #retryingAfterResume<T>(resumed: boolean, attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + AFTER_RESUME_MS;
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        const closed = error instanceof SandboxError && error.code === 'port_closed';
        if (!resumed || !closed || Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }
}
