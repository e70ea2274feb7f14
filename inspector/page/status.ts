/** The status line: what the last operator action or failed call said, as text. */
import { h } from './dom.js';

/** The page's one status line. */
export class StatusLine {
  readonly element = h('p', {
    class: 'status',
    'data-testid': 'status',
    role: 'status',
    'aria-live': 'polite',
  });
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Says something that went well (cleared after a while). */
  info(text: string): void {
    this.#show(text, 'info');
  }

  /** Says something that went wrong (kept until the next message). */
  error(text: string): void {
    this.#show(text, 'error');
  }

  /** Clears the line (the page moved on). */
  clear(): void {
    clearTimeout(this.#timer);
    this.element.textContent = '';
    delete this.element.dataset.tone;
  }

  #show(text: string, tone: 'info' | 'error'): void {
    clearTimeout(this.#timer);
    this.element.textContent = text;
    this.element.dataset.tone = tone;
    if (tone === 'info') {
      this.#timer = setTimeout(() => {
        this.element.textContent = '';
        delete this.element.dataset.tone;
      }, 8000);
    }
  }
}
