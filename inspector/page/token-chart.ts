/** Tokens per step of an execution: one stacked bar per finished step (input, output, reasoning). */
import type { AgentEvent } from '../../protocol/agent-wire.js';
import { s } from './dom.js';
import { count } from './format.js';

type Usage = Extract<AgentEvent, { type: 'step_finished' }>['usage'];

const PARTS = [
  ['input', 'tokens-input'],
  ['output', 'tokens-output'],
  ['reasoning', 'tokens-reasoning'],
] as const;

/** A round number at or above `value` for the axis: 1, 2, 5 × 10^n. */
function niceCeiling(value: number): number {
  if (value <= 0) return 10;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((factor) => factor * power >= value) ?? 10;
  return step * power;
}

/** The chart for `usages` (one per finished step). */
export function tokenChart(usages: readonly Usage[]): SVGSVGElement {
  const width = 520;
  const height = 220;
  const left = 52;
  const bottom = 26;
  const top = 14;
  const plotWidth = width - left - 10;
  const plotHeight = height - top - bottom;
  const svg = s('svg', {
    class: 'token-chart',
    'data-testid': 'token-chart',
    'data-steps': usages.length,
    viewBox: `0 0 ${width} ${height + 20}`,
    role: 'img',
    'aria-label': 'tokens per step',
  });
  const max = niceCeiling(
    Math.max(0, ...usages.map((usage) => usage.input + usage.output + usage.reasoning)),
  );
  const y = (value: number): number => top + plotHeight - (value / max) * plotHeight;
  for (const fraction of [0, 0.5, 1]) {
    const value = max * fraction;
    svg.appendChild(s('line', { class: 'grid', x1: left, x2: left + plotWidth, y1: y(value), y2: y(value) }));
    svg.appendChild(
      s('text', { class: 'tick-label', x: left - 6, y: y(value) + 4, 'text-anchor': 'end' }, count(value)),
    );
  }
  if (usages.length === 0) {
    svg.appendChild(
      s(
        'text',
        { class: 'empty-label', x: left + plotWidth / 2, y: top + plotHeight / 2, 'text-anchor': 'middle' },
        'no finished step yet',
      ),
    );
  }
  const slot = plotWidth / Math.max(usages.length, 8);
  const barWidth = Math.min(36, slot * 0.7);
  usages.forEach((usage, index) => {
    const x = left + slot * index + (slot - barWidth) / 2;
    let base = 0;
    const group = s('g', { class: 'bar', 'data-step': index + 1 });
    group.appendChild(
      s(
        'title',
        {},
        `step ${String(index + 1)}: input ${count(usage.input)}, output ${count(usage.output)}, reasoning ${count(usage.reasoning)}, cache read ${count(usage.cacheRead)}, total ${count(usage.total)}`,
      ),
    );
    for (const [part, className] of PARTS) {
      const value = usage[part];
      if (value <= 0) continue;
      group.appendChild(
        s('rect', {
          class: className,
          x,
          y: y(base + value),
          width: barWidth,
          height: y(base) - y(base + value),
        }),
      );
      base += value;
    }
    svg.appendChild(group);
    if (usages.length <= 30 || index % Math.ceil(usages.length / 30) === 0) {
      svg.appendChild(
        s(
          'text',
          { class: 'tick-label', x: x + barWidth / 2, y: top + plotHeight + 16, 'text-anchor': 'middle' },
          String(index + 1),
        ),
      );
    }
  });
  let legendX = left;
  for (const [part, className] of PARTS) {
    svg.appendChild(s('rect', { class: className, x: legendX, y: height + 6, width: 10, height: 10, rx: 2 }));
    svg.appendChild(s('text', { class: 'legend', x: legendX + 14, y: height + 15 }, part));
    legendX += 24 + part.length * 7;
  }
  svg.appendChild(
    s(
      'text',
      { class: 'legend muted', x: left + plotWidth, y: height + 15, 'text-anchor': 'end' },
      'steps →',
    ),
  );
  return svg;
}
