/** The SDK's client for the control plane: JSON calls with the sandbox token, errors as SDK exceptions. */
import type { Observable } from 'rxjs';
import { request } from 'undici';
import type { z } from 'zod';
import { SandboxError } from '../rules/errors.js';
import {
  inspectionRecordSchema,
  sandboxEventSchema,
  type InspectionFeedRecord,
  type SandboxEvent,
} from '../protocol/control-plane-api.js';
import { readAnswer } from './json-answer.js';
import { resumableFeed } from '../protocol/resumable-feed.js';
import { ndjsonFeed } from './ndjson-feed.js';

/** Where the control plane is: `controlPlaneUrl`, else `SDK_CONTROL_PLANE_URL`, else the local default. */
export function controlPlaneUrl(explicit?: string): string {
  return explicit ?? process.env.SDK_CONTROL_PLANE_URL ?? 'http://127.0.0.1:4780';
}

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
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
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
    const parse = (value: unknown): SandboxEvent | undefined => sandboxEventSchema.safeParse(value).data;
    return resumableFeed(
      (after) =>
        ndjsonFeed(
          `${this.url}${path}${after === undefined ? '' : `?after=${String(after)}`}`,
          options.token,
          parse,
        ),
      (event) => event.seq,
      { after: options.after },
    );
  }

  /**
   * The inspection feed (`GET /v1/inspect`, operator key): every actor transition with its cursor, after
   * `after` when given; a broken stream is opened again after the last cursor seen.
   */
  inspections(options: {
    readonly token?: string | undefined;
    readonly after?: number;
  }): Observable<InspectionFeedRecord> {
    const parse = (value: unknown): InspectionFeedRecord | undefined =>
      inspectionRecordSchema.safeParse(value).data;
    return resumableFeed(
      (after) =>
        ndjsonFeed(
          `${this.url}/v1/inspect${after === undefined ? '' : `?after=${String(after)}`}`,
          options.token,
          parse,
        ),
      (record) => record.cursor,
      { after: options.after },
    );
  }
}
