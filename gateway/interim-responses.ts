/**
 * Upstream `100 Continue` responses are dropped before undici reads them; the final response and its
 * body reach the client unchanged (SPEC step 6) and no 1xx is relayed (DESIGN.md §5).
 *
 * Why here: undici 7.30.2 destroys the connection on any 100 (`lib/dispatcher/client-h1.js`,
 * `Parser.onHeadersComplete`: `statusCode === 100` → `SocketError('bad response')`), because it never
 * sends `Expect` (it refuses an `expect` header, and the gateway strips the client's). RFC 9110 §15.2
 * lets a server send 1xx unasked, so a good upstream answer became a 502; no undici option changes that.
 * Other 1xx (102, 103, ...) undici skips by itself, restarting its header timer on each as a 102
 * Processing intends, so they pass (the exchange ignores them).
 *
 * How: the connector hands undici its socket with `read` filtered (undici's parser pulls every byte with
 * `socket.read()` on `'readable'`). Only at the start of a response does the filter look at the bytes:
 * it walks the complete, well-formed `HTTP/1.x 1xx` heads there (never 101, a protocol switch) and
 * removes those with status 100; at the first byte that cannot start one, every byte passes untouched
 * until the next request. A request starts a response: undici publishes `undici:client:sendHeaders`
 * (public diagnostics channel) for a socket just before writing a request on it, and with one request at
 * a time per connection (`pipelining: 1`) the previous response has been read to its end by then.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';

/** Longest interim head kept while waiting for its end (undici's own header limit, 16 KiB). */
const MAX_HEAD_BYTES = 16 * 1024;

/** `HTTP/1.x 1` as bytes, then two digits and a space or CR; `.` marks the version digit. */
const STATUS_PREFIX = Buffer.from('HTTP/1.. 1', 'latin1');
const CR = 13;
const LF = 10;
const ZERO = 48;

/**
 * The length of the complete interim head `data` opens with, `0` when more bytes are needed to tell, or
 * `-1` when `data` does not open with one (or opens with one undici should judge itself: 101, bare LF
 * or CR, NUL, or more than 16 KiB).
 */
export function interimHeadLength(data: Buffer): number {
  for (let i = 0; i < STATUS_PREFIX.length; i++) {
    if (i >= data.length) return 0;
    const byte = data[i] ?? 0;
    if (i === 7 ? byte !== ZERO && byte !== ZERO + 1 : byte !== STATUS_PREFIX[i]) return -1;
  }
  for (let i = 10; i < 12; i++) {
    if (i >= data.length) return 0;
    const byte = data[i] ?? 0;
    if (byte < ZERO || byte > ZERO + 9) return -1;
  }
  if (data.length < 13) return 0;
  if (data[12] !== 32 && data[12] !== CR) return -1;
  if (data[10] === ZERO && data[11] === ZERO + 1) return -1; // 101 Switching Protocols
  for (let i = 12; i < data.length; i++) {
    const byte = data[i];
    if (byte === 0) return -1;
    if (byte === LF) return -1; // a bare LF: one after a CR is stepped over below
    if (byte !== CR) continue;
    if (i + 1 >= data.length) break;
    if (data[i + 1] !== LF) return -1;
    if (i + 3 < data.length && data[i + 2] === CR && data[i + 3] === LF) return i + 4;
    if (i + 2 < data.length && data[i + 2] === LF) return -1;
    i += 1;
  }
  return data.length > MAX_HEAD_BYTES ? -1 : 0;
}

/** True when the interim head `data` opens with has status 100. */
function isContinue(data: Buffer): boolean {
  return data[9] === ZERO + 1 && data[10] === ZERO && data[11] === ZERO;
}

/** Per connection: removes `100 Continue` heads among the interim heads at the start of each response. */
export class InterimResponseFilter {
  #atResponseStart = true;
  #held: Buffer | undefined;

  /** A request is being written: the next bytes read start its response. */
  responseStarts(): void {
    this.#atResponseStart = true;
  }

  /** What the reader gets instead of `chunk`: null while all of it so far was a 100 or part of a head. */
  filter(chunk: Buffer | null): Buffer | null {
    if (!this.#atResponseStart) return chunk;
    if (chunk === null || chunk.length === 0) return chunk;
    let data = this.#held === undefined ? chunk : Buffer.concat([this.#held, chunk]);
    this.#held = undefined;
    const kept: Buffer[] = [];
    while (data.length > 0) {
      const length = interimHeadLength(data);
      if (length < 0) {
        this.#atResponseStart = false;
        kept.push(data);
        break;
      }
      if (length === 0) {
        this.#held = data; // a head not complete yet: it waits for the next read
        break;
      }
      if (!isContinue(data)) kept.push(data.subarray(0, length));
      data = data.subarray(length);
    }
    if (kept.length <= 1) return kept[0] ?? null;
    return Buffer.concat(kept);
  }
}

const filters = new WeakMap<object, InterimResponseFilter>();
let subscribed = false;

function onSendHeaders(message: unknown): void {
  const socket = (message as { socket?: unknown } | null)?.socket;
  if (typeof socket === 'object' && socket !== null) filters.get(socket)?.responseStarts();
}

/** Filters what undici reads from `socket` (see the module comment). */
export function dropContinueResponses(socket: Socket): void {
  if (!subscribed) {
    subscribe('undici:client:sendHeaders', onSendHeaders);
    subscribed = true;
  }
  const filter = new InterimResponseFilter();
  filters.set(socket, filter);
  const read = socket.read.bind(socket);
  socket.read = (size?: number): Buffer | null => filter.filter(read(size) as Buffer | null);
}

/**
 * Wraps a connector so every socket it hands undici drops upstream `100 Continue` responses.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: withoutContinueResponses(safeConnector({ connectTimeoutMs: 10_000 })) });
 * ```
 */
export function withoutContinueResponses(connector: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    connector(options, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      dropContinueResponses(socket);
      callback(null, socket);
    });
  };
}
