/**
 * A sandbox's gateway routes (port, state, last error class) and the live log of the requests they
 * answered: time, route, method, path, status, latency, bytes. Never a header value or a body: the
 * records do not carry them.
 */
import type { InspectorSandbox } from '../../protocol/inspector-api.js';
import { fill, h, logTable } from './dom.js';
import { bytes, clockTime, truncate } from './format.js';
import { toneOf } from './machine-graph.js';
import type { SandboxRecord } from './sandbox-records.js';

type RouteSummary = InspectorSandbox['routes'][number];

/** Request log rows kept (newest first). */
const MAX_REQUESTS = 500;

/** The routes table. */
export class RoutesPanel {
  readonly element: HTMLElement;
  readonly #body = h('tbody', { 'data-testid': 'routes' });
  readonly #empty = h('p', { class: 'muted small' }, 'No gateway routes.');
  /** What sandboxd's route records said last, by route. */
  readonly #heard = new Map<string, { port?: number; errorClass?: string; event: string }>();
  #summaries: readonly RouteSummary[] = [];
  /** Route actors' states from the inspection feed, by route. */
  #liveStates = new Map<string, string>();

  constructor() {
    this.element = h(
      'div',
      {},
      logTable(['route', 'state', 'port', 'last error class'], this.#body),
      this.#empty,
    );
  }

  /** The control plane's view of the routes. */
  setSummaries(routes: readonly RouteSummary[]): void {
    this.#summaries = routes;
    this.#draw();
  }

  /** The route actors' latest states from the feed (`<sandboxId>/<route>` → state). */
  setLiveStates(states: ReadonlyMap<string, string>): void {
    this.#liveStates = new Map(states);
    this.#draw();
  }

  /** A `route` record from sandboxd. */
  heard(record: SandboxRecord): void {
    if (record.type !== 'route') return;
    const before = this.#heard.get(record.route);
    this.#heard.set(record.route, {
      event: record.event,
      ...(record.port === undefined
        ? before?.port === undefined
          ? {}
          : { port: before.port }
        : { port: record.port }),
      ...(record.errorClass === undefined ? {} : { errorClass: record.errorClass }),
    });
    this.#draw();
  }

  #draw(): void {
    const names = new Set([
      ...this.#summaries.map((route) => route.name),
      ...this.#heard.keys(),
      ...this.#liveStates.keys(),
    ]);
    const rows = [...names].sort().map((name) => {
      const summary = this.#summaries.find((route) => route.name === name);
      const heard = this.#heard.get(name);
      const state = this.#liveStates.get(name) ?? summary?.state ?? heard?.event ?? 'unknown';
      const port = summary?.port ?? heard?.port ?? null;
      const errorClass = summary?.lastErrorClass ?? heard?.errorClass ?? null;
      return h(
        'tr',
        { 'data-route': name, 'data-state': state },
        h('td', { class: 'mono' }, name),
        h('td', {}, h('span', { class: `badge tone-${toneOf(state)}` }, state)),
        h('td', { class: 'num' }, port === null ? '—' : String(port)),
        h('td', { class: errorClass === null ? 'muted' : 'error-text' }, errorClass ?? '—'),
      );
    });
    fill(this.#body, ...rows);
    this.#empty.hidden = rows.length > 0;
  }
}

/** The live request log. */
export class RequestLog {
  readonly element: HTMLElement;
  readonly #body = h('tbody', { 'data-testid': 'request-log' });
  readonly #empty = h('p', { class: 'muted small' }, 'No requests through the gateway yet.');

  constructor() {
    this.element = h(
      'div',
      {},
      logTable(['time', 'route', 'method', 'path', 'status', 'latency', 'bytes'], this.#body, true),
      this.#empty,
    );
  }

  /** A `gateway_response` record: one row on top. */
  add(record: SandboxRecord): void {
    if (record.type !== 'gateway_response') return;
    const tone = record.status >= 500 ? 'bad' : record.status >= 400 ? 'warn' : 'good';
    const row = h(
      'tr',
      { 'data-route': record.route, 'data-status': record.status },
      h('td', { class: 'mono' }, clockTime(record.at)),
      h('td', { class: 'mono' }, record.route),
      h('td', { class: 'mono' }, record.method),
      h('td', { class: 'mono path', title: record.path }, truncate(record.path, 160)),
      h('td', { class: 'num' }, h('span', { class: `badge tone-${tone}` }, String(record.status))),
      h('td', { class: 'num' }, `${record.latencyMs.toFixed(record.latencyMs < 10 ? 1 : 0)} ms`),
      h('td', { class: 'num' }, bytes(record.bytes)),
    );
    this.#body.prepend(row);
    while (this.#body.rows.length > MAX_REQUESTS) this.#body.lastElementChild?.remove();
    this.#empty.hidden = true;
  }
}
