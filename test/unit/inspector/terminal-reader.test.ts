/**
 * The inspector's terminal reader (inspector/page/terminal-reader.ts): a program's output read into
 * printable characters, controls, ESC and CSI sequences with their parameters, a sequence split across
 * writes included; OSC strings, character set designations and CSI sequences with intermediates read to
 * their end and dropped.
 */
import { describe, expect, it } from 'vitest';
import { TerminalReader } from '../../../inspector/page/terminal-reader.js';

/** A reader and what it handed on, one entry a call. */
function recording(): { reader: TerminalReader; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const reader = new TerminalReader({
    print: (ch) => calls.push(['print', ch]),
    control: (ch) => calls.push(['control', ch]),
    escape: (final) => calls.push(['escape', final]),
    csi: (final, params, prefix) => calls.push(['csi', final, [...params], prefix]),
  });
  return { reader, calls };
}

describe('terminal reader', () => {
  it('hands on characters, controls and ESC sequences, a sequence split across writes included', () => {
    const { reader, calls } = recording();
    reader.read('a\r\n\x7f\x1b7é\x1b[1;3');
    reader.read('2mb');
    expect(calls).toEqual([
      ['print', 'a'],
      ['control', '\r'],
      ['control', '\n'],
      ['control', '\x7f'],
      ['escape', '7'],
      ['print', 'é'],
      ['csi', 'm', [1, 32], ''],
      ['print', 'b'],
    ]);
  });

  it("reads a CSI's marker and parameters: an empty one is 0, ':' separates as ';'", () => {
    const { reader, calls } = recording();
    reader.read('\x1b[?1049h\x1b[>c\x1b[=1c\x1b[;5H\x1b[38:5:9m\x1b[K');
    expect(calls).toEqual([
      ['csi', 'h', [1049], '?'],
      ['csi', 'c', [], '>'],
      ['csi', 'c', [1], '='],
      ['csi', 'H', [0, 5], ''],
      ['csi', 'm', [38, 5, 9], ''],
      ['csi', 'K', [], ''],
    ]);
  });

  it('drops titles, character sets and CSI sequences with intermediates, read to their end', () => {
    const { reader, calls } = recording();
    reader.read('\x1b]0;user@box: ~\x07a\x1b]7;file://box/home\x1b\\b\x1b(Bc\x1b[2 qd\x1b[?>1he');
    expect(calls).toEqual([
      ['print', 'a'],
      ['print', 'b'],
      ['print', 'c'],
      ['print', 'd'],
      ['print', 'e'],
    ]);
  });

  it("keeps 64 characters of a CSI's parameters", () => {
    const { reader, calls } = recording();
    reader.read(`\x1b[${'1;'.repeat(40)}m`);
    expect(calls).toEqual([['csi', 'm', [...Array<number>(32).fill(1), 0], '']]);
  });
});
