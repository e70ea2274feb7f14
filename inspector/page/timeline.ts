/**
 * Timelines of states: one horizontal band per actor, each span coloured by the state the actor was in,
 * over a time axis. The compact form (a table row's) is one band without axis or labels.
 */
import { s } from './dom.js';
import { clockTime, duration } from './format.js';
import { toneOf } from './machine-graph.js';

/** One band: the states an actor went through, with the time each began. */
export interface TimelineLane {
  readonly label: string;
  /** Oldest first. */
  readonly changes: readonly { readonly at: number; readonly state: string }[];
}

const STEPS_MS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400].map(
  (seconds) => seconds * 1000,
);

/** The spans of a lane between `start` and `end`, consecutive equal states merged. */
function spansOf(
  lane: TimelineLane,
  start: number,
  end: number,
): { state: string; from: number; to: number }[] {
  const spans: { state: string; from: number; to: number }[] = [];
  lane.changes.forEach((change, index) => {
    const to = lane.changes[index + 1]?.at ?? end;
    const from = Math.max(start, change.at);
    if (to <= from) return;
    const last = spans.at(-1);
    if (last?.state === change.state && last.to >= from) last.to = to;
    else spans.push({ state: change.state, from, to });
  });
  return spans;
}

/**
 * A full timeline: bands with their labels, a time axis, a legend of the states seen; `marker` draws a
 * line at one time (the step time travel is viewing).
 */
export function timelineChart(
  lanes: readonly TimelineLane[],
  start: number,
  end: number,
  marker: number | null = null,
): SVGSVGElement {
  const width = 960;
  const labelWidth = 150;
  const band = 20;
  const gap = 10;
  const top = 8;
  const plot = width - labelWidth - 16;
  const span = Math.max(1000, end - start);
  const x = (t: number): number => labelWidth + ((t - start) / span) * plot;
  const axisY = top + lanes.length * (band + gap);
  const height = axisY + 44;
  const svg = s('svg', {
    class: 'timeline',
    'data-testid': 'timeline',
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': 'timeline of states',
  });
  const seen = new Set<string>();
  lanes.forEach((lane, index) => {
    const y = top + index * (band + gap);
    svg.appendChild(
      s(
        'text',
        { class: 'lane-label', x: labelWidth - 10, y: y + band / 2 + 4, 'text-anchor': 'end' },
        lane.label,
      ),
    );
    svg.appendChild(s('rect', { class: 'lane-bg', x: labelWidth, y, width: plot, height: band, rx: 3 }));
    for (const part of spansOf(lane, start, end)) {
      seen.add(part.state);
      const left = x(part.from);
      const spanWidth = Math.max(1, x(part.to) - left);
      const rect = s('rect', {
        class: `span tone-${toneOf(part.state)}`,
        'data-state': part.state,
        x: left,
        y,
        width: spanWidth,
        height: band,
      });
      rect.appendChild(
        s(
          'title',
          {},
          `${part.state}: ${clockTime(part.from)} – ${clockTime(part.to)} (${duration(part.to - part.from)})`,
        ),
      );
      svg.appendChild(rect);
      if (spanWidth > part.state.length * 7.4 + 10) {
        svg.appendChild(s('text', { class: 'span-label', x: left + 5, y: y + band / 2 + 4 }, part.state));
      }
    }
  });
  // Time axis: a tick every step that gives at most six.
  const step = STEPS_MS.find((candidate) => span / candidate <= 6) ?? STEPS_MS.at(-1) ?? 3_600_000;
  svg.appendChild(s('line', { class: 'axis', x1: labelWidth, x2: labelWidth + plot, y1: axisY, y2: axisY }));
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) {
    svg.appendChild(s('line', { class: 'tick', x1: x(t), x2: x(t), y1: axisY, y2: axisY + 5 }));
    svg.appendChild(
      s('text', { class: 'tick-label', x: x(t), y: axisY + 17, 'text-anchor': 'middle' }, clockTime(t)),
    );
  }
  if (marker !== null && marker >= start && marker <= end) {
    svg.appendChild(s('line', { class: 'marker', x1: x(marker), x2: x(marker), y1: top - 6, y2: axisY }));
  }
  let legendX = labelWidth;
  for (const state of seen) {
    svg.appendChild(
      s('rect', {
        class: `span tone-${toneOf(state)}`,
        x: legendX,
        y: axisY + 28,
        width: 10,
        height: 10,
        rx: 2,
      }),
    );
    svg.appendChild(s('text', { class: 'legend', x: legendX + 14, y: axisY + 37 }, state));
    legendX += 30 + state.length * 6.5;
  }
  return svg;
}

/** A compact band for a table row. */
export function compactTimeline(lane: TimelineLane, start: number, end: number): SVGSVGElement {
  const width = 100;
  const height = 10;
  const span = Math.max(1000, end - start);
  const svg = s('svg', {
    class: 'timeline compact',
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-label': 'timeline of states',
  });
  svg.appendChild(s('rect', { class: 'lane-bg', x: 0, y: 0, width, height, rx: 2 }));
  for (const part of spansOf(lane, start, end)) {
    const left = ((part.from - start) / span) * width;
    const rect = s('rect', {
      class: `span tone-${toneOf(part.state)}`,
      x: left,
      y: 0,
      width: Math.max(0.75, ((part.to - part.from) / span) * width),
      height,
    });
    rect.appendChild(s('title', {}, `${part.state} ${clockTime(part.from)} – ${clockTime(part.to)}`));
    svg.appendChild(rect);
  }
  return svg;
}
