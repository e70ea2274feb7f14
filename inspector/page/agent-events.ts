/**
 * An agent execution's events as a person reads them: a header per step with its token usage, text
 * deltas joined into paragraphs, reasoning dimmed, tool calls as cards updated as their status changes
 * (input and output cut to a few hundred characters), and the outcome at the end. All of it is text:
 * what an agent writes is as hostile as any sandbox output.
 */
import type { AgentEvent } from '../../protocol/agent-wire.js';
import { h } from './dom.js';
import { count, json, truncate } from './format.js';

type Usage = Extract<AgentEvent, { type: 'step_finished' }>['usage'];

/** Characters of a tool call's input or output shown. */
const TOOL_TEXT = 400;

/** The transcript of one execution. */
export class Transcript {
  readonly element = h('div', { class: 'transcript', 'data-testid': 'agent-events', 'aria-live': 'polite' });
  /** Token usage of each finished step, in order. */
  readonly usages: Usage[] = [];
  #steps = 0;
  #container: HTMLElement = this.element;
  #stepUsage: HTMLElement | null = null;
  #streaming: HTMLElement | null = null;
  #toolCards: { name: string; card: HTMLElement; status: HTMLElement; body: HTMLElement }[] = [];
  #outcome: { type: 'done' } | { type: 'agent_failed'; reason: string } | null = null;

  /** Steps started so far. */
  get steps(): number {
    return this.#steps;
  }

  /** Tokens used so far (sum of the finished steps' totals). */
  get totalTokens(): number {
    return this.usages.reduce((sum, usage) => sum + usage.total, 0);
  }

  /** How the execution ended, once its last event arrived. */
  get outcome(): { type: 'done' } | { type: 'agent_failed'; reason: string } | null {
    return this.#outcome;
  }

  /** The session the runtime reported. */
  session(seq: number, id: string): void {
    this.#append(h('p', { class: 'session', 'data-seq': seq }, 'session ', h('span', { class: 'mono' }, id)));
  }

  /** One event, in order. */
  add(seq: number, event: AgentEvent): void {
    const stick = this.#atBottom();
    switch (event.type) {
      case 'step_started': {
        this.#steps += 1;
        this.#stepUsage = h('span', { class: 'usage muted' }, 'running…');
        const body = h('div', { class: 'step-body' });
        this.element.appendChild(
          h(
            'section',
            { class: 'step', 'data-seq': seq, 'data-step': this.#steps },
            h(
              'header',
              { class: 'step-head' },
              h('strong', {}, `Step ${String(this.#steps)}`),
              this.#stepUsage,
            ),
            body,
          ),
        );
        this.#container = body;
        this.#streaming = null;
        this.#toolCards = [];
        break;
      }
      case 'text_delta': {
        if (this.#streaming === null || this.#container.lastElementChild !== this.#streaming) {
          this.#streaming = this.#append(h('p', { class: 'text', 'data-seq': seq, 'data-event': 'text' }));
        }
        this.#streaming.append(event.text);
        break;
      }
      case 'text': {
        // A runtime that streamed deltas may close the part with its whole text: keep one copy.
        if (this.#streaming !== null && this.#streaming.textContent === event.text) {
          this.#streaming = null;
          break;
        }
        this.#streaming = null;
        this.#append(h('p', { class: 'text', 'data-seq': seq, 'data-event': 'text' }, event.text));
        break;
      }
      case 'reasoning': {
        this.#streaming = null;
        this.#append(
          h(
            'p',
            { class: 'reasoning', 'data-seq': seq, 'data-event': 'reasoning' },
            h('span', { class: 'tag' }, 'reasoning'),
            event.text,
          ),
        );
        break;
      }
      case 'tool_call': {
        this.#streaming = null;
        this.#toolCall(seq, event);
        break;
      }
      case 'step_finished': {
        this.usages.push(event.usage);
        if (this.#stepUsage !== null) {
          const { usage } = event;
          this.#stepUsage.textContent = [
            `in ${count(usage.input)}`,
            `out ${count(usage.output)}`,
            usage.reasoning > 0 ? `reasoning ${count(usage.reasoning)}` : '',
            usage.cacheRead + usage.cacheWrite > 0
              ? `cache ${count(usage.cacheRead)}/${count(usage.cacheWrite)}`
              : '',
            `total ${count(usage.total)}`,
          ]
            .filter((part) => part !== '')
            .join(' · ');
        }
        this.#stepUsage = null;
        this.#container = this.element;
        this.#streaming = null;
        break;
      }
      case 'agent_failed': {
        this.#outcome = { type: 'agent_failed', reason: event.reason };
        this.element.appendChild(
          h(
            'div',
            { class: 'outcome failed', 'data-seq': seq, 'data-event': 'agent_failed' },
            'Agent failed: ',
            h('strong', {}, event.reason),
          ),
        );
        break;
      }
      case 'done': {
        this.#outcome = { type: 'done' };
        this.element.appendChild(
          h('div', { class: 'outcome done', 'data-seq': seq, 'data-event': 'done' }, 'Done'),
        );
        break;
      }
    }
    if (stick) this.element.scrollTop = this.element.scrollHeight;
  }

  #toolCall(seq: number, event: Extract<AgentEvent, { type: 'tool_call' }>): void {
    const open = [...this.#toolCards]
      .reverse()
      .find((card) => card.name === event.name && card.status.textContent === 'running');
    const tone = event.status === 'completed' ? 'good' : event.status === 'error' ? 'bad' : 'warn';
    const body = h(
      'div',
      { class: 'tool-body' },
      h('div', { class: 'tool-label muted' }, 'input'),
      h('pre', { class: 'tool-input' }, truncate(json(event.input), TOOL_TEXT)),
      event.output === '' ? null : h('div', { class: 'tool-label muted' }, 'output'),
      event.output === '' ? null : h('pre', { class: 'tool-output' }, truncate(event.output, TOOL_TEXT)),
    );
    if (open !== undefined) {
      open.status.textContent = event.status;
      open.status.className = `badge tone-${tone}`;
      open.card.dataset.status = event.status;
      open.card.classList.toggle('error', event.status === 'error');
      open.body.replaceWith(body);
      open.body = body;
      return;
    }
    const status = h('span', { class: `badge tone-${tone}` }, event.status);
    const card = h(
      'div',
      {
        class: `tool-call${event.status === 'error' ? ' error' : ''}`,
        'data-seq': seq,
        'data-event': 'tool_call',
        'data-status': event.status,
      },
      h(
        'div',
        { class: 'tool-head' },
        h('span', { class: 'tool-icon' }, '⚙'),
        h('span', { class: 'mono' }, event.name),
        status,
      ),
      body,
    );
    this.#append(card);
    this.#toolCards.push({ name: event.name, card, status, body });
  }

  #append<T extends HTMLElement>(element: T): T {
    this.#container.appendChild(element);
    return element;
  }

  #atBottom(): boolean {
    return this.element.scrollHeight - this.element.scrollTop - this.element.clientHeight < 40;
  }
}
