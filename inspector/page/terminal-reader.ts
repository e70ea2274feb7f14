/**
 * The terminal emulator's reader (`terminal-screen.ts` is the screen it drives): a terminal program's
 * output, character by character, read as xterm's (VT100/ANSI) control language — printable characters,
 * C0 controls, `ESC` sequences and `CSI` sequences with their parameters — each handed to the screen.
 * What the screen has no use for is read to its end and dropped here, never shown: OSC strings (a title,
 * a working folder), character set designations (UTF-8 throughout), CSI sequences with intermediates.
 */

/** A CSI sequence's marker before its parameters (`ESC [ ? 25 h`): `''` when there is none. */
export type CsiPrefix = '' | '?' | '>' | '=';

/** What the reader hands on, in the order the program wrote it. */
export interface SequenceHandlers {
  /** A character to draw (from U+0020, DEL aside). */
  print(ch: string): void;
  /** A C0 control other than `ESC` (`\r`, `\n`, `\b`, `\t`, BEL, …), or DEL. */
  control(ch: string): void;
  /** `ESC` and its final character, other than those that open a CSI, an OSC or a character set. */
  escape(final: string): void;
  /** `ESC [`, its parameters (an empty one is 0, `:` separates as `;`) and its final character. */
  csi(final: string, params: readonly number[], prefix: CsiPrefix): void;
}

type ReaderState = 'ground' | 'escape' | 'csi' | 'osc' | 'osc-escape' | 'charset';

/** Characters of a CSI's parameters kept: a longer run is cut there (no program sends one). */
const MAX_CSI_PARAMS = 64;

/**
 * Reads a terminal program's output into `handlers`' calls, a sequence split across writes included.
 *
 * @example
 * ```ts
 * const reader = new TerminalReader(handlers);
 * reader.read('\x1b[1;3'); // nothing yet
 * reader.read('2mok'); // handlers.csi('m', [1, 32], ''), then print('o'), print('k')
 * ```
 */
export class TerminalReader {
  readonly #handlers: SequenceHandlers;
  #state: ReaderState = 'ground';
  #params = '';

  constructor(handlers: SequenceHandlers) {
    this.#handlers = handlers;
  }

  /** Reads the program's output (already decoded from UTF-8). */
  read(text: string): void {
    for (const ch of text) this.#feed(ch);
  }

  #feed(ch: string): void {
    switch (this.#state) {
      case 'ground':
        this.#ground(ch);
        return;
      case 'escape':
        this.#escape(ch);
        return;
      case 'csi':
        if (ch >= '@' && ch <= '~') {
          this.#state = 'ground';
          this.#csi(ch, this.#params);
        } else if (this.#params.length < MAX_CSI_PARAMS) {
          this.#params += ch;
        }
        return;
      case 'osc':
        if (ch === '\x07') this.#state = 'ground';
        else if (ch === '\x1b') this.#state = 'osc-escape';
        return;
      case 'osc-escape':
        this.#state = ch === '\\' ? 'ground' : 'osc';
        return;
      case 'charset':
        this.#state = 'ground'; // the character set named is not changed: UTF-8 throughout
        return;
    }
  }

  #ground(ch: string): void {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0x20 && code !== 0x7f) this.#handlers.print(ch);
    else if (ch === '\x1b') this.#state = 'escape';
    else this.#handlers.control(ch);
  }

  #escape(ch: string): void {
    this.#state = 'ground';
    switch (ch) {
      case '[':
        this.#state = 'csi';
        this.#params = '';
        return;
      case ']':
        this.#state = 'osc'; // a title, a working folder: read to its end, not shown
        return;
      case '(':
      case ')':
      case '*':
      case '+':
        this.#state = 'charset';
        return;
      default:
        this.#handlers.escape(ch);
    }
  }

  #csi(final: string, text: string): void {
    const first = text.charAt(0);
    const prefix: CsiPrefix = first === '?' || first === '>' || first === '=' ? first : '';
    const body = text.slice(prefix.length);
    if (/[^0-9;:]/.test(body)) return; // intermediates we do not speak
    const params = body === '' ? [] : body.split(/[;:]/).map((part) => (part === '' ? 0 : Number(part)));
    this.#handlers.csi(final, params, prefix);
  }
}
