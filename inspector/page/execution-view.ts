/**
 * One agent execution: its live event stream as a person reads it, steps of maxSteps, tokens of
 * maxTotalTokens, time of timeoutMs, the outcome and its reason, tokens per step, the agent actor's
 * statechart, and an abort button while it runs.
 */
import type { AgentWireLine, ExecutionInfo, ExecutionList } from '../../protocol/agent-wire.js';
import { failureText } from './actions.js';
import { Transcript } from './agent-events.js';
import { executionPath, sandboxPath } from './api.js';
import { button, card, fill, h } from './dom.js';
import { count, duration } from './format.js';
import { Gauge } from './gauge.js';
import { toneOf } from './machine-graph.js';
import { follow } from './ndjson.js';
import { navigate } from './router.js';
import type { ViewContext } from './sandbox-view.js';
import { Statechart } from './statechart.js';
import { tokenChart } from './token-chart.js';
import type { View } from './view.js';

type EventLine = Extract<AgentWireLine, { event: unknown }>;
type SessionLine = Extract<AgentWireLine, { session: unknown }>;

function isWireLine(value: unknown): value is EventLine | SessionLine {
  if (typeof value !== 'object' || value === null) return false;
  const line = value as { seq?: unknown; event?: unknown; session?: unknown };
  if (typeof line.seq !== 'number') return false; // a keepalive
  if (typeof line.session === 'string') return true;
  return (
    typeof line.event === 'object' &&
    line.event !== null &&
    typeof (line.event as { type?: unknown }).type === 'string'
  );
}

/** How recent a record must be to be animated. */
const ANIMATE_WITHIN_MS = 5000;

/** The execution view. */
export function executionView(
  root: HTMLElement,
  context: ViewContext,
  sandboxId: string,
  executionId: string,
): View {
  const { api, feed, source, machines, status } = context;
  const agentActor = `${sandboxId}/agent`;
  let info: ExecutionInfo | null = null;
  let current: string | null = null;
  /** When the page saw the last event (the end of the run, for the time gauge), control-plane clock. */
  let endedAt: number | null = null;

  const transcript = new Transcript();
  const steps = new Gauge('steps', 'steps-gauge');
  const tokens = new Gauge('tokens', 'tokens-gauge');
  const time = new Gauge('time', 'time-gauge');
  const badge = h('span', { class: 'badge' });
  const meta = h('div', { class: 'facts' });
  const outcome = h('div', { class: 'outcome-banner', hidden: true });
  const chartHolder = h('div', { class: 'chart-holder' }, tokenChart([]));
  const chart = new Statechart(machines.agent_execution, 'statechart of the agent');
  const abort = button(
    'Abort',
    () => {
      abort.disabled = true;
      status.info('Aborting…');
      api.json<unknown>(executionPath(sandboxId, executionId, '/abort'), { method: 'POST' }).then(
        () => {
          status.info(`Aborted ${executionId}.`);
          readInfo();
        },
        (error: unknown) => {
          status.error(failureText('Abort', error));
          draw();
        },
      );
    },
    { 'data-action': 'abort', class: 'danger' },
  );

  const running = (): boolean =>
    transcript.outcome === null && (info === null ? true : info.outcome === null && info.state !== 'ended');

  /** When the run ended: the agent actor's return to idle after it started, else when the page saw it. */
  const endTime = (): number | null => {
    if (info === null) return null;
    const startedAt = info.startedAt;
    const records = feed.records(agentActor);
    const run = records.findIndex((record) => record.event.type === 'run' && record.at >= startedAt - 2000);
    if (run >= 0) {
      const back = records.slice(run + 1).find((record) => record.state === 'idle');
      if (back !== undefined) return back.at;
    }
    return endedAt;
  };

  /** How it ended: the stream's last event, else the list's outcome. */
  const outcomeNow = (): { type: 'done' | 'agent_failed'; reason?: string | undefined } | null =>
    transcript.outcome ?? info?.outcome ?? null;

  const draw = (): void => {
    const ended = !running();
    const result = outcomeNow();
    view.dataset.state = result?.type ?? info?.state ?? 'unknown';
    if (result?.type === 'agent_failed') view.dataset.reason = result.reason ?? 'unknown';
    else delete view.dataset.reason;
    const label =
      result !== null
        ? result.type === 'done'
          ? { text: 'done', tone: 'good' }
          : { text: `failed · ${result.reason ?? 'unknown'}`, tone: 'bad' }
        : { text: info?.state ?? 'loading', tone: toneOf(info?.state ?? 'idle') };
    badge.className = `badge tone-${label.tone}`;
    badge.textContent = label.text;
    abort.disabled = ended || (current !== null && current !== executionId);

    const limits = info?.limits;
    const stepsUsed = Math.max(transcript.steps, info?.steps ?? 0);
    const tokensUsed = Math.max(transcript.totalTokens, info?.totalTokens ?? 0);
    steps.set(
      stepsUsed,
      limits?.maxSteps ?? null,
      limits === undefined ? String(stepsUsed) : `${String(stepsUsed)} / ${String(limits.maxSteps)}`,
    );
    const budget = limits?.maxTotalTokens ?? null;
    tokens.set(
      tokensUsed,
      budget,
      budget === null ? `${count(tokensUsed)} · no budget` : `${count(tokensUsed)} / ${count(budget)}`,
    );
    if (info === null) {
      time.set(0, null, '—');
    } else {
      const end = ended ? endTime() : source.now();
      const elapsed = end === null ? null : Math.max(0, end - info.startedAt);
      time.set(
        elapsed ?? 0,
        info.limits.timeoutMs,
        elapsed === null
          ? `ended · limit ${duration(info.limits.timeoutMs)}`
          : `${duration(elapsed)} / ${duration(info.limits.timeoutMs)}`,
      );
      fill(
        meta,
        h('span', { class: 'fact' }, h('span', { class: 'muted' }, 'runtime'), info.runtime),
        h(
          'span',
          { class: 'fact' },
          h('span', { class: 'muted' }, 'started'),
          new Date(info.startedAt).toLocaleTimeString(),
        ),
        h(
          'span',
          { class: 'fact' },
          h('span', { class: 'muted' }, 'output limit'),
          `${count(info.limits.maxOutputBytes)} B`,
        ),
      );
    }
    outcome.hidden = result === null;
    if (result !== null) {
      outcome.className = `outcome-banner ${result.type === 'done' ? 'done' : 'failed'}`;
      fill(
        outcome,
        result.type === 'done'
          ? 'Finished: done'
          : h('span', {}, 'Failed: ', h('strong', {}, result.reason ?? 'unknown reason')),
      );
    }
  };

  let infoTimer: ReturnType<typeof setTimeout> | undefined;
  const readInfo = (): void => {
    clearTimeout(infoTimer);
    infoTimer = setTimeout(() => {
      api.json<ExecutionList>(sandboxPath(sandboxId, '/agent/executions')).then(
        (list) => {
          current = list.current;
          info = list.executions.find((execution) => execution.executionId === executionId) ?? null;
          if (info === null) status.error(`The sandbox lists no execution ${executionId}.`);
          draw();
        },
        (error: unknown) => {
          status.error(failureText('Reading the execution', error));
        },
      );
    }, 100);
  };

  const drawChart = (animate: boolean): void => {
    const records = feed.records(agentActor);
    const latest = records.at(-1);
    chart.setCurrent(latest?.state ?? null);
    const previous = records.at(-2);
    if (animate && latest !== undefined)
      chart.animate(previous?.state ?? null, latest.event.type, latest.state);
  };

  const view = h(
    'div',
    { class: 'view execution-view', 'data-testid': 'execution-view', 'data-execution-id': executionId },
    h(
      'div',
      { class: 'view-head' },
      h(
        'div',
        { class: 'title-row' },
        button(
          `← ${sandboxId}`,
          () => {
            navigate({ view: 'sandbox', sandboxId });
          },
          { class: 'link back mono' },
        ),
        h('h1', { class: 'mono' }, executionId),
        badge,
        h('div', { class: 'actions' }, abort),
      ),
      meta,
    ),
    h('div', { class: 'gauges' }, steps.element, tokens.element, time.element),
    outcome,
    h(
      'div',
      { class: 'grid exec' },
      card('Agent statechart', {}, h('div', { class: 'chart-holder' }, chart.element)),
      card('Tokens per step', {}, chartHolder),
    ),
    card('Events', {}, transcript.element),
  );
  fill(root, view);
  draw();
  drawChart(false);
  readInfo();

  let chartTimer: ReturnType<typeof requestAnimationFrame> | undefined;
  const stream = follow(api, {
    after: 0,
    path: (cursor) => executionPath(sandboxId, executionId, `/events?after=${String(cursor ?? 0)}`),
    parse: (value) => (isWireLine(value) ? value : null),
    cursorOf: (line) => line.seq,
    onLine: (line) => {
      if ('session' in line) {
        transcript.session(line.seq, line.session);
        return;
      }
      transcript.add(line.seq, line.event);
      if (line.event.type === 'step_finished') {
        // The backlog arrives at once: draw the chart once per frame.
        if (chartTimer !== undefined) cancelAnimationFrame(chartTimer);
        chartTimer = requestAnimationFrame(() => {
          fill(chartHolder, tokenChart(transcript.usages));
        });
      }
      if (line.event.type === 'done' || line.event.type === 'agent_failed') {
        endedAt = source.now();
        readInfo();
      }
      draw();
    },
    finished: () => transcript.outcome !== null,
    onFatal: (error) => {
      status.error(`Could not follow the execution's events: ${error.code}: ${error.message}`);
    },
  });

  const unsubscribeFeed = feed.subscribe((record) => {
    if (record.actorId !== agentActor) return;
    drawChart(Math.abs(source.now() - record.at) < ANIMATE_WITHIN_MS);
  });
  // The table source keeps the control plane's clock offset fresh for the time gauge.
  const unsubscribeSource = source.subscribe(() => undefined);
  const ticker = setInterval(draw, 1000);
  const poll = setInterval(() => {
    if (running()) readInfo();
  }, 3000);

  return {
    destroy: () => {
      stream.stop();
      unsubscribeFeed();
      unsubscribeSource();
      clearInterval(ticker);
      clearInterval(poll);
      clearTimeout(infoTimer);
      if (chartTimer !== undefined) cancelAnimationFrame(chartTimer);
      chart.destroy();
    },
  };
}
