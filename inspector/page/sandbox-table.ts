/**
 * The sandbox table: every live sandbox and the most recently ended ones, with their countdowns ticking
 * every second, memory, egress, gateway routes and running agent execution; filterable by any of them.
 * Rows are kept and updated in place, so a click is never lost to a redraw.
 */
import type { InspectorSandbox } from '../../protocol/inspector-api.js';
import { fill, h } from './dom.js';
import { egressChip, egressWords } from './egress-log.js';
import type { InspectionFeed } from './feed.js';
import { bytes, bytesOf, duration } from './format.js';
import { miniBar } from './gauge.js';
import { toneOf } from './machine-graph.js';
import { navigate } from './router.js';
import type { SandboxesSnapshot, SandboxesSource } from './sandboxes.js';
import type { StatusLine } from './status.js';
import { compactTimeline } from './timeline.js';
import type { View } from './view.js';

/** The words a row matches in the filter. */
function searchable(sandbox: InspectorSandbox): string {
  return [
    sandbox.sandboxId,
    sandbox.template,
    sandbox.isolation,
    sandbox.state,
    sandbox.suspendReason ?? '',
    sandbox.endReason ?? '',
    egressWords(sandbox.egress),
    ...sandbox.routes.flatMap((route) => [route.name, route.state, route.lastErrorClass ?? '']),
    sandbox.execution === null ? '' : `agent ${sandbox.execution.executionId} ${sandbox.execution.state}`,
  ]
    .join(' ')
    .toLowerCase();
}

/** The state a sandbox reads as: an ended sandbox whose daemon died reads `failed`. */
export function stateLabel(sandbox: InspectorSandbox): { text: string; tone: string } {
  if (sandbox.state === 'ended') {
    const reason = sandbox.endReason ?? '';
    return {
      text: reason === '' ? 'ended' : `ended · ${reason}`,
      tone: reason === 'failed' ? 'bad' : 'done',
    };
  }
  if (sandbox.state === 'suspended') {
    const reason = sandbox.suspendReason ?? '';
    return { text: reason === '' ? 'suspended' : `suspended · ${reason}`, tone: 'warn' };
  }
  return { text: sandbox.state, tone: toneOf(sandbox.state) };
}

/** Countdowns and ages of a sandbox at `now`. */
export function clocksOf(
  sandbox: InspectorSandbox,
  now: number,
): { age: string; idle: string; left: string; idleUrgent: boolean; leftUrgent: boolean } {
  const ended = sandbox.state === 'ended';
  const idleMs = sandbox.lastActivityAt + sandbox.maxIdleMs - now;
  const leftMs = sandbox.deadlineAt - now;
  return {
    age: duration(now - sandbox.createdAt),
    idle: sandbox.state === 'running' ? duration(idleMs) : '—',
    left: ended ? '—' : duration(leftMs),
    idleUrgent: sandbox.state === 'running' && idleMs < 60_000,
    leftUrgent: !ended && leftMs < 10 * 60_000,
  };
}

/** A memory gauge: used of limit, as a meter and text. */
export function memoryCell(sandbox: InspectorSandbox): HTMLElement {
  if (sandbox.memoryBytes === null) return h('span', { class: 'muted' }, '—');
  const limit = sandbox.memoryLimitBytes;
  return h(
    'span',
    { class: 'memory' },
    limit === null ? null : miniBar(sandbox.memoryBytes / limit),
    h(
      'span',
      { class: 'small' },
      limit === null ? bytes(sandbox.memoryBytes) : bytesOf(sandbox.memoryBytes, limit),
    ),
  );
}

/** Chips for the gateway routes of a sandbox. */
export function routeChips(sandbox: InspectorSandbox): HTMLElement {
  if (sandbox.routes.length === 0) return h('span', { class: 'muted' }, 'none');
  return h(
    'span',
    { class: 'chips' },
    ...sandbox.routes.map((route) =>
      h(
        'span',
        { class: `chip tone-${toneOf(route.state)}`, title: route.lastErrorClass ?? route.state },
        `${route.name} · ${route.state}`,
      ),
    ),
  );
}

class Row {
  readonly element: HTMLTableRowElement;
  readonly #state = h('td');
  readonly #timeline = h('td', { class: 'timeline-cell' });
  readonly #age = h('td', { class: 'num' });
  readonly #idle = h('td', { class: 'num' });
  readonly #left = h('td', { class: 'num' });
  readonly #memory = h('td');
  readonly #egress = h('td');
  readonly #routes = h('td');
  readonly #execution = h('td');
  #sandbox: InspectorSandbox;
  #searchable = '';
  #timelineKey = '';

  constructor(sandbox: InspectorSandbox) {
    this.#sandbox = sandbox;
    const open = h('button', { type: 'button', class: 'link mono' }, sandbox.sandboxId);
    this.element = h(
      'tr',
      { 'data-sandbox-id': sandbox.sandboxId, class: 'clickable' },
      h('td', {}, open),
      h('td', {}, sandbox.template),
      h('td', {}, sandbox.isolation),
      this.#state,
      this.#timeline,
      this.#age,
      this.#idle,
      this.#left,
      this.#memory,
      this.#egress,
      this.#routes,
      this.#execution,
    );
    this.element.addEventListener('click', () => {
      navigate({ view: 'sandbox', sandboxId: this.#sandbox.sandboxId });
    });
  }

  get sandbox(): InspectorSandbox {
    return this.#sandbox;
  }

  matches(filter: string): boolean {
    return filter === '' || filter.split(/\s+/).every((word) => this.#searchable.includes(word));
  }

  update(sandbox: InspectorSandbox, now: number, feed: InspectionFeed): void {
    this.#sandbox = sandbox;
    this.#searchable = searchable(sandbox);
    this.element.dataset.state = sandbox.state;
    const label = stateLabel(sandbox);
    fill(this.#state, h('span', { class: `badge tone-${label.tone}` }, label.text));
    fill(this.#memory, memoryCell(sandbox));
    fill(this.#egress, egressChip(sandbox.egress));
    fill(this.#routes, routeChips(sandbox));
    const execution = sandbox.execution;
    if (execution === null) {
      fill(this.#execution, h('span', { class: 'muted' }, '—'));
    } else {
      const go = h(
        'button',
        { type: 'button', class: 'link', title: execution.executionId },
        h('span', { class: `badge tone-${toneOf(execution.state)}` }, execution.state),
      );
      go.addEventListener('click', (event) => {
        event.stopPropagation();
        navigate({ view: 'execution', sandboxId: sandbox.sandboxId, executionId: execution.executionId });
      });
      fill(this.#execution, go);
    }
    this.tick(now, feed);
  }

  tick(now: number, feed: InspectionFeed): void {
    const clocks = clocksOf(this.#sandbox, now);
    this.#age.textContent = clocks.age;
    this.#idle.textContent = clocks.idle;
    this.#idle.classList.toggle('urgent', clocks.idleUrgent);
    this.#left.textContent = clocks.left;
    this.#left.classList.toggle('urgent', clocks.leftUrgent);
    const records = feed.records(this.#sandbox.sandboxId);
    const ended = this.#sandbox.state === 'ended';
    // An ended sandbox's band no longer moves: draw it again only when its records change.
    const key = `${String(records.length)}:${String(ended)}`;
    if (ended && key === this.#timelineKey) return;
    this.#timelineKey = key;
    const end = ended ? (records.at(-1)?.at ?? now) : now;
    fill(
      this.#timeline,
      compactTimeline(
        { label: this.#sandbox.sandboxId, changes: records },
        Math.min(this.#sandbox.createdAt, records[0]?.at ?? Infinity),
        end,
      ),
    );
  }
}

/** Orders live sandboxes first, newest first. */
const order = (a: InspectorSandbox, b: InspectorSandbox): number =>
  Number(a.state === 'ended') - Number(b.state === 'ended') || b.createdAt - a.createdAt;

/** The table view. */
export function sandboxTableView(
  root: HTMLElement,
  context: { source: SandboxesSource; feed: InspectionFeed; status: StatusLine },
): View {
  const rows = new Map<string, Row>();
  const body = h('tbody');
  const filter = h('input', {
    type: 'search',
    'data-testid': 'filter',
    placeholder: 'Filter: id, template, state, route, agent…',
    'aria-label': 'filter sandboxes',
  });
  const summary = h('p', { class: 'summary' });
  const empty = h('p', { class: 'empty', hidden: true }, 'No sandboxes match.');
  const columns = [
    'sandbox',
    'template',
    'isolation',
    'state',
    'timeline',
    'age',
    'idle in',
    'time left',
    'memory',
    'egress',
    'gateway routes',
    'agent',
  ];
  const table = h(
    'table',
    { class: 'sandboxes', 'data-testid': 'sandbox-table' },
    h('thead', {}, h('tr', {}, ...columns.map((name) => h('th', {}, name)))),
    body,
  );
  let snapshot: SandboxesSnapshot | null = null;

  const applyFilter = (): void => {
    const words = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows.values()) {
      const match = row.matches(words);
      row.element.hidden = !match;
      if (match) shown += 1;
    }
    empty.hidden = shown > 0;
    empty.textContent = rows.size === 0 ? 'No sandboxes yet.' : 'No sandboxes match the filter.';
  };
  filter.addEventListener('input', applyFilter);

  const draw = (next: SandboxesSnapshot): void => {
    snapshot = next;
    const now = next.now();
    const seen = new Set<string>();
    const sorted = [...next.sandboxes].sort(order);
    for (const sandbox of sorted) {
      seen.add(sandbox.sandboxId);
      let row = rows.get(sandbox.sandboxId);
      if (row === undefined) {
        row = new Row(sandbox);
        rows.set(sandbox.sandboxId, row);
      }
      row.update(sandbox, now, context.feed);
    }
    for (const [id, row] of rows) {
      if (!seen.has(id)) {
        row.element.remove();
        rows.delete(id);
      }
    }
    // Reorder only when the order changed, so rows under the pointer stay put.
    const wanted = sorted.map((sandbox) => rows.get(sandbox.sandboxId)?.element);
    const current = [...body.children];
    if (wanted.length !== current.length || wanted.some((element, index) => element !== current[index])) {
      fill(body, ...wanted.map((element) => element ?? null));
    }
    const counts = new Map<string, number>();
    for (const sandbox of next.sandboxes) counts.set(sandbox.state, (counts.get(sandbox.state) ?? 0) + 1);
    fill(
      summary,
      ...['running', 'suspended', 'ended'].map((state) =>
        h('span', { class: `count tone-${toneOf(state)}` }, `${String(counts.get(state) ?? 0)} ${state}`),
      ),
    );
    applyFilter();
  };

  const unsubscribe = context.source.subscribe(draw, (error) => {
    context.status.error(
      `Could not read the sandbox table: ${error instanceof Error ? error.message : 'unknown error'}`,
    );
  });
  const ticker = setInterval(() => {
    if (snapshot === null) return;
    const now = snapshot.now();
    for (const row of rows.values()) row.tick(now, context.feed);
  }, 1000);

  fill(
    root,
    h(
      'div',
      { class: 'view table-view' },
      h('div', { class: 'toolbar' }, h('h1', {}, 'Sandboxes'), summary, filter),
      h('div', { class: 'card flush' }, h('div', { class: 'scroll-x' }, table), empty),
    ),
  );
  filter.focus();
  return {
    destroy: () => {
      unsubscribe();
      clearInterval(ticker);
    },
  };
}
