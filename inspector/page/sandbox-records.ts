/**
 * sandboxd's records for one sandbox (`GET /v1/sandboxes/:id/records`, all held then live): calls,
 * gateway requests and responses, processes, routes, hosted actors' transitions. Audit facts only:
 * never a header value, a body or command output.
 */
import type { DaemonEvent } from '../../protocol/daemon-events.js';
import { sandboxPath, type Api, type ApiError } from './api.js';
import { follow, type Followed } from './ndjson.js';

/** One record as the control plane relays it, with its cursor. */
export type SandboxRecord = DaemonEvent & { readonly cursor: number; readonly sandboxId: string };

function isSandboxRecord(value: unknown): value is SandboxRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<SandboxRecord>;
  return (
    typeof record.cursor === 'number' && typeof record.type === 'string' && typeof record.at === 'number'
  );
}

/** Follows one sandbox's records. */
export function followSandboxRecords(
  api: Api,
  sandboxId: string,
  onRecord: (record: SandboxRecord) => void,
  onFatal: (error: ApiError) => void,
): Followed {
  return follow(api, {
    path: (cursor) =>
      sandboxPath(sandboxId, cursor === null ? '/records' : `/records?after=${String(cursor)}`),
    parse: (value) => (isSandboxRecord(value) ? value : null),
    cursorOf: (record) => record.cursor,
    onLine: onRecord,
    onFatal,
  });
}
