/**
 * A sandbox's terminal (issue 28): "Open terminal" starts a login shell as the sandbox user
 * (`POST /v1/sandboxes/:id/terminals`), its output is followed (`…/terminals/:pid/events`, replayed
 * from its start on a reopened page) into the emulator (`terminal-screen.ts`) and drawn as text; keys
 * typed on the focused screen go to `…/input` in order, one call at a time; the size is changed with
 * "Resize"; "Close terminal" ends the shell. The pid is kept in sessionStorage per sandbox, so the
 * terminal is found again when the view is opened again, as a terminal survives its client, and once a
 * suspended sandbox runs again.
 */
import type { ProcessEvent } from '../../protocol/process-events.js';
import { ApiError, sandboxPath, type Api } from './api.js';
import { button, fill, h } from './dom.js';
import { follow, type Followed } from './ndjson.js';
import type { StatusLine } from './status.js';
import { TerminalScreen } from './terminal-screen.js';

const DEFAULT_SIZE = { cols: 100, rows: 28 };
/** Keys typed while a call is on its way go together in the next one. */
const MAX_INPUT_BYTES = 16 * 1024;

/** The bytes a key sends, or null for a key the terminal does not take. */
export function keyBytes(
  event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey'>,
): string | null {
  if (event.metaKey) return null;
  const named: Readonly<Record<string, string>> = {
    Enter: '\r',
    Backspace: '\x7f',
    Tab: '\t',
    Escape: '\x1b',
    ArrowUp: '\x1b[A',
    ArrowDown: '\x1b[B',
    ArrowRight: '\x1b[C',
    ArrowLeft: '\x1b[D',
    Home: '\x1b[H',
    End: '\x1b[F',
    Delete: '\x1b[3~',
    PageUp: '\x1b[5~',
    PageDown: '\x1b[6~',
  };
  const key = named[event.key];
  if (key !== undefined) return event.altKey ? `\x1b${key}` : key;
  if (Array.from(event.key).length !== 1) return null; // Shift, F1, Dead…
  if (event.ctrlKey) {
    const code = event.key.toUpperCase().charCodeAt(0);
    // Ctrl-@ … Ctrl-_ : the C0 control of the key.
    return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : null;
  }
  return event.altKey ? `\x1b${event.key}` : event.key;
}

/** Bytes as base64 (the input call's body). */
function base64Of(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Base64 as bytes. */
function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/** The terminal card of one sandbox. */
export class TerminalPanel {
  readonly element: HTMLElement;
  readonly #api: Api;
  readonly #status: StatusLine;
  readonly #sandboxId: string;
  readonly #screenElement = h('pre', { class: 'terminal', tabindex: 0, 'data-testid': 'terminal' });
  readonly #note = h('p', { class: 'muted small' });
  readonly #cols = h('input', { type: 'number', min: 1, max: 1000, value: DEFAULT_SIZE.cols, name: 'cols' });
  readonly #rows = h('input', { type: 'number', min: 1, max: 1000, value: DEFAULT_SIZE.rows, name: 'rows' });
  readonly #controls: HTMLElement;
  readonly #storageKey: string;
  #screen = new TerminalScreen(DEFAULT_SIZE.cols, DEFAULT_SIZE.rows);
  #decoder = new TextDecoder();
  #pid: number | null = null;
  #stream: Followed | null = null;
  #pending = '';
  #sending = false;
  #frame = 0;
  #destroyed = false;
  #state = 'running';

  constructor(api: Api, status: StatusLine, sandboxId: string) {
    this.#api = api;
    this.#status = status;
    this.#sandboxId = sandboxId;
    this.#storageKey = `sdk-terminal-${sandboxId}`;
    this.#controls = h('div', { class: 'terminal-controls' });
    this.element = h(
      'section',
      { class: 'card', 'data-testid': 'terminal-panel' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Terminal'), this.#controls),
      this.#screenElement,
      this.#note,
    );
    this.#screenElement.addEventListener('keydown', (event) => {
      const bytes = keyBytes(event);
      if (bytes === null || this.#pid === null) return;
      event.preventDefault();
      this.#type(bytes);
    });
    this.#screenElement.addEventListener('paste', (event) => {
      const text = event.clipboardData?.getData('text') ?? '';
      if (text === '' || this.#pid === null) return;
      event.preventDefault();
      this.#type(text.replace(/\r?\n/g, '\r'));
    });
    const kept = Number(sessionStorage.getItem(this.#storageKey));
    if (Number.isSafeInteger(kept) && kept > 0) this.#attach(kept);
    else this.#draw();
  }

  /** The sandbox's state now: a terminal left while it was suspended is followed again once it runs. */
  setState(state: string): void {
    if (state === this.#state) return;
    this.#state = state;
    const kept = Number(sessionStorage.getItem(this.#storageKey));
    if (state === 'running' && this.#pid === null && Number.isSafeInteger(kept) && kept > 0)
      this.#attach(kept);
  }

  destroy(): void {
    this.#destroyed = true;
    this.#stream?.stop();
    cancelAnimationFrame(this.#frame);
  }

  #draw(): void {
    const open = this.#pid !== null;
    this.#screenElement.hidden = !open;
    if (open) this.#screenElement.dataset.pid = String(this.#pid);
    else delete this.#screenElement.dataset.pid;
    fill(
      this.#controls,
      ...(open
        ? [
            h('label', { class: 'small' }, 'cols ', this.#cols),
            h('label', { class: 'small' }, 'rows ', this.#rows),
            button('Resize', () => void this.#resize(), { 'data-action': 'resize-terminal' }),
            button('Close terminal', () => void this.#close(), { 'data-action': 'close-terminal' }),
          ]
        : [button('Open terminal', () => void this.#open(), { 'data-action': 'open-terminal' })]),
    );
    if (open) this.#render();
  }

  async #open(): Promise<void> {
    const size = this.#size();
    try {
      const { pid } = await this.#api.json<{ pid: number }>(sandboxPath(this.#sandboxId, '/terminals'), {
        method: 'POST',
        body: size,
      });
      if (this.#destroyed) return;
      this.#screen = new TerminalScreen(size.cols, size.rows);
      this.#attach(pid);
      this.#screenElement.focus();
    } catch (error) {
      this.#status.error(`Open terminal: ${error instanceof Error ? error.message : 'failed'}`);
    }
  }

  /** Follows terminal `pid`'s output from its start (what sandboxd kept of it). */
  #attach(pid: number): void {
    this.#pid = pid;
    sessionStorage.setItem(this.#storageKey, String(pid));
    this.#decoder = new TextDecoder();
    this.#note.textContent = 'Click the terminal to type in it.';
    let ended = false;
    this.#stream = follow<ProcessEvent>(this.#api, {
      path: (cursor) =>
        sandboxPath(
          this.#sandboxId,
          `/terminals/${String(pid)}/events${cursor === null ? '' : `?after=${String(cursor)}`}`,
        ),
      parse: (value) => value as ProcessEvent,
      cursorOf: (event) => ('seq' in event && event.seq !== undefined ? event.seq : null),
      onLine: (event) => {
        if (event.type === 'data') {
          this.#screen.write(this.#decoder.decode(bytesOf(event.data), { stream: true }));
          this.#schedule();
        } else if (event.type === 'end') {
          ended = true;
          this.#ended(
            `The terminal's shell ended (${event.exitCode === null ? String(event.signal) : `exit ${String(event.exitCode)}`}).`,
          );
        }
      },
      finished: () => ended,
      onFatal: (error) => {
        if (error.code === 'sandbox_suspended') {
          // The shell waits in the frozen sandbox: followed again once it runs (`setState`).
          this.#stream?.stop();
          this.#stream = null;
          this.#pid = null;
          this.#draw();
          this.#note.textContent = 'The sandbox is suspended: its terminal comes back here once it runs.';
          return;
        }
        this.#ended(`The terminal is gone (${error.code}: ${error.message}).`);
      },
    });
    this.#draw();
  }

  #ended(note: string): void {
    this.#stream?.stop();
    this.#stream = null;
    this.#pid = null;
    sessionStorage.removeItem(this.#storageKey);
    if (this.#destroyed) return;
    this.#draw();
    this.#note.textContent = note;
  }

  /** Sends what was typed, in order, one call at a time. */
  #type(bytes: string): void {
    this.#pending += bytes;
    if (!this.#sending) void this.#flush();
  }

  async #flush(): Promise<void> {
    this.#sending = true;
    while (this.#pending !== '' && this.#pid !== null && !this.#destroyed) {
      const chunk = this.#pending.slice(0, MAX_INPUT_BYTES / 4); // ≤ 4 UTF-8 bytes a character
      this.#pending = this.#pending.slice(chunk.length);
      try {
        await this.#api.request(sandboxPath(this.#sandboxId, `/terminals/${String(this.#pid)}/input`), {
          method: 'POST',
          body: { data: base64Of(chunk) },
        });
      } catch (error) {
        this.#pending = '';
        this.#status.error(`Terminal input: ${error instanceof ApiError ? error.message : 'not sent'}`);
      }
    }
    this.#sending = false;
  }

  #size(): { cols: number; rows: number } {
    const clamp = (input: HTMLInputElement, fallback: number): number => {
      const value = Math.trunc(Number(input.value));
      return Number.isFinite(value) && value >= 1 && value <= 1000 ? value : fallback;
    };
    return { cols: clamp(this.#cols, DEFAULT_SIZE.cols), rows: clamp(this.#rows, DEFAULT_SIZE.rows) };
  }

  async #resize(): Promise<void> {
    if (this.#pid === null) return;
    const size = this.#size();
    try {
      await this.#api.request(sandboxPath(this.#sandboxId, `/terminals/${String(this.#pid)}/resize`), {
        method: 'POST',
        body: size,
      });
      this.#screen.resize(size.cols, size.rows);
      this.#render();
      this.#screenElement.focus();
    } catch (error) {
      this.#status.error(`Resize terminal: ${error instanceof Error ? error.message : 'failed'}`);
    }
  }

  async #close(): Promise<void> {
    if (this.#pid === null) return;
    try {
      await this.#api.request(sandboxPath(this.#sandboxId, `/terminals/${String(this.#pid)}`), {
        method: 'DELETE',
      });
    } catch (error) {
      this.#status.error(`Close terminal: ${error instanceof Error ? error.message : 'failed'}`);
    }
  }

  /** Draws once per frame however much output came. */
  #schedule(): void {
    if (this.#frame !== 0 || this.#destroyed) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
    });
  }

  /** The screen as rows of text runs, the cursor a class on its cell. */
  #render(): void {
    const { row: cursorRow, col: cursorCol } = this.#screen.cursor;
    const rows: HTMLElement[] = [];
    for (let row = 0; row < this.#screen.rows; row++) {
      const line = h('div', { class: 'terminal-row', 'data-row': row });
      let col = 0;
      for (const run of this.#screen.rowRuns(row)) {
        const chars = Array.from(run.text);
        const cursorHere =
          this.#screen.cursorVisible &&
          row === cursorRow &&
          cursorCol >= col &&
          cursorCol < col + chars.length;
        if (cursorHere) {
          const at = cursorCol - col;
          if (at > 0) line.appendChild(h('span', { class: run.style }, chars.slice(0, at).join('')));
          line.appendChild(h('span', { class: `${run.style} cursor`.trim() }, chars[at] ?? ' '));
          if (at + 1 < chars.length)
            line.appendChild(h('span', { class: run.style }, chars.slice(at + 1).join('')));
        } else {
          line.appendChild(h('span', { class: run.style }, run.text));
        }
        col += chars.length;
      }
      rows.push(line);
    }
    fill(this.#screenElement, ...rows);
  }
}
