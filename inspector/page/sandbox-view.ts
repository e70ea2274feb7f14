/**
 * One sandbox: its facts and operator actions; the statechart of the sandbox actor or of an actor it
 * hosts (a gateway route, the agent) with the current state lit and each transition shown as it
 * happens; that actor's transition log and time travel; a timeline of every actor's states; gateway
 * routes and their request log; the egress policy and the egress filter's log; commands; agent
 * executions; snapshots, each able to start a sandbox.
 */
import type { InspectionFeedRecord } from '../../protocol/control-plane-api.js';
import type { InspectorSandbox, MachineGraphs, SandboxHistory } from '../../protocol/inspector-api.js';
import { SandboxActions } from './actions.js';
import { sandboxPath, type Api } from './api.js';
import { CommandsPanel } from './commands.js';
import { button, card, fill, h } from './dom.js';
import { EgressLog, egressPolicy } from './egress-log.js';
import { ExecutionsPanel } from './executions.js';
import type { InspectionFeed } from './feed.js';
import { clockTime } from './format.js';
import { toneOf } from './machine-graph.js';
import { navigate } from './router.js';
import { RequestLog, RoutesPanel } from './routes.js';
import { clocksOf, memoryCell, stateLabel } from './sandbox-table.js';
import { followSandboxRecords } from './sandbox-records.js';
import type { SandboxesSource } from './sandboxes.js';
import { SnapshotsPanel } from './snapshots.js';
import { MetricsPanel } from './metrics-chart.js';
import { TerminalPanel } from './terminal-panel.js';
import { Statechart } from './statechart.js';
import type { StatusLine } from './status.js';
import { TimeTravel, type TravelPoint } from './time-travel.js';
import { timelineChart, type TimelineLane } from './timeline.js';
import { TransitionLog, type LogEntry } from './transition-log.js';
import type { View } from './view.js';

/** What the views share. */
export interface ViewContext {
  readonly api: Api;
  readonly feed: InspectionFeed;
  readonly source: SandboxesSource;
  readonly machines: MachineGraphs;
  readonly status: StatusLine;
}

type ActorKind = InspectionFeedRecord['kind'];

/** How recent (control-plane time) a record must be to be animated rather than just drawn. */
const ANIMATE_WITHIN_MS = 5000;

const WIRE_STATES = new Set(['running', 'suspended', 'ended']);

/** The actor's name inside its sandbox, for tabs and timeline lanes. */
function actorLabel(sandboxId: string, actorId: string, kind: ActorKind): string {
  if (actorId === sandboxId) return 'sandbox';
  const name = actorId.slice(sandboxId.length + 1);
  return kind === 'gateway_route' ? `route ${name}` : kind === 'agent_execution' ? 'agent' : name;
}

const entryOf = (record: InspectionFeedRecord): LogEntry => ({
  seq: record.seq,
  at: record.at,
  event: record.event,
  state: record.state,
});

/** The sandbox view. */
export function sandboxView(root: HTMLElement, context: ViewContext, sandboxId: string): View {
  const { api, feed, source, machines, status } = context;
  let sandbox: InspectorSandbox | null = null;
  let history: SandboxHistory | null = null;
  let selected = sandboxId;
  let chart: Statechart | null = null;
  let chartKind: ActorKind | null = null;

  const title = h('h1', { class: 'mono' }, sandboxId);
  const badge = h('span', { class: 'badge' });
  const facts = h('div', { class: 'facts' });
  const actions = new SandboxActions(sandboxId, api, status, () => {
    source.refresh();
    snapshots.refresh();
  });
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const chartHolder = h('div', { class: 'chart-holder' });
  const caption = h('p', { class: 'chart-caption' });
  const timelineHolder = h('div', { class: 'timeline-holder' });
  const log = new TransitionLog(machines.sandbox, (seq) => {
    travel.goTo(seq);
  });
  const travel = new TimeTravel((point) => {
    chart?.setCurrent(point?.state ?? liveState(), point !== null);
    log.select(point?.seq ?? null);
    drawCaption();
    drawTimeline();
  });
  const routes = new RoutesPanel();
  const requests = new RequestLog();
  const egress = new EgressLog();
  const commands = new CommandsPanel();
  const executions = new ExecutionsPanel(api, sandboxId);
  const snapshots = new SnapshotsPanel(api, status, sandboxId, () => {
    source.refresh();
  });
  const metrics = new MetricsPanel(api, sandboxId);
  const terminal = new TerminalPanel(api, status, sandboxId);
  const logTitle = h('h2', {}, 'Transition log');
  const recordsNote = h('p', { class: 'muted small', hidden: true });

  const kindOf = (actorId: string): ActorKind =>
    actorId === sandboxId ? 'sandbox' : (feed.latest(actorId)?.kind ?? 'gateway_route');

  const liveState = (): string | null => {
    const latest = feed.latest(selected)?.state;
    if (latest !== undefined) return latest;
    return selected === sandboxId ? (sandbox?.state ?? null) : null;
  };

  const sandboxState = (): string | null => {
    const latest = feed.latest(sandboxId)?.state;
    return latest !== undefined && WIRE_STATES.has(latest) ? latest : (sandbox?.state ?? null);
  };

  const drawHeader = (): void => {
    const state = sandboxState();
    view.dataset.state = state ?? 'unknown';
    actions.setState(state ?? 'ended');
    snapshots.setState(state ?? 'ended');
    terminal.setState(state ?? 'ended');
    egress.setPolicy(sandbox?.egress ?? null);
    if (sandbox === null) {
      badge.className = 'badge tone-done';
      badge.textContent = state ?? 'not in the table';
      fill(
        facts,
        h('span', { class: 'muted' }, 'The control plane lists no sandbox with this id (an old one?).'),
      );
      return;
    }
    const label = stateLabel(
      sandbox.state === state || state === null
        ? sandbox
        : { ...sandbox, state: state as InspectorSandbox['state'] },
    );
    badge.className = `badge tone-${label.tone}`;
    badge.textContent = label.text;
    const clocks = clocksOf(sandbox, source.now());
    const fact = (name: string, value: Node | string, urgent = false): HTMLElement =>
      h('span', { class: urgent ? 'fact urgent' : 'fact' }, h('span', { class: 'muted' }, name), value);
    fill(
      facts,
      fact('template', sandbox.template),
      fact('isolation', sandbox.isolation),
      fact('egress', egressPolicy(sandbox.egress, 'egress-policy')),
      fact('age', clocks.age),
      fact('idle in', clocks.idle, clocks.idleUrgent),
      fact('time left', clocks.left, clocks.leftUrgent),
      fact('memory', memoryCell(sandbox)),
      fact('auto-resume', sandbox.autoResume ? 'yes' : 'no'),
      ...Object.entries(sandbox.metadata).map(([key, value]) =>
        // Text nodes only: metadata is the operator's, shown, never markup.
        h('span', { class: 'fact', 'data-testid': 'metadata' }, h('span', { class: 'muted' }, key), value),
      ),
    );
  };

  const actorIds = (): string[] => [sandboxId, ...feed.hostedActors(sandboxId)];

  const drawTabs = (): void => {
    const ids = actorIds();
    if (tabs.childElementCount === ids.length) return;
    fill(
      tabs,
      ...ids.map((id) =>
        button(
          actorLabel(sandboxId, id, kindOf(id)),
          () => {
            select(id);
          },
          {
            role: 'tab',
            class: 'tab',
            'data-actor': id,
            'aria-selected': id === selected ? 'true' : 'false',
          },
        ),
      ),
    );
  };

  const travelPoints = (): TravelPoint[] => {
    const records = feed.records(selected);
    const fromFeed = (record: InspectionFeedRecord): TravelPoint => ({ ...entryOf(record), context: null });
    if (selected === sandboxId && history !== null && history.entries.length > 0) {
      const at = new Map(records.map((record) => [record.seq, record.at]));
      const points: TravelPoint[] = history.entries.map((entry) => ({
        seq: entry.seq,
        state: entry.state,
        event: entry.event,
        at: at.get(entry.seq) ?? null,
        context: entry.context,
      }));
      // The journal read may lag the feed: the feed's newer steps follow it (without their context).
      const lastSeq = points.at(-1)?.seq ?? -1;
      return [...points, ...records.filter((record) => record.seq > lastSeq).map(fromFeed)];
    }
    return records.map(fromFeed);
  };

  /** Under the chart: the state shown, since when and after which step. */
  const drawCaption = (): void => {
    const viewing = travel.viewing;
    const latest = feed.latest(selected);
    const state = viewing?.state ?? liveState();
    if (state === null) {
      fill(caption, h('span', { class: 'muted' }, 'No transition recorded for this actor yet.'));
      return;
    }
    const seq = viewing?.seq ?? latest?.seq ?? null;
    const event = viewing?.event.type ?? latest?.event.type ?? null;
    const at = viewing === null ? (latest?.at ?? null) : viewing.at;
    fill(
      caption,
      viewing === null ? 'Now ' : 'Then ',
      h('span', { class: `badge tone-${toneOf(state)}` }, state),
      seq === null ? null : ` after seq ${String(seq)}`,
      event === null ? null : h('span', { class: 'mono' }, ` ${event}`),
      at === null ? null : ` at ${clockTime(at)}`,
    );
  };

  const drawActor = (): void => {
    const kind = kindOf(selected);
    if (chart === null || chartKind !== kind) {
      chart?.destroy();
      chart = new Statechart(machines[kind], `statechart of ${actorLabel(sandboxId, selected, kind)}`);
      chartKind = kind;
      fill(chartHolder, chart.element);
    }
    for (const tab of tabs.children) {
      tab.setAttribute('aria-selected', tab.getAttribute('data-actor') === selected ? 'true' : 'false');
    }
    logTitle.textContent = `Transition log · ${actorLabel(sandboxId, selected, kind)}`;
    const entries = feed.records(selected).map(entryOf);
    travel.setPoints(travelPoints());
    const viewing = travel.viewing;
    chart.setCurrent(viewing?.state ?? liveState(), viewing !== null);
    log.show(machines[kind], entries, viewing?.seq ?? null);
    drawCaption();
  };

  // A backlog arrives as a burst of records: draw the actor once per burst.
  let actorTimer: ReturnType<typeof setTimeout> | undefined;
  const scheduleActor = (): void => {
    if (actorTimer !== undefined) return;
    actorTimer = setTimeout(() => {
      actorTimer = undefined;
      drawActor();
    }, 30);
  };

  const select = (actorId: string): void => {
    if (actorId === selected) return;
    selected = actorId;
    travel.live();
    drawActor();
  };

  const drawTimeline = (): void => {
    const now = source.now();
    const lanes: TimelineLane[] = actorIds().map((id) => ({
      label: actorLabel(sandboxId, id, kindOf(id)),
      changes: feed.records(id),
    }));
    const firstAt = Math.min(...lanes.map((lane) => lane.changes[0]?.at ?? Infinity));
    const start = Math.min(sandbox?.createdAt ?? Infinity, firstAt);
    if (!Number.isFinite(start)) {
      fill(timelineHolder, h('p', { class: 'muted small' }, 'No transitions recorded yet.'));
      return;
    }
    const ended = sandboxState() === 'ended';
    const end = ended
      ? Math.max(...lanes.map((lane) => lane.changes.at(-1)?.at ?? start), start + 1000)
      : now;
    fill(timelineHolder, timelineChart(lanes, start, end, travel.viewing?.at ?? null));
  };

  const drawRoutes = (): void => {
    const live = new Map<string, string>();
    for (const id of feed.hostedActors(sandboxId)) {
      const latest = feed.latest(id);
      if (latest?.kind === 'gateway_route') live.set(id.slice(sandboxId.length + 1), latest.state);
    }
    routes.setLiveStates(live);
  };

  let historyTimer: ReturnType<typeof setTimeout> | undefined;
  // Reads overlap and may answer out of order: only the latest read's answer is kept.
  let historyReads = 0;
  const readHistory = (): void => {
    clearTimeout(historyTimer);
    historyTimer = setTimeout(() => {
      const read = ++historyReads;
      api.json<SandboxHistory>(sandboxPath(sandboxId, '/history')).then(
        (next) => {
          if (read !== historyReads) return;
          history = next;
          if (selected === sandboxId) drawActor();
        },
        () => {
          if (read === historyReads) history = null; // time travel falls back to the feed's records
        },
      );
    }, 150);
  };

  const view = h(
    'div',
    { class: 'view sandbox-view', 'data-testid': 'sandbox-view', 'data-sandbox-id': sandboxId },
    h(
      'div',
      { class: 'view-head' },
      h(
        'div',
        { class: 'title-row' },
        button(
          '← Sandboxes',
          () => {
            navigate({ view: 'table' });
          },
          { class: 'link back' },
        ),
        title,
        badge,
        actions.element,
      ),
      facts,
    ),
    h(
      'div',
      { class: 'grid two' },
      h(
        'section',
        { class: 'card' },
        h('div', { class: 'card-head' }, h('h2', {}, 'Statechart'), tabs),
        travel.element,
        travel.banner,
        chartHolder,
        caption,
      ),
      h('section', { class: 'card' }, logTitle, log.element),
    ),
    card('Timeline', {}, timelineHolder),
    metrics.element,
    h(
      'div',
      { class: 'grid two wide-left' },
      card('Gateway routes', {}, routes.element, h('h3', {}, 'Requests'), requests.element),
      card('Commands', {}, recordsNote, commands.element),
    ),
    terminal.element,
    card('Egress', {}, egress.element),
    card('Agent executions', {}, executions.element),
    snapshots.element,
  );
  fill(root, view);
  drawTabs();
  drawActor();
  drawRoutes();
  drawHeader();
  drawTimeline();
  readHistory();

  const unsubscribeSource = source.subscribe((snapshot) => {
    sandbox = snapshot.sandboxes.find((row) => row.sandboxId === sandboxId) ?? null;
    if (sandbox !== null) routes.setSummaries(sandbox.routes);
    drawHeader();
  });

  const unsubscribeFeed = feed.subscribe((record) => {
    if (record.actorId !== sandboxId && !record.actorId.startsWith(`${sandboxId}/`)) return;
    drawTabs();
    if (record.actorId === sandboxId) {
      drawHeader();
      readHistory();
      snapshots.refresh();
    }
    if (record.kind === 'gateway_route') drawRoutes();
    if (record.kind === 'agent_execution') executions.refresh();
    if (record.actorId !== selected) return;
    const records = feed.records(selected);
    const previous = records.at(-2);
    scheduleActor();
    const fresh = Math.abs(source.now() - record.at) < ANIMATE_WITHIN_MS && records.at(-1) === record;
    if (fresh && travel.viewing === null)
      chart?.animate(previous?.state ?? null, record.event.type, record.state);
  });

  const records = followSandboxRecords(
    api,
    sandboxId,
    (record) => {
      if (record.type === 'gateway_response') requests.add(record);
      else if (record.type === 'egress') egress.add(record);
      else if (record.type === 'process') commands.add(record);
      else if (record.type === 'route') routes.heard(record);
    },
    (error) => {
      // An ended sandbox's records may be gone: say so where they would be, not over the status line.
      recordsNote.hidden = false;
      recordsNote.textContent = `sandboxd's records are not available (${error.code}: ${error.message}).`;
    },
  );

  const ticker = setInterval(() => {
    drawHeader();
    drawTimeline();
  }, 1000);

  return {
    destroy: () => {
      clearInterval(ticker);
      clearTimeout(historyTimer);
      clearTimeout(actorTimer);
      unsubscribeSource();
      unsubscribeFeed();
      records.stop();
      executions.destroy();
      snapshots.destroy();
      metrics.destroy();
      terminal.destroy();
      chart?.destroy();
    },
  };
}
