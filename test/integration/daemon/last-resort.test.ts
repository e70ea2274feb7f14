/**
 * sandboxd's last-resort fault handler (`daemon/last-resort.ts`): one line per fault with name, code and
 * frames, never the message, and the process goes on. Checked on the function, and in a real Node
 * process that installs it on `process` (the built module, as the daemon runs it).
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeFault, installLastResort } from '../../../daemon/last-resort.js';

const SECRET = 'sk-planted-secret-0123456789abcdef';
const BUILT = fileURLToPath(new URL('../../../dist/daemon/last-resort.js', import.meta.url));

interface FaultLine {
  sandboxd: string;
  origin: string;
  name: string | null;
  code: string | number | null;
  frames: string[];
  thrown?: string;
}

const parse = (line: string): FaultLine => JSON.parse(line) as FaultLine;

class CodedError extends Error {
  override readonly name = 'CodedError';
  readonly code = 'ERR_PLANTED';
}

describe('describeFault', () => {
  it.each([
    ['a plain Error', () => new Error(`upstream said ${SECRET}`)],
    ['a TypeError', () => new TypeError(SECRET)],
    [
      'a message of many lines, some shaped like frames',
      () => new Error(`a\n    at ${SECRET} (x:1:1)\n${SECRET}`),
    ],
    ['a class that names itself after the stack was taken', () => new CodedError(`bad ${SECRET}`)],
    [
      'a message changed after the stack was taken',
      () => {
        const error = new Error(`first ${SECRET}`);
        error.message = 'second';
        return error;
      },
    ],
    [
      'a message emptied after the stack was taken',
      () => {
        const error = new Error(SECRET);
        error.message = '';
        return error;
      },
    ],
    ['a secret in the code', () => Object.assign(new Error('x'), { code: `code ${SECRET}` })],
    ['a thrown string', () => SECRET],
    ['a thrown object', () => ({ value: SECRET })],
  ])('%s: one line, no message text', (_, make) => {
    const line = describeFault('uncaughtException', make());
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain('planted');
    expect(parse(line)).toMatchObject({ sandboxd: 'fault', origin: 'uncaughtException' });
  });

  it('keeps the name, the code and the frames', () => {
    const error = Object.assign(new TypeError(`Cannot read ${SECRET}`), { code: 'ERR_X' });
    const line = parse(describeFault('unhandledRejection', error));
    expect(line).toMatchObject({ origin: 'unhandledRejection', name: 'TypeError', code: 'ERR_X' });
    expect(line.frames.length).toBeGreaterThan(0);
    expect(line.frames[0]).toMatch(/^at .*last-resort\.test\.ts:\d+:\d+\)?$/);
    expect(parse(describeFault('uncaughtException', new CodedError(SECRET)))).toMatchObject({
      name: 'CodedError',
      code: 'ERR_PLANTED',
    });
  });

  it('keeps the frames of a Node error with a code', () => {
    let error: unknown;
    try {
      Buffer.alloc(-1);
    } catch (caught) {
      error = caught;
    }
    const line = parse(describeFault('uncaughtException', error));
    expect(line).toMatchObject({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    expect(line.frames.length).toBeGreaterThan(0);
  });
});

describe('installLastResort', () => {
  it('writes one line per fault of either kind, and a failing writer is not a new fault', () => {
    const source = new EventEmitter();
    const lines: string[] = [];
    installLastResort(source, (line) => lines.push(line));
    source.emit('uncaughtException', new Error(SECRET));
    source.emit('unhandledRejection', SECRET);
    expect(lines.map((line) => parse(line).origin)).toEqual(['uncaughtException', 'unhandledRejection']);
    expect(lines.join('')).not.toContain(SECRET);

    const failing = new EventEmitter();
    installLastResort(failing, () => {
      throw new Error('stderr is gone');
    });
    expect(() => failing.emit('uncaughtException', new Error(SECRET))).not.toThrow();
  });

  it('in a real process: faults are logged without the secret and the process keeps running', async () => {
    const script = `
      import { installLastResort } from ${JSON.stringify(BUILT)};
      installLastResort(process, (line) => process.stderr.write(line));
      const secret = ${JSON.stringify(SECRET)};
      setTimeout(() => { throw new Error('header value ' + secret); }, 10);
      setTimeout(() => { void Promise.reject(new TypeError(secret)); }, 20);
      setTimeout(() => { process.stdout.write('still serving'); }, 200);
    `;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, out, err) => {
        if (error === null) resolve({ stdout: out, stderr: err });
        else reject(new Error(`exited: ${String(error.code)}; stderr: ${err}`));
      });
    });
    expect(stdout).toBe('still serving');
    expect(stderr).not.toContain(SECRET);
    const lines = stderr.trimEnd().split('\n').map(parse);
    expect(lines).toMatchObject([
      { origin: 'uncaughtException', name: 'Error' },
      { origin: 'unhandledRejection', name: 'TypeError' },
    ]);
    expect(lines[0]?.frames.length).toBeGreaterThan(0);
  });
});
