/**
 * The control plane's API as the page calls it: same origin, absolute `/v1/...` paths, the operator key
 * in `Authorization` on every call (never in a URL). Errors arrive as `{ code, message }` envelopes; a
 * 401 means the key was refused, which sends the page back to the sign-in.
 */

/** An answer that was not a success: the envelope's code and message, or what the page could tell. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Only ids of this shape reach a URL (and `encodeURIComponent` on top). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** `/v1/sandboxes/<id>` from an id checked against `ID_PATTERN`. */
export function sandboxPath(sandboxId: string, rest = ''): string {
  if (!ID_PATTERN.test(sandboxId)) throw new ApiError(0, 'invalid_id', 'not a sandbox id');
  return `/v1/sandboxes/${encodeURIComponent(sandboxId)}${rest}`;
}

/**
 * A snapshot id, `snap_` and 16 hex digits: the control plane's `SNAPSHOT_ID` (`rules/names.ts`, a value
 * the page may not import), stricter than `ID_PATTERN`.
 */
export const SNAPSHOT_ID_PATTERN = /^snap_[0-9a-f]{16}$/;

/** `/v1/snapshots/<id>` from an id checked against `SNAPSHOT_ID_PATTERN`. */
export function snapshotPath(snapshotId: string): string {
  if (!SNAPSHOT_ID_PATTERN.test(snapshotId)) throw new ApiError(0, 'invalid_id', 'not a snapshot id');
  return `/v1/snapshots/${encodeURIComponent(snapshotId)}`;
}

/** `/v1/sandboxes/<id>/agent/executions/<eid>` from checked ids. */
export function executionPath(sandboxId: string, executionId: string, rest = ''): string {
  if (!ID_PATTERN.test(executionId)) throw new ApiError(0, 'invalid_id', 'not an execution id');
  return sandboxPath(sandboxId, `/agent/executions/${encodeURIComponent(executionId)}${rest}`);
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { code?: unknown; message?: unknown };
    if (typeof body.code === 'string' && typeof body.message === 'string') {
      return new ApiError(response.status, body.code, body.message);
    }
  } catch {
    // not an envelope: say what the status says
  }
  return new ApiError(response.status, `http_${response.status}`, response.statusText || 'request failed');
}

/** A call's method, JSON body (sent as `application/json`) and abort signal. */
export interface CallInit {
  readonly method?: string;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

/** Calls the API with one operator key. */
export class Api {
  readonly #key: string;
  readonly #onUnauthorized: () => void;

  /** `onUnauthorized` runs once a call is answered 401 (the key was revoked or mistyped). */
  constructor(key: string, onUnauthorized: () => void) {
    this.#key = key;
    this.#onUnauthorized = onUnauthorized;
  }

  /** A request; resolves with the response when it is a success, else rejects with an `ApiError`. */
  async request(path: string, init: CallInit = {}): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#key}`,
      accept: 'application/json, application/x-ndjson',
    };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
      ...(init.signal === undefined ? {} : { signal: init.signal }),
    });
    if (response.ok) return response;
    const error = await errorOf(response);
    if (response.status === 401) this.#onUnauthorized();
    throw error;
  }

  /** A JSON answer. The control plane's schemas are the contract; the page trusts its own origin. */
  async json<T>(path: string, init: CallInit = {}): Promise<T> {
    const response = await this.request(path, init);
    const text = await response.text();
    return (text === '' ? {} : JSON.parse(text)) as T;
  }
}
