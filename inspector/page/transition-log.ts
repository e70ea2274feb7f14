/**
 * An actor's transition log: sequence number, time, event (with its fields), the state after it and
 * the effects the step requested; outcomes of failed effects stand out. A row picks that sequence
 * number for time travel.
 */
import type { MachineGraph } from '../../protocol/inspector-api.js';
import { fill, h } from './dom.js';
import { eventDetails, preciseTime, truncate } from './format.js';
import { effectsOf, isFailure, toneOf } from './machine-graph.js';

/** One step of an actor, from the inspection feed or a history. */
export interface LogEntry {
  readonly seq: number;
  /** Wall-clock time, when known. */
  readonly at: number | null;
  readonly event: Readonly<{ type: string } & Record<string, unknown>>;
  readonly state: string;
}

/** Rows drawn at most (newest first). */
const MAX_ROWS = 500;

/** The log of one actor. */
export class TransitionLog {
  readonly element: HTMLElement;
  readonly #body = h('tbody', { 'data-testid': 'transition-log' });
  readonly #note = h('p', { class: 'muted small' });
  readonly #hideClock: HTMLInputElement;
  readonly #scroller: HTMLElement;
  #graph: MachineGraph;
  #entries: readonly LogEntry[] = [];
  #selected: number | null = null;

  constructor(graph: MachineGraph, onPick: (seq: number) => void) {
    this.#graph = graph;
    this.#hideClock = h('input', { type: 'checkbox', 'data-testid': 'hide-clock' });
    this.#scroller = h('div', { class: 'scroll' });
    this.#hideClock.addEventListener('change', () => {
      this.#draw();
    });
    const table = h(
      'table',
      { class: 'log fixed' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { class: 'col-seq' }, 'seq'),
          h('th', { class: 'col-time' }, 'time'),
          h('th', {}, 'event'),
          h('th', { class: 'col-state' }, 'state after'),
          h('th', { class: 'col-effects' }, 'effects'),
        ),
      ),
      this.#body,
    );
    this.#body.addEventListener('click', (event) => {
      const row = (event.target as Element).closest('tr[data-seq]');
      const seq = Number(row?.getAttribute('data-seq'));
      if (row !== null && Number.isInteger(seq)) onPick(seq);
    });
    this.#scroller.appendChild(table);
    this.element = h(
      'div',
      { class: 'transition-log' },
      h('label', { class: 'toggle small' }, this.#hideClock, ' hide clock ticks that change nothing'),
      this.#scroller,
      this.#note,
    );
  }

  /** Shows `entries` (oldest first) of an actor whose machine is `graph`; `selected` is lit. */
  show(graph: MachineGraph, entries: readonly LogEntry[], selected: number | null): void {
    this.#graph = graph;
    this.#entries = entries;
    this.#selected = selected;
    this.#draw();
  }

  /** Lights the row of `seq` (time travel), or none, and scrolls the log to it. */
  select(seq: number | null): void {
    this.#selected = seq;
    for (const row of this.#body.querySelectorAll('tr[data-seq]')) {
      const selected = Number(row.getAttribute('data-seq')) === seq;
      row.classList.toggle('selected', selected);
      if (selected) this.#reveal(row);
    }
  }

  /** Scrolls the log (not the page) so `row` shows. */
  #reveal(row: Element): void {
    const box = this.#scroller.getBoundingClientRect();
    const at = row.getBoundingClientRect();
    if (at.top < box.top + 30 || at.bottom > box.bottom) {
      this.#scroller.scrollTop += at.top - box.top - box.height / 2;
    }
  }

  #draw(): void {
    const rows: HTMLTableRowElement[] = [];
    const hideClock = this.#hideClock.checked;
    let hidden = 0;
    for (let index = this.#entries.length - 1; index >= 0 && rows.length < MAX_ROWS; index -= 1) {
      const entry = this.#entries[index];
      if (entry === undefined) continue;
      const previous = this.#entries[index - 1];
      const from = previous?.state ?? null;
      const quiet = entry.event.type === 'clock' && from === entry.state;
      if (hideClock && quiet) {
        hidden += 1;
        continue;
      }
      const effects = effectsOf(this.#graph, from, entry.event.type, entry.state);
      const failed = isFailure(entry.event.type, entry.state);
      const classes = [
        failed ? 'failed' : '',
        quiet ? 'quiet' : '',
        entry.seq === this.#selected ? 'selected' : '',
      ]
        .filter((name) => name !== '')
        .join(' ');
      const details = eventDetails(entry.event);
      rows.push(
        h(
          'tr',
          { 'data-seq': entry.seq, 'data-event': entry.event.type, class: classes === '' ? false : classes },
          h('td', { class: 'num' }, entry.seq),
          h('td', { class: 'mono' }, entry.at === null ? '—' : preciseTime(entry.at)),
          h(
            'td',
            {},
            h('span', { class: 'event-type' }, entry.event.type),
            details === ''
              ? null
              : h('span', { class: 'event-details', title: details }, truncate(details, 160)),
          ),
          h('td', {}, h('span', { class: `badge tone-${toneOf(entry.state)}` }, entry.state)),
          h('td', { class: 'effects' }, ...effects.map((action) => h('span', { class: 'chip' }, action))),
        ),
      );
    }
    fill(this.#body, ...rows);
    const older = this.#entries.length - rows.length - hidden;
    this.#note.textContent =
      this.#entries.length === 0
        ? 'No transitions recorded yet.'
        : [
            `${String(this.#entries.length)} transitions`,
            hidden > 0 ? `${String(hidden)} clock ticks hidden` : '',
            older > 0 ? `${String(older)} older not drawn` : '',
          ]
            .filter((part) => part !== '')
            .join(' · ');
  }
}
