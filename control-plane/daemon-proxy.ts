/**
 * The SDKs' way to a sandbox's sandboxd (issue 29): `/v1/sandboxes/<id>/daemon/<sandboxd path>` on the
 * control plane, forwarded to that sandbox's sandboxd with the caller's own credential, streamed both ways
 * with backpressure (a command's output, an agent's events and a file pass as they come). The one place
 * where a caller's request meets a suspended sandbox: with auto-resume it is resumed and the request held
 * until sandboxd answers, so no SDK call precedes a daemon call to ask for it. A running sandbox's
 * request journals nothing here: sandboxd reports its traffic on its event stream, which the idle policy
 * follows. The create and connect answers name this path as the sandbox's `daemonUrl`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, type Dispatcher } from 'undici';
import { SandboxError } from '../rules/errors.js';
import { withoutHopHeaders } from './hop-headers.js';

/** The sandboxd path this proxy answers for, `/v1/sandboxes/<id>/daemon/<rest>`. */
const DAEMON_PATH = /^\/v1\/sandboxes\/([^/]+)\/daemon(\/.*)$/;

/** A request for a sandbox's sandboxd: whose, and the path (with its query) sandboxd gets. */
export interface DaemonRequest {
  readonly sandboxId: string;
  readonly path: string;
}

/** The sandboxd request `url` names (a path of the control plane's own), or undefined. */
export function daemonRequestOf(url: string | undefined): DaemonRequest | undefined {
  const target = new URL(url ?? '/', 'http://control-plane');
  const match = DAEMON_PATH.exec(target.pathname);
  if (match === null) return undefined;
  return { sandboxId: decodeURIComponent(match[1] ?? ''), path: `${match[2] ?? '/'}${target.search}` };
}

/** The path of a sandbox's sandboxd on a control plane at `origin`. */
export function daemonPathOf(origin: string, sandboxId: string): string {
  return `${origin}/v1/sandboxes/${sandboxId}/daemon`;
}

/** What the proxy needs of its control plane. */
export interface DaemonProxyHost {
  /**
   * The sandboxd URL of a sandbox the bearer may use, running: a suspended one with auto-resume is
   * resumed first.
   *
   * @throws AuthenticationError; SandboxError `sandbox_not_found`, `sandbox_ended`, `sandbox_suspended`
   */
  reach(sandboxId: string, bearer: string | undefined, use: DaemonUse): Promise<string>;
}

/**
 * What a call does to its sandbox: `use` resumes a suspended one with auto-resume; `read` (sandboxd's
 * own event feed: watching is not using) never resumes it and is held until something else does, as a
 * read of a frozen sandboxd always was.
 */
export interface DaemonUse {
  readonly passive: boolean;
  /** Aborted when the caller went away. */
  readonly signal: AbortSignal;
}

/** sandboxd's event feed, `GET /v1/events`: read without resuming. */
function isPassive(method: string | undefined, path: string): boolean {
  return method === 'GET' && path.split('?')[0] === '/v1/events';
}

/** Forwards the SDKs' sandboxd calls for a control plane. */
export class DaemonProxy {
  readonly #host: DaemonProxyHost;
  readonly #agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000 });

  constructor(host: DaemonProxyHost) {
    this.#host = host;
  }

  /**
   * Answers one request for a sandbox's sandboxd. Refusals (credential, ended, suspended without
   * auto-resume, a sandboxd that does not answer) throw before anything is written.
   */
  async request(req: IncomingMessage, res: ServerResponse, target: DaemonRequest): Promise<void> {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const url = await this.#host.reach(target.sandboxId, bearer, {
      passive: isPassive(req.method, target.path),
      signal: abort.signal,
    });
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    const options: Dispatcher.RequestOptions = {
      origin: url,
      path: target.path,
      method: req.method as Dispatcher.HttpMethod,
      headers: withoutHopHeaders(req.headers),
      body: hasBody ? req : null,
      signal: abort.signal,
      // The SDK bounds its own calls; a stream of events or output may be quiet for long.
      headersTimeout: 0,
      bodyTimeout: 0,
    };
    let answer: Dispatcher.ResponseData;
    try {
      answer = await this.#agent.request(options);
    } catch {
      throw new SandboxError(`the sandbox daemon did not answer ${req.method ?? 'GET'} ${target.path}`);
    }
    // Trailers are sandboxd's word on how a stream ended (a home archive's exit status): announced in
    // the head, sent after the body.
    const head = withoutHopHeaders(answer.headers);
    if (answer.headers['trailer'] !== undefined) head['trailer'] = answer.headers['trailer'];
    res.writeHead(answer.statusCode, head);
    res.flushHeaders(); // a stream's head goes out before its first line
    await pipeline(answer.body, res, { end: false });
    res.addTrailers(
      Object.fromEntries(
        Object.entries(answer.trailers).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      ),
    );
    res.end();
  }

  /** Closes the connections to every sandboxd. */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}
