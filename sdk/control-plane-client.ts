/** The SDK's client for the control plane: JSON calls with the sandbox token, errors as SDK exceptions. */
import { Observable } from 'rxjs';
import { request } from 'undici';
import type { z } from 'zod';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { SandboxError, SdkError } from '../rules/errors.js';
import { sandboxEventSchema, type SandboxEvent } from '../protocol/control-plane-api.js';
import { readAnswer } from './json-answer.js';
import { ndjsonValues } from '../protocol/ndjson.js';

/** Where the control plane is: `controlPlaneUrl`, else `SDK_CONTROL_PLANE_URL`, else the local default. */
export function controlPlaneUrl(explicit?: string): string {
  return explicit ?? process.env.SDK_CONTROL_PLANE_URL ?? 'http://127.0.0.1:4780';
}

/** Times an event stream is opened again after it broke, in a row. */
const RECONNECTS = 5;

/** The operator key the SDK presents for create, list and the all-sandbox feed. */
export function operatorKey(): string | undefined {
  const key = process.env.SDK_API_KEY;
  return key === undefined || key === '' ? undefined : key;
}

/** Calls one control plane. */
export class ControlPlaneClient {
  constructor(
    readonly url: string,
    readonly requestTimeoutMs = 120_000,
  ) {}

  /** A JSON call; `token` (the sandbox access token) goes in the Authorization header only. */
  async call<T extends z.ZodType>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    schema: T,
    options: { body?: unknown; token?: string | undefined } = {},
  ): Promise<z.output<T>> {
    let res;
    try {
      res = await request(`${this.url}${path}`, {
        method,
        headersTimeout: this.requestTimeoutMs,
        bodyTimeout: this.requestTimeoutMs,
        body: options.body === undefined ? null : JSON.stringify(options.body),
        headers: {
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        },
      });
    } catch {
      throw new SandboxError(`the control plane at ${this.url} did not answer ${method} ${path}`);
    }
    return readAnswer(res, schema, `the control plane to ${method} ${path}`);
  }

  /**
   * State changes with sequence numbers: one sandbox's (`GET /v1/sandboxes/:id/events`, with its token) or
   * every sandbox's (`GET /v1/events`, with the operator key). A stream that breaks is opened again after
   * the last event seen, so a reconnect misses nothing; one sandbox's stream completes after `ended`.
   */
  events(options: {
    readonly sandboxId?: string;
    readonly token?: string | undefined;
    /** Start after this sequence number (else at the current state). */
    readonly after?: number;
  }): Observable<SandboxEvent> {
    const path = options.sandboxId === undefined ? '/v1/events' : `/v1/sandboxes/${options.sandboxId}/events`;
    const token = options.token;
    return new Observable<SandboxEvent>((subscriber) => {
      const abort = new AbortController();
      let after = options.after;
      const run = async (): Promise<void> => {
        for (let attempt = 0; ; attempt++) {
          try {
            const query = after === undefined ? '' : `?after=${String(after)}`;
            const res = await request(`${this.url}${path}${query}`, {
              signal: abort.signal,
              bodyTimeout: 0,
              headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
            });
            if (res.statusCode >= 400) throw errorFromEnvelope(await res.body.json().catch(() => undefined));
            for await (const value of ndjsonValues(res.body)) {
              const parsed = sandboxEventSchema.safeParse(value);
              if (!parsed.success) continue;
              after = parsed.data.seq;
              subscriber.next(parsed.data);
              attempt = 0;
            }
            if (options.sandboxId !== undefined) return; // the server ended it after `ended`
          } catch (error) {
            if (abort.signal.aborted || error instanceof SdkError || attempt >= RECONNECTS) throw error;
          }
          await sleep(100 * 2 ** attempt, undefined, { signal: abort.signal });
        }
      };
      run().then(
        () => subscriber.complete(),
        (error: unknown) => {
          if (abort.signal.aborted) return;
          subscriber.error(
            error instanceof SdkError ? error : new SandboxError('the control plane event stream broke'),
          );
        },
      );
      return () => abort.abort();
    });
  }
}
