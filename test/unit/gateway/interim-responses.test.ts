import { describe, expect, it } from 'vitest';
import { InterimResponseFilter, interimHeadLength } from '../../../gateway/interim-responses.js';

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const HINTS = 'HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n';
const FINAL = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi';

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** Feeds `pieces` to a filter as successive reads; what the parser would have read. */
function readThrough(filter: InterimResponseFilter, pieces: readonly string[]): string {
  return pieces.map((piece) => filter.filter(bytes(piece))?.toString('latin1') ?? '').join('');
}

describe('interimHeadLength', () => {
  it.each([
    [CONTINUE, CONTINUE.length],
    [HINTS + FINAL, HINTS.length],
    ['HTTP/1.0 102\r\n\r\n', 16],
    ['HTTP/1.1 199 Whatever\r\nx: 1\r\n\r\nrest', 31],
  ])('measures a complete interim head: %j', (text, length) => {
    expect(interimHeadLength(bytes(text))).toBe(length);
  });

  it.each([
    '',
    'H',
    'HTTP/1.1 1',
    'HTTP/1.1 10',
    'HTTP/1.1 100',
    CONTINUE.slice(0, -1),
    CONTINUE.slice(0, -2),
  ])('needs more bytes for a prefix of one: %j', (text) => expect(interimHeadLength(bytes(text))).toBe(0));

  it.each([
    ['a final response', FINAL],
    ['101 Switching Protocols', 'HTTP/1.1 101 Switching Protocols\r\n\r\n'],
    ['HTTP/2', 'HTTP/2.0 100 Continue\r\n\r\n'],
    ['a two-digit status', 'HTTP/1.1 10 \r\n\r\n'],
    ['a four-digit status', 'HTTP/1.1 1000 x\r\n\r\n'],
    ['bare LF line ends', 'HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\n\r\n'],
    ['a bare LF inside', 'HTTP/1.1 100 Continue\r\nx: 1\nHTTP/1.1 200 OK\r\n\r\n'],
    ['a bare CR', 'HTTP/1.1 100 Continue\rx\r\n\r\n'],
    ['CR LF LF', 'HTTP/1.1 100 Continue\r\n\nx'],
    ['a NUL', 'HTTP/1.1 100 Cont\u0000inue\r\n\r\n'],
    ['body bytes', 'hi'],
    ['an unterminated head over 16 KiB', `HTTP/1.1 100 Continue\r\nx: ${'a'.repeat(17_000)}`],
  ])('leaves anything else to undici: %s', (_, text) => {
    expect(interimHeadLength(bytes(text))).toBe(-1);
  });
});

describe('InterimResponseFilter', () => {
  it('drops 100 heads at the start of a response and passes other interims and the final one whole', () => {
    expect(readThrough(new InterimResponseFilter(), [CONTINUE + HINTS + FINAL])).toBe(HINTS + FINAL);
    expect(readThrough(new InterimResponseFilter(), [HINTS + CONTINUE + CONTINUE + FINAL])).toBe(
      HINTS + FINAL,
    );
    expect(readThrough(new InterimResponseFilter(), [CONTINUE, CONTINUE, FINAL])).toBe(FINAL);
  });

  it('drops them when they arrive a byte at a time, and passes a head only once it is complete', () => {
    const text = CONTINUE + HINTS + FINAL;
    const filter = new InterimResponseFilter();
    const reads = Array.from({ length: text.length }, (_, i) => filter.filter(bytes(text.charAt(i))));
    expect(reads.map((read) => read?.toString('latin1') ?? '').join('')).toBe(HINTS + FINAL);
    expect(reads[CONTINUE.length + HINTS.length - 1]?.toString('latin1')).toBe(HINTS);
  });

  it('holds a partial head back (the reader gets null), then releases it when it is not an interim', () => {
    const filter = new InterimResponseFilter();
    expect(filter.filter(bytes('HTTP/1.1 1'))).toBeNull();
    expect(filter.filter(null)).toBeNull();
    expect(filter.filter(bytes('01 Switching Protocols\r\n\r\n'))?.toString('latin1')).toBe(
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    );
  });

  it('never touches a response once its final head began, even bytes that look like a 100', () => {
    const head = 'HTTP/1.1 200 OK\r\ncontent-length: 25\r\n\r\n';
    expect(readThrough(new InterimResponseFilter(), [head, CONTINUE])).toBe(head + CONTINUE);
    expect(readThrough(new InterimResponseFilter(), [head + CONTINUE])).toBe(head + CONTINUE);
  });

  it('looks again only when the next request starts a response', () => {
    const filter = new InterimResponseFilter();
    expect(readThrough(filter, [CONTINUE + FINAL])).toBe(FINAL);
    expect(readThrough(filter, [CONTINUE])).toBe(CONTINUE); // no request: not a response start
    filter.responseStarts();
    expect(readThrough(filter, [HINTS, CONTINUE, FINAL])).toBe(HINTS + FINAL);
  });

  it('passes null and empty reads through', () => {
    const filter = new InterimResponseFilter();
    expect(filter.filter(null)).toBeNull();
    expect(filter.filter(Buffer.alloc(0))?.length).toBe(0);
  });
});
