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
  async request(path: string, init: { method?: string; signal?: AbortSignal } = {}): Promise<Response> {
    const response = await fetch(path, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${this.#key}`, accept: 'application/json, application/x-ndjson' },
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
  async json<T>(path: string, init: { method?: string; signal?: AbortSignal } = {}): Promise<T> {
    const response = await this.request(path, init);
    const text = await response.text();
    return (text === '' ? {} : JSON.parse(text)) as T;
  }
}
