/** Gauges: how much of a limit is used, as a bar and text. */
import { fill, h, s } from './dom.js';

/** How full a ratio reads: low, medium (from 70 %), high (from 90 %). */
export const levelOf = (ratio: number): string => (ratio >= 0.9 ? 'high' : ratio >= 0.7 ? 'medium' : 'low');

/** A small bar for a table cell, `ratio` of it filled. */
export function miniBar(ratio: number): SVGSVGElement {
  const clamped = Math.max(0, Math.min(1, ratio));
  return s(
    'svg',
    {
      class: 'mini-bar',
      'data-level': levelOf(clamped),
      viewBox: '0 0 44 6',
      width: 44,
      height: 6,
      'aria-hidden': 'true',
    },
    s('rect', { class: 'gauge-bg', x: 0, y: 0, width: 44, height: 6, rx: 3 }),
    s('rect', {
      class: 'gauge-fill',
      x: 0,
      y: 0,
      width: Math.max(clamped > 0 ? 3 : 0, clamped * 44),
      height: 6,
      rx: 3,
    }),
  );
}

/** One gauge; `set` updates it. */
export class Gauge {
  readonly element: HTMLElement;
  readonly #value = h('span', { class: 'gauge-value' });
  readonly #bar = s('rect', { class: 'gauge-fill', x: 0, y: 0, height: 8, width: 0, rx: 4 });

  constructor(label: string, testId: string) {
    const track = s(
      'svg',
      { class: 'gauge-track', viewBox: '0 0 100 8', preserveAspectRatio: 'none', 'aria-hidden': 'true' },
      s('rect', { class: 'gauge-bg', x: 0, y: 0, width: 100, height: 8, rx: 4 }),
      this.#bar,
    );
    this.element = h(
      'div',
      { class: 'gauge', 'data-testid': testId },
      h('div', { class: 'gauge-head' }, h('span', { class: 'gauge-label' }, label), this.#value),
      track,
    );
  }

  /** `used` of `limit` (null: no limit), read as `text`. */
  set(used: number, limit: number | null, text: string): void {
    fill(this.#value, text);
    this.element.dataset.value = String(used);
    if (limit === null) delete this.element.dataset.max;
    else this.element.dataset.max = String(limit);
    const ratio = limit === null || limit <= 0 ? 0 : Math.min(1, used / limit);
    this.#bar.setAttribute('width', String(ratio * 100));
    this.element.dataset.level = levelOf(ratio);
  }
}
