/**
 * The terminal panel's emulator: a screen of cells fed with a terminal program's output, and what as
 * much of xterm's (VT100/ANSI) control language as a shell, its line editor and the usual tools speak
 * does to it — cursor moves, erasing, inserting and deleting characters and lines, a scroll region, the
 * alternate screen, SGR colours and attributes — with no markup anywhere: the panel draws its rows as
 * text nodes with class names. Sequences it does not know are dropped, never shown. Written here (not
 * xterm.js) because xterm.js's renderers inject `<style>` elements, which the page's
 * Content-Security-Policy (`style-src 'self'`) refuses. Reading the output into sequences is
 * `terminal-reader.ts`'; what SGR sets is `terminal-pen.ts`'.
 */
import { BLANK_PEN, styleOf, withRendition, type Pen } from './terminal-pen.js';
import { TerminalReader, type CsiPrefix } from './terminal-reader.js';

/** A cell: its character and its style as class names (`''` for the default look). */
export interface Cell {
  ch: string;
  style: string;
}

/** A run of cells of one style, for drawing. */
export interface Run {
  readonly text: string;
  readonly style: string;
}

/** Lines kept above the main screen once scrolled off it. */
const SCROLLBACK = 500;

/**
 * A terminal screen of `cols` × `rows`.
 *
 * @example
 * ```ts
 * const screen = new TerminalScreen(80, 24);
 * screen.write('\x1b[1;32mok\x1b[0m\r\n');
 * screen.rowRuns(0); // [{ text: 'ok', style: 'fg-2 bold' }, { text: '      …', style: '' }]
 * ```
 */
export class TerminalScreen {
  #cols: number;
  #rows: number;
  #lines: Cell[][];
  #saved: Cell[][] | null = null; // the main screen while the alternate one shows
  readonly #scrollback: Cell[][] = [];
  #row = 0;
  #col = 0;
  /** The cursor is past the last column: the next character wraps first (xterm's deferred wrap). */
  #wrapPending = false;
  #top = 0;
  #bottom: number;
  #pen: Pen = BLANK_PEN;
  #savedCursor = { row: 0, col: 0, pen: BLANK_PEN };
  readonly #reader = new TerminalReader({
    print: (ch) => {
      this.#print(ch);
    },
    control: (ch) => {
      this.#control(ch);
    },
    escape: (final) => {
      this.#escape(final);
    },
    csi: (final, params, prefix) => {
      this.#csi(final, params, prefix);
    },
  });
  /** Cursor shown (DECTCEM). */
  cursorVisible = true;

  constructor(cols: number, rows: number) {
    this.#cols = Math.max(1, cols);
    this.#rows = Math.max(1, rows);
    this.#bottom = this.#rows - 1;
    this.#lines = Array.from({ length: this.#rows }, () => this.#blankLine());
  }

  get cols(): number {
    return this.#cols;
  }

  get rows(): number {
    return this.#rows;
  }

  /** The cursor's position, from 0. */
  get cursor(): { readonly row: number; readonly col: number } {
    return { row: this.#row, col: Math.min(this.#col, this.#cols - 1) };
  }

  /** Lines scrolled off the top of the main screen, oldest first. */
  get scrollback(): readonly (readonly Cell[])[] {
    return this.#scrollback;
  }

  /** A row's text, trailing blanks cut. */
  rowText(row: number): string {
    return (this.#lines[row] ?? [])
      .map((cell) => cell.ch)
      .join('')
      .replace(/ +$/, '');
  }

  /** The screen's text, row by row (trailing blanks cut). */
  text(): string {
    return Array.from({ length: this.#rows }, (_, row) => this.rowText(row)).join('\n');
  }

  /** A row as runs of one style each. */
  rowRuns(row: number): Run[] {
    return runsOf(this.#lines[row] ?? []);
  }

  /** Changes the size: rows kept from the top (the cursor's row kept on screen), columns cut or padded. */
  resize(cols: number, rows: number): void {
    cols = Math.max(1, cols);
    rows = Math.max(1, rows);
    const fit = (line: Cell[]): Cell[] =>
      line.length >= cols ? line.slice(0, cols) : [...line, ...this.#blanks(cols - line.length)];
    // Rows above the cursor leave first when the screen gets shorter.
    while (this.#lines.length > rows && this.#row > 0) {
      const gone = this.#lines.shift();
      if (gone !== undefined && this.#saved === null) this.#keep(gone);
      this.#row -= 1;
    }
    this.#lines = this.#lines.slice(0, rows);
    this.#cols = cols;
    this.#rows = rows;
    this.#lines = this.#lines.map(fit);
    while (this.#lines.length < rows) this.#lines.push(this.#blankLine());
    if (this.#saved !== null) {
      this.#saved = this.#saved.slice(0, rows).map(fit);
      while (this.#saved.length < rows) this.#saved.push(this.#blankLine());
    }
    this.#top = 0;
    this.#bottom = rows - 1;
    this.#row = Math.min(this.#row, rows - 1);
    this.#col = Math.min(this.#col, cols - 1);
    this.#wrapPending = false;
  }

  /** Feeds the program's output (already decoded from UTF-8). */
  write(text: string): void {
    this.#reader.read(text);
  }

  /** A C0 control (DEL too): the cursor's moves; the rest draws nothing. */
  #control(ch: string): void {
    switch (ch) {
      case '\r':
        this.#col = 0;
        this.#wrapPending = false;
        return;
      case '\n':
      case '\x0b':
      case '\x0c':
        this.#lineFeed();
        return;
      case '\b':
        this.#col = Math.max(0, Math.min(this.#col, this.#cols - 1) - 1);
        this.#wrapPending = false;
        return;
      case '\t':
        this.#col = Math.min(this.#cols - 1, (Math.floor(this.#col / 8) + 1) * 8);
        this.#wrapPending = false;
        return;
      default:
        return; // BEL and the other controls: nothing to draw
    }
  }

  #escape(final: string): void {
    switch (final) {
      case '7':
        this.#saveCursor();
        return;
      case '8':
        this.#restoreCursor();
        return;
      case 'D':
        this.#lineFeed();
        return;
      case 'E':
        this.#col = 0;
        this.#lineFeed();
        return;
      case 'M':
        this.#reverseIndex();
        return;
      case 'c':
        this.#reset();
        return;
      default:
        return; // keypad modes and the like
    }
  }

  #print(ch: string): void {
    if (this.#wrapPending) {
      this.#col = 0;
      this.#lineFeed();
      this.#wrapPending = false;
    }
    const line = this.#lines[this.#row];
    if (line !== undefined) line[this.#col] = { ch, style: styleOf(this.#pen) };
    if (this.#col === this.#cols - 1) this.#wrapPending = true;
    else this.#col += 1;
  }

  #lineFeed(): void {
    this.#wrapPending = false;
    if (this.#row === this.#bottom) this.#scrollUp(1);
    else if (this.#row < this.#rows - 1) this.#row += 1;
  }

  #reverseIndex(): void {
    if (this.#row === this.#top) this.#scrollDown(1);
    else if (this.#row > 0) this.#row -= 1;
  }

  /** Lines of the scroll region move up `count`; blank lines enter at its bottom. */
  #scrollUp(count: number): void {
    for (let i = 0; i < count; i++) {
      const [gone] = this.#lines.splice(this.#top, 1);
      // Only what leaves the whole main screen is kept to scroll back to.
      if (gone !== undefined && this.#top === 0 && this.#saved === null) this.#keep(gone);
      this.#lines.splice(this.#bottom, 0, this.#blankLine());
    }
  }

  #scrollDown(count: number): void {
    for (let i = 0; i < count; i++) {
      this.#lines.splice(this.#bottom, 1);
      this.#lines.splice(this.#top, 0, this.#blankLine());
    }
  }

  #keep(line: Cell[]): void {
    this.#scrollback.push(line);
    if (this.#scrollback.length > SCROLLBACK) this.#scrollback.shift();
  }

  #csi(final: string, params: readonly number[], prefix: CsiPrefix): void {
    const n = Math.max(1, params[0] ?? 1);
    this.#wrapPending = false;
    if (prefix === '?') {
      if (final === 'h' || final === 'l') this.#mode(params, final === 'h');
      return;
    }
    if (prefix !== '') return; // device attribute queries
    switch (final) {
      case 'A':
        this.#row = Math.max(this.#row >= this.#top ? this.#top : 0, this.#row - n);
        return;
      case 'B':
      case 'e':
        this.#row = Math.min(this.#row <= this.#bottom ? this.#bottom : this.#rows - 1, this.#row + n);
        return;
      case 'C':
      case 'a':
        this.#col = Math.min(this.#cols - 1, this.#col + n);
        return;
      case 'D':
        this.#col = Math.max(0, Math.min(this.#col, this.#cols - 1) - n);
        return;
      case 'E':
        this.#row = Math.min(this.#rows - 1, this.#row + n);
        this.#col = 0;
        return;
      case 'F':
        this.#row = Math.max(0, this.#row - n);
        this.#col = 0;
        return;
      case 'G':
      case '`':
        this.#col = Math.min(this.#cols - 1, n - 1);
        return;
      case 'd':
        this.#row = Math.min(this.#rows - 1, n - 1);
        return;
      case 'H':
      case 'f':
        this.#row = Math.min(this.#rows - 1, Math.max(1, params[0] ?? 1) - 1);
        this.#col = Math.min(this.#cols - 1, Math.max(1, params[1] ?? 1) - 1);
        return;
      case 'J':
        this.#eraseDisplay(params[0] ?? 0);
        return;
      case 'K':
        this.#eraseLine(params[0] ?? 0);
        return;
      case 'X':
        this.#blankCells(this.#row, this.#col, Math.min(this.#cols, this.#col + n));
        return;
      case 'P':
        this.#deleteChars(n);
        return;
      case '@':
        this.#insertChars(n);
        return;
      case 'L':
        if (this.#row >= this.#top && this.#row <= this.#bottom)
          this.#withRegionFrom(this.#row, () => this.#scrollDown(n));
        return;
      case 'M':
        if (this.#row >= this.#top && this.#row <= this.#bottom)
          this.#withRegionFrom(this.#row, () => this.#scrollUp(n));
        return;
      case 'S':
        this.#scrollUp(n);
        return;
      case 'T':
        this.#scrollDown(n);
        return;
      case 'r': {
        const top = Math.max(1, params[0] ?? 1) - 1;
        const bottom =
          Math.min(this.#rows, params[1] === undefined || params[1] === 0 ? this.#rows : params[1]) - 1;
        if (top < bottom) {
          this.#top = top;
          this.#bottom = bottom;
          this.#row = 0;
          this.#col = 0;
        }
        return;
      }
      case 'm':
        this.#pen = withRendition(this.#pen, params);
        return;
      case 's':
        this.#saveCursor();
        return;
      case 'u':
        this.#restoreCursor();
        return;
      default:
        return; // reports, tab stops, modes: nothing to draw
    }
  }

  /** Runs `change` with the scroll region's top moved to `row` (insert and delete lines). */
  #withRegionFrom(row: number, change: () => void): void {
    const top = this.#top;
    this.#top = row;
    change();
    this.#top = top;
    this.#col = 0;
  }

  #mode(params: readonly number[], on: boolean): void {
    for (const mode of params) {
      if (mode === 25) this.cursorVisible = on;
      if (mode === 47 || mode === 1047 || mode === 1049) this.#alternate(on, mode === 1049);
    }
  }

  /** Shows the alternate screen (blank) or the main one again, as full-screen programs ask. */
  #alternate(on: boolean, withCursor: boolean): void {
    if (on === (this.#saved !== null)) return;
    if (on) {
      if (withCursor) this.#saveCursor();
      this.#saved = this.#lines;
      this.#lines = Array.from({ length: this.#rows }, () => this.#blankLine());
    } else if (this.#saved !== null) {
      this.#lines = this.#saved;
      this.#saved = null;
      if (withCursor) this.#restoreCursor();
    }
    this.#top = 0;
    this.#bottom = this.#rows - 1;
  }

  #eraseDisplay(mode: number): void {
    if (mode === 0) {
      this.#eraseLine(0);
      for (let row = this.#row + 1; row < this.#rows; row++) this.#blankCells(row, 0, this.#cols);
    } else if (mode === 1) {
      this.#eraseLine(1);
      for (let row = 0; row < this.#row; row++) this.#blankCells(row, 0, this.#cols);
    } else {
      for (let row = 0; row < this.#rows; row++) this.#blankCells(row, 0, this.#cols);
    }
  }

  #eraseLine(mode: number): void {
    const col = Math.min(this.#col, this.#cols - 1);
    if (mode === 0) this.#blankCells(this.#row, col, this.#cols);
    else if (mode === 1) this.#blankCells(this.#row, 0, col + 1);
    else this.#blankCells(this.#row, 0, this.#cols);
  }

  #deleteChars(count: number): void {
    const line = this.#lines[this.#row];
    if (line === undefined) return;
    const col = Math.min(this.#col, this.#cols - 1);
    line.splice(col, Math.min(count, this.#cols - col));
    while (line.length < this.#cols) line.push(this.#blank());
  }

  #insertChars(count: number): void {
    const line = this.#lines[this.#row];
    if (line === undefined) return;
    const col = Math.min(this.#col, this.#cols - 1);
    line.splice(col, 0, ...this.#blanks(Math.min(count, this.#cols - col)));
    line.length = this.#cols;
  }

  #blankCells(row: number, from: number, to: number): void {
    const line = this.#lines[row];
    if (line === undefined) return;
    for (let col = from; col < to; col++) line[col] = this.#blank();
  }

  #saveCursor(): void {
    this.#savedCursor = { row: this.#row, col: this.#col, pen: this.#pen };
  }

  #restoreCursor(): void {
    this.#row = Math.min(this.#rows - 1, this.#savedCursor.row);
    this.#col = Math.min(this.#cols - 1, this.#savedCursor.col);
    this.#pen = this.#savedCursor.pen;
    this.#wrapPending = false;
  }

  #reset(): void {
    this.#saved = null;
    this.#lines = Array.from({ length: this.#rows }, () => this.#blankLine());
    this.#row = 0;
    this.#col = 0;
    this.#top = 0;
    this.#bottom = this.#rows - 1;
    this.#pen = BLANK_PEN;
    this.#wrapPending = false;
    this.cursorVisible = true;
  }

  /** A blank cell in the current background (erasing paints the background, as xterm does). */
  #blank(): Cell {
    return { ch: ' ', style: this.#pen.bg === null ? '' : `bg-${String(this.#pen.bg)}` };
  }

  #blanks(count: number): Cell[] {
    return Array.from({ length: count }, () => this.#blank());
  }

  #blankLine(): Cell[] {
    return Array.from({ length: this.#cols }, () => ({ ch: ' ', style: '' }));
  }
}

/** Cells as runs of one style each. */
export function runsOf(cells: readonly Cell[]): Run[] {
  const runs: Run[] = [];
  let text = '';
  let style: string | null = null;
  for (const cell of cells) {
    if (cell.style !== style && style !== null) {
      runs.push({ text, style });
      text = '';
    }
    style = cell.style;
    text += cell.ch;
  }
  if (style !== null) runs.push({ text, style });
  return runs;
}
