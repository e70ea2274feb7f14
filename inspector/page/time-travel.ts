/**
 * Time travel over one actor: a slider over its sequence numbers; at any but the latest, the page shows
 * the state (and, for a sandbox, the context) as it was after that step, under a banner that says so
 * and leads back to live.
 */
import { button, fill, h } from './dom.js';
import { clockTime, eventDetails, truncate } from './format.js';
import { toneOf } from './machine-graph.js';

/** The actor after one step. */
export interface TravelPoint {
  readonly seq: number;
  readonly state: string;
  readonly event: Readonly<{ type: string } & Record<string, unknown>>;
  /** Wall-clock time, when known. */
  readonly at: number | null;
  /** Facts of the context worth reading (a sandbox's clock, deadline, reasons). */
  readonly context: Readonly<Record<string, string | number | null>> | null;
}

const TIME_FACTS = new Set(['now', 'deadlineAt', 'lastActivityAt']);

/** The slider and its banner. */
export class TimeTravel {
  readonly element: HTMLElement;
  readonly banner: HTMLElement;
  readonly #input: HTMLInputElement;
  readonly #position = h('span', { class: 'mono small' });
  readonly #onChange: (point: TravelPoint | null) => void;
  #points: readonly TravelPoint[] = [];
  #viewing: TravelPoint | null = null;

  /** `onChange` gets the point viewed, or null when back to live. */
  constructor(onChange: (point: TravelPoint | null) => void) {
    this.#onChange = onChange;
    this.#input = h('input', {
      type: 'range',
      'data-testid': 'time-travel',
      min: 0,
      max: 0,
      step: 1,
      value: 0,
      'aria-label': 'sequence number to view',
    });
    const pick = (): void => {
      this.goTo(Number(this.#input.value));
    };
    this.#input.addEventListener('input', pick);
    this.#input.addEventListener('change', pick);
    this.element = h(
      'div',
      { class: 'time-travel' },
      h('span', { class: 'small muted' }, 'time travel'),
      this.#input,
      this.#position,
    );
    this.banner = h('div', { class: 'travel-banner', 'data-testid': 'time-travel-banner', hidden: true });
  }

  /** The point viewed, or null when live. */
  get viewing(): TravelPoint | null {
    return this.#viewing;
  }

  /** The actor's steps, oldest first; live keeps following the newest. */
  setPoints(points: readonly TravelPoint[]): void {
    this.#points = points;
    const first = points[0]?.seq ?? 0;
    const last = points.at(-1)?.seq ?? 0;
    this.#input.min = String(first);
    this.#input.max = String(last);
    this.#input.disabled = points.length < 2;
    if (this.#viewing === null) {
      this.#input.value = String(last);
    } else {
      const seq = this.#viewing.seq;
      this.#viewing = this.#pointAt(seq) ?? null;
      this.#input.value = String(seq);
    }
    this.#draw();
  }

  /** Views the actor after step `seq` (the nearest step at or before it); the latest goes live. */
  goTo(seq: number): void {
    const last = this.#points.at(-1);
    if (last === undefined || seq >= last.seq) {
      this.live();
      return;
    }
    const point = this.#pointAt(seq);
    if (point === undefined) return;
    this.#viewing = point;
    this.#input.value = String(seq);
    this.#draw();
    this.#onChange(point);
  }

  /** Back to live. */
  live(): void {
    const wasViewing = this.#viewing !== null;
    this.#viewing = null;
    this.#input.value = String(this.#points.at(-1)?.seq ?? 0);
    this.#draw();
    if (wasViewing) this.#onChange(null);
  }

  #pointAt(seq: number): TravelPoint | undefined {
    let found: TravelPoint | undefined;
    for (const point of this.#points) {
      if (point.seq > seq) break;
      found = point;
    }
    return found ?? this.#points[0];
  }

  #draw(): void {
    const point = this.#viewing;
    const last = this.#points.at(-1);
    this.#position.textContent =
      point === null
        ? `seq ${String(last?.seq ?? '—')} · live`
        : `seq ${String(point.seq)} of ${String(last?.seq ?? '—')}`;
    this.banner.hidden = point === null;
    if (point === null) {
      delete this.banner.dataset.state;
      delete this.banner.dataset.seq;
      fill(this.banner);
      return;
    }
    this.banner.dataset.state = point.state;
    this.banner.dataset.seq = String(point.seq);
    const facts = Object.entries(point.context ?? {}).map(([key, value]) =>
      h(
        'span',
        { class: 'fact' },
        h('span', { class: 'muted' }, `${key} `),
        value === null
          ? '—'
          : TIME_FACTS.has(key) && typeof value === 'number'
            ? clockTime(value)
            : String(value),
      ),
    );
    const details = eventDetails(point.event);
    fill(
      this.banner,
      h(
        'div',
        { class: 'travel-head' },
        h('strong', {}, `Viewing seq ${String(point.seq)}`),
        ' — state ',
        h('span', { class: `badge tone-${toneOf(point.state)}` }, point.state),
        ' after ',
        h('span', { class: 'mono' }, point.event.type),
        details === '' ? null : h('span', { class: 'muted small' }, ` ${truncate(details, 80)}`),
        point.at === null ? null : h('span', { class: 'muted small' }, ` at ${clockTime(point.at)}`),
        button(
          'Back to live',
          () => {
            this.live();
          },
          { class: 'primary small-button', 'data-action': 'live' },
        ),
      ),
      facts.length === 0 ? null : h('div', { class: 'facts' }, ...facts),
    );
  }
}
