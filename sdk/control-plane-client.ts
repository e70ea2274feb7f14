/** The SDK's client for the control plane: JSON calls with the sandbox token, errors as SDK exceptions. */
import { Observable } from 'rxjs';
import { request } from 'undici';
import type { z } from 'zod';
import { SandboxError } from '../spec/errors.js';
import { sandboxEventSchema, type SandboxEvent } from '../control-plane/api-schemas.js';
import { readAnswer } from './json-answer.js';
import { ndjsonValues } from './ndjson.js';

/** Where the control plane is: `controlPlaneUrl`, else `SDK_CONTROL_PLANE_URL`, else the local default. */
export function controlPlaneUrl(explicit?: string): string {
  return explicit ?? process.env.SDK_CONTROL_PLANE_URL ?? 'http://127.0.0.1:4780';
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
    options: { body?: unknown; token?: string } = {},
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

  /** State changes of every sandbox, from `GET /v1/events`. */
  events(): Observable<SandboxEvent> {
    return new Observable<SandboxEvent>((subscriber) => {
      const abort = new AbortController();
      const run = async (): Promise<void> => {
        const res = await request(`${this.url}/v1/events`, { signal: abort.signal, bodyTimeout: 0 });
        for await (const value of ndjsonValues(res.body)) {
          const parsed = sandboxEventSchema.safeParse(value);
          if (parsed.success) subscriber.next(parsed.data);
        }
        subscriber.complete();
      };
      run().catch(() => {
        if (!abort.signal.aborted) subscriber.error(new SandboxError('the control plane event stream broke'));
      });
      return () => abort.abort();
    });
  }
}
