/**
 * Operator actions on a sandbox: pause, resume, kill (after a confirm step in the page), each enabled
 * only where it applies. Answers and refusals go to the status line as text.
 */
import { ApiError, sandboxPath, type Api } from './api.js';
import { button, fill, h } from './dom.js';
import type { StatusLine } from './status.js';

/** What an action's failure reads as. */
export function failureText(what: string, error: unknown): string {
  if (error instanceof ApiError) return `${what} failed: ${error.code}: ${error.message}`;
  return `${what} failed: ${error instanceof Error ? error.message : 'unknown error'}`;
}

/** The action buttons of one sandbox. */
export class SandboxActions {
  readonly element = h('div', { class: 'actions' });
  readonly #pause: HTMLButtonElement;
  readonly #resume: HTMLButtonElement;
  readonly #kill: HTMLButtonElement;
  readonly #confirm: HTMLElement;
  #state = 'running';
  #busy = false;

  constructor(
    readonly sandboxId: string,
    api: Api,
    status: StatusLine,
    onDone: () => void,
  ) {
    const act = (label: string, method: string, path: string, done: string): void => {
      this.#busy = true;
      this.#sync();
      status.info(`${label}…`);
      api
        .json<unknown>(sandboxPath(sandboxId, path), { method })
        .then(
          () => {
            status.info(done);
          },
          (error: unknown) => {
            status.error(failureText(label, error));
          },
        )
        .finally(() => {
          this.#busy = false;
          this.#sync();
          onDone();
        });
    };
    this.#pause = button(
      'Pause',
      () => {
        act('Pause', 'POST', '/pause', `Paused ${sandboxId}.`);
      },
      { 'data-action': 'pause' },
    );
    this.#resume = button(
      'Resume',
      () => {
        act('Resume', 'POST', '/connect', `Resumed ${sandboxId}.`);
      },
      { 'data-action': 'resume' },
    );
    const cancel = button(
      'Cancel',
      () => {
        this.#confirm.hidden = true;
        this.#sync();
      },
      { 'data-action': 'cancel-kill' },
    );
    const confirmKill = button(
      'Kill it',
      () => {
        this.#confirm.hidden = true;
        act('Kill', 'DELETE', '', `Killed ${sandboxId}.`);
      },
      { 'data-action': 'confirm-kill', class: 'danger' },
    );
    this.#confirm = h(
      'div',
      { class: 'confirm', role: 'alertdialog', hidden: true },
      h('span', {}, 'Kill this sandbox? It ends for good, with every process in it.'),
      confirmKill,
      cancel,
    );
    this.#kill = button(
      'Kill…',
      () => {
        this.#confirm.hidden = false;
        this.#sync();
        confirmKill.focus();
      },
      { 'data-action': 'kill', class: 'danger-outline' },
    );
    fill(this.element, this.#pause, this.#resume, this.#kill, this.#confirm);
    this.#sync();
  }

  /** The sandbox's state now: which actions apply. */
  setState(state: string): void {
    this.#state = state;
    if (state === 'ended') this.#confirm.hidden = true;
    this.#sync();
  }

  #sync(): void {
    const confirming = !this.#confirm.hidden;
    this.#pause.disabled = this.#busy || confirming || this.#state !== 'running';
    this.#resume.disabled = this.#busy || confirming || this.#state !== 'suspended';
    this.#kill.disabled = this.#busy || confirming || this.#state === 'ended';
  }
}
