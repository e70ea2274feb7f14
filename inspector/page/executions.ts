/** A sandbox's agent executions (`GET /v1/sandboxes/:id/agent/executions`), each leading to its view. */
import type { ExecutionInfo, ExecutionList } from '../../protocol/agent-wire.js';
import { sandboxPath, type Api } from './api.js';
import { fill, h, logTable } from './dom.js';
import { clockTime, count } from './format.js';
import { toneOf } from './machine-graph.js';
import { navigate } from './router.js';

/** What an execution reads as: its outcome once ended, else its state. */
export function executionState(info: ExecutionInfo): { text: string; tone: string } {
  if (info.outcome === null) return { text: info.state, tone: toneOf(info.state) };
  if (info.outcome.type === 'done') return { text: 'done', tone: 'good' };
  return { text: `failed · ${info.outcome.reason ?? 'unknown'}`, tone: 'bad' };
}

/** The executions table. */
export class ExecutionsPanel {
  readonly element: HTMLElement;
  readonly #body = h('tbody', { 'data-testid': 'executions' });
  readonly #note = h('p', { class: 'muted small' }, 'Loading…');
  readonly #api: Api;
  readonly #sandboxId: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #poll: ReturnType<typeof setInterval>;

  constructor(api: Api, sandboxId: string) {
    this.#api = api;
    this.#sandboxId = sandboxId;
    this.element = h(
      'div',
      {},
      logTable(['execution', 'runtime', 'state', 'started', 'steps', 'tokens', ''], this.#body),
      this.#note,
    );
    this.refresh();
    this.#poll = setInterval(() => {
      this.refresh();
    }, 5000);
  }

  /** Reads the list again soon. */
  refresh(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#api.json<ExecutionList>(sandboxPath(this.#sandboxId, '/agent/executions')).then(
        (list) => {
          this.#draw(list);
        },
        (error: unknown) => {
          fill(this.#body);
          this.#note.hidden = false;
          this.#note.textContent = `No executions to show (${error instanceof Error ? error.message : 'unknown error'}).`;
        },
      );
    }, 200);
  }

  destroy(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
  }

  #draw(list: ExecutionList): void {
    const rows = [...list.executions]
      .sort((a, b) => b.startedAt - a.startedAt)
      .map((info) => {
        const state = executionState(info);
        const open = (): void => {
          navigate({ view: 'execution', sandboxId: this.#sandboxId, executionId: info.executionId });
        };
        // The row takes the click (a key press on the button bubbles to it).
        const link = h('button', { type: 'button', class: 'link mono' }, info.executionId);
        const row = h(
          'tr',
          { 'data-execution-id': info.executionId, class: 'clickable' },
          h('td', {}, link),
          h('td', {}, info.runtime),
          h('td', {}, h('span', { class: `badge tone-${state.tone}` }, state.text)),
          h('td', { class: 'mono' }, clockTime(info.startedAt)),
          h('td', { class: 'num' }, `${String(info.steps)} / ${String(info.limits.maxSteps)}`),
          h(
            'td',
            { class: 'num' },
            info.limits.maxTotalTokens === null
              ? count(info.totalTokens)
              : `${count(info.totalTokens)} / ${count(info.limits.maxTotalTokens)}`,
          ),
          h(
            'td',
            {},
            list.current === info.executionId ? h('span', { class: 'chip tone-good' }, 'current') : null,
          ),
        );
        row.addEventListener('click', open);
        return row;
      });
    fill(this.#body, ...rows);
    this.#note.hidden = rows.length > 0;
    this.#note.textContent = 'No agent executions in this sandbox.';
  }
}
