/**
 * A sandbox's resource use (`GET /v1/sandboxes/:id/metrics`, issue 28): CPU and memory over time as two
 * lines on one chart (both in percent of the sandbox's limits), and the latest sample's disk and
 * network figures beside it. Read again every few seconds while the view is open; an ended sandbox's
 * samples stay as long as the control plane keeps them.
 */
import type { SandboxMetric } from '../../protocol/control-plane-api.js';
import { ApiError, sandboxPath, type Api } from './api.js';
import { card, fill, h, s } from './dom.js';
import { bytes, bytesOf, clockTime } from './format.js';

/** The samples are taken every few seconds: reading more often would draw nothing new. */
const POLL_MS = 3_000;

const LINES = [
  ['cpu', 'CPU', (sample: SandboxMetric) => sample.cpuUsedPct],
  [
    'memory',
    'memory',
    (sample: SandboxMetric) => (100 * sample.memUsedBytes) / Math.max(1, sample.memTotalBytes),
  ],
] as const;

/** The chart of `samples` (oldest first), each line in percent of its limit. */
export function metricsChart(samples: readonly SandboxMetric[]): SVGSVGElement {
  const width = 520;
  const height = 160;
  const left = 40;
  const top = 10;
  const bottom = 22;
  const plotWidth = width - left - 10;
  const plotHeight = height - top - bottom;
  const svg = s('svg', {
    class: 'metrics-chart',
    'data-testid': 'metrics-chart',
    'data-samples': samples.length,
    viewBox: `0 0 ${width} ${height + 20}`,
    role: 'img',
    'aria-label': 'CPU and memory over time',
  });
  const y = (percent: number): number =>
    top + plotHeight - (Math.min(100, Math.max(0, percent)) / 100) * plotHeight;
  for (const percent of [0, 50, 100]) {
    svg.appendChild(
      s('line', { class: 'grid', x1: left, x2: left + plotWidth, y1: y(percent), y2: y(percent) }),
    );
    svg.appendChild(
      s(
        'text',
        { class: 'tick-label', x: left - 6, y: y(percent) + 4, 'text-anchor': 'end' },
        `${String(percent)}%`,
      ),
    );
  }
  const first = samples[0]?.timestamp ?? 0;
  const last = samples.at(-1)?.timestamp ?? 0;
  const x = (at: number): number =>
    left + (last === first ? plotWidth : ((at - first) / (last - first)) * plotWidth);
  if (samples.length === 0) {
    svg.appendChild(
      s(
        'text',
        { class: 'empty-label', x: left + plotWidth / 2, y: top + plotHeight / 2, 'text-anchor': 'middle' },
        'no sample yet',
      ),
    );
  } else {
    svg.appendChild(s('text', { class: 'tick-label', x: left, y: height - 4 }, clockTime(first)));
    svg.appendChild(
      s(
        'text',
        { class: 'tick-label', x: left + plotWidth, y: height - 4, 'text-anchor': 'end' },
        clockTime(last),
      ),
    );
  }
  for (const [name, , value] of LINES) {
    const points = samples.map(
      (sample) => `${x(sample.timestamp).toFixed(1)},${y(value(sample)).toFixed(1)}`,
    );
    svg.appendChild(s('polyline', { class: `metric-${name}`, 'data-line': name, points: points.join(' ') }));
  }
  let legendX = left;
  for (const [name, label] of LINES) {
    svg.appendChild(
      s('rect', { class: `metric-${name}-key`, x: legendX, y: height + 6, width: 10, height: 10, rx: 2 }),
    );
    svg.appendChild(s('text', { class: 'legend', x: legendX + 14, y: height + 15 }, label));
    legendX += 30 + label.length * 7;
  }
  return svg;
}

/** The latest sample in words. */
function latestFacts(sample: SandboxMetric | undefined): HTMLElement {
  if (sample === undefined)
    return h(
      'p',
      { class: 'muted small' },
      'No sample yet: one is taken every few seconds while the sandbox runs.',
    );
  const fact = (name: string, value: string): HTMLElement =>
    h('span', { class: 'fact', 'data-metric': name }, h('span', { class: 'muted' }, name), value);
  return h(
    'div',
    { class: 'facts' },
    fact('CPU', `${sample.cpuUsedPct.toFixed(1)}% of ${String(sample.cpuCount)}`),
    fact('memory', bytesOf(sample.memUsedBytes, sample.memTotalBytes)),
    fact('disk', bytesOf(sample.diskUsedBytes, sample.diskTotalBytes)),
    fact('network', `${bytes(sample.netRxBytes)} in, ${bytes(sample.netTxBytes)} out`),
    fact('at', clockTime(sample.timestamp)),
  );
}

/** The metrics card of one sandbox, reading its samples until destroyed. */
export class MetricsPanel {
  readonly element: HTMLElement;
  readonly #body = h('div');
  readonly #api: Api;
  readonly #sandboxId: string;
  readonly #poll: ReturnType<typeof setInterval>;
  #destroyed = false;

  constructor(api: Api, sandboxId: string) {
    this.#api = api;
    this.#sandboxId = sandboxId;
    this.element = card('Resources', { 'data-testid': 'metrics' }, this.#body);
    this.#read();
    this.#poll = setInterval(() => {
      this.#read();
    }, POLL_MS);
  }

  destroy(): void {
    this.#destroyed = true;
    clearInterval(this.#poll);
  }

  #read(): void {
    this.#api.json<{ metrics: SandboxMetric[] }>(sandboxPath(this.#sandboxId, '/metrics')).then(
      ({ metrics }) => {
        if (!this.#destroyed) fill(this.#body, latestFacts(metrics.at(-1)), metricsChart(metrics));
      },
      (error: unknown) => {
        if (this.#destroyed) return;
        const reason = error instanceof ApiError ? `${error.code}: ${error.message}` : 'unknown error';
        fill(this.#body, h('p', { class: 'muted small' }, `No metrics to show (${reason}).`));
      },
    );
  }
}
