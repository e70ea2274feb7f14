/**
 * The inspector's terminal emulator (inspector/page/terminal-screen.ts) fed what a shell and its tools
 * write: text and wrapping, a line editor's redraws (backspace, delete and insert characters, erase to the
 * end of line), cursor moves, scrolling into the scrollback, colours as class names, titles and modes read
 * and dropped, the alternate screen, resizing. And, over random output, it never throws and keeps its
 * cursor and rows within the screen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TerminalScreen } from '../../../inspector/page/terminal-screen.js';

describe('terminal screen', () => {
  it('prints, wraps at the last column only when the next character comes, and scrolls', () => {
    const screen = new TerminalScreen(5, 3);
    screen.write('hello');
    expect(screen.cursor).toEqual({ row: 0, col: 4 });
    screen.write('!\r\nab\r\ncd\r\nef');
    const scrolled = screen.scrollback.map((line) =>
      line
        .map((cell) => cell.ch)
        .join('')
        .trimEnd(),
    );
    expect(scrolled).toEqual(['hello', '!']);
    expect([screen.rowText(0), screen.rowText(1), screen.rowText(2)]).toEqual(['ab', 'cd', 'ef']);
  });

  it("follows a line editor's redraws", () => {
    const screen = new TerminalScreen(20, 2);
    screen.write('$ echo hi');
    screen.write('\b\b\x1b[1P'); // delete one character at the cursor: "$ echo i"
    expect(screen.rowText(0)).toBe('$ echo i');
    screen.write('\x1b[1@X'); // insert a blank, then type over it
    expect(screen.rowText(0)).toBe('$ echo Xi');
    screen.write('\r\x1b[K$ ls\x1b[3D\x1b[C');
    expect(screen.rowText(0)).toBe('$ ls');
    expect(screen.cursor).toEqual({ row: 0, col: 2 });
    screen.write('\x1b[2;5H*\x1b[H#');
    expect([screen.rowText(0), screen.rowText(1)]).toEqual(['# ls', '    *']);
    screen.write('\x1b[2J');
    expect(screen.text()).toBe('\n');
  });

  it('draws colours and attributes as class names, and drops titles and modes', () => {
    const screen = new TerminalScreen(20, 1);
    screen.write('\x1b]0;user@box: ~\x07\x1b[?2004h\x1b[01;32muser\x1b[00m:\x1b[38;5;9m~\x1b[0m$');
    expect(screen.rowText(0)).toBe('user:~$');
    expect(screen.rowRuns(0).slice(0, 4)).toEqual([
      { text: 'user', style: 'fg-2 bold' },
      { text: ':', style: '' },
      { text: '~', style: 'fg-9' },
      { text: '$' + ' '.repeat(13), style: '' },
    ]);
  });

  it('keeps the main screen under the alternate one, and scrolls only inside a region', () => {
    const screen = new TerminalScreen(10, 4);
    screen.write('main\r\n');
    screen.write('\x1b[?1049h\x1b[Hfull screen');
    expect(screen.rowText(0)).toBe('full scree');
    screen.write('\x1b[?1049l');
    expect(screen.rowText(0)).toBe('main');
    expect(screen.cursor).toEqual({ row: 1, col: 0 });
    const region = new TerminalScreen(4, 4);
    region.write('a\r\nb\r\nc\r\nd\x1b[2;3r\x1b[3;1H\n');
    expect([0, 1, 2, 3].map((row) => region.rowText(row))).toEqual(['a', 'c', '', 'd']);
  });

  it('resizes, keeping the rows around the cursor', () => {
    const screen = new TerminalScreen(10, 4);
    screen.write('1\r\n2\r\n3\r\n4');
    screen.resize(3, 2);
    expect([screen.rowText(0), screen.rowText(1)]).toEqual(['3', '4']);
    expect(screen.cursor).toEqual({ row: 1, col: 1 });
    screen.resize(6, 3);
    expect(screen.rowRuns(2)).toEqual([{ text: '      ', style: '' }]);
  });

  it('never throws and stays within the screen, whatever the output', () => {
    const output = fc.array(
      fc.oneof(
        fc.string(),
        fc.constantFrom(
          '\x1b[',
          '\x1b]',
          '\x1b',
          '\r',
          '\n',
          '\b',
          '\t',
          '\x1b[?1049h',
          '\x1b[?1049l',
          '\x07',
        ),
        fc
          .tuple(
            fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 4 }),
            fc.constantFrom(...Array.from('ABCDEFGHJKLMPSTXdfmr@su')),
          )
          .map(([params, final]) => `\x1b[${params.join(';')}${final}`),
      ),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(
        output,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 12 }),
        (chunks, cols, rows) => {
          const screen = new TerminalScreen(cols, rows);
          for (const chunk of chunks) {
            screen.write(chunk);
            expect(screen.cursor.row).toBeGreaterThanOrEqual(0);
            expect(screen.cursor.row).toBeLessThan(rows);
            expect(screen.cursor.col).toBeLessThan(cols);
          }
          for (let row = 0; row < rows; row++) {
            expect(screen.rowRuns(row).reduce((sum, run) => sum + Array.from(run.text).length, 0)).toBe(cols);
          }
        },
      ),
    );
  });
});
