/**
 * `sbx.files` refuses malformed arguments with `InvalidArgumentError` before any call (the client here
 * fails the test if it is ever called), and `WatchHandle` delivers events in order, awaits an async
 * `onEvent`, reports the end through `onExit`, and after `stop()` says nothing more.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../rules/errors.js';
import { DaemonClient } from '../../sdk/daemon-client.js';
import { Files } from '../../sdk/files.js';
import { WatchHandle, type FilesystemEvent } from '../../sdk/files-watch.js';

let calls = 0;
const files = new Files(
  new DaemonClient({
    url: 'http://127.0.0.1:9',
    accessToken: 'token',
    beforeCall: () => {
      calls += 1;
      throw new Error('no call may be made');
    },
  }),
);

/** The InvalidArgumentError `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<InvalidArgumentError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  return error as InvalidArgumentError;
}

describe('files arguments', () => {
  it('refuses malformed paths and options before any call', async () => {
    const noop = (): void => undefined;
    for (const path of ['relative', '', '/a\0b', `/${'x'.repeat(4096)}`, 42 as never]) {
      await refusal(files.read(path));
      await refusal(files.write(path, 'x'));
      await refusal(files.list(path));
      await refusal(files.exists(path));
      await refusal(files.getInfo(path));
      await refusal(files.makeDir(path));
      await refusal(files.remove(path));
      await refusal(files.rename(path, '/ok'));
      await refusal(files.rename('/ok', path));
      await refusal(files.watchDir(path, noop));
    }
    await refusal(files.read('/a', { format: 'blob' as never }));
    await refusal(files.list('/a', { depth: 0 }));
    await refusal(files.list('/a', { depth: 17 }));
    await refusal(files.write('/a', 42 as never));
    await refusal(files.write('/a', null as never));
    expect((await refusal(files.watchDir('/a', 'nope' as never))).message).toBe(
      'files.watchDir: onEvent: must be a function',
    );
    await refusal(files.watchDir('/a', noop, { recursive: 'yes' as never }));
    await refusal(files.watchDir('/a', noop, { onExit: 1 as never }));
    await refusal(files.watchDir('/a', noop, { depth: 2 } as never));
    expect(calls).toBe(0);
  });

  it('checks every entry of a write of many before any call, naming the entry', async () => {
    const cases: [unknown, string][] = [
      [
        [
          { path: '/ok', data: 'x' },
          { path: 'rel', data: 'x' },
        ],
        'files.write: entries[1].path',
      ],
      [
        [
          { path: '/ok', data: 'x' },
          { path: '/ok2', data: 7 },
        ],
        'files.write: entries[1].data',
      ],
      [[{ path: '/ok', data: 'x' }, 'not an entry'], 'files.write: entries[1]'],
      ['/ok', 'files.write: data'],
    ];
    for (const [entries, prefix] of cases) {
      expect((await refusal(files.write(entries as never))).message.startsWith(prefix)).toBe(true);
    }
    const loose = files as unknown as { write(...args: unknown[]): Promise<unknown> };
    await refusal(loose.write([{ path: '/ok', data: 'x' }], 'extra'));
    expect(calls).toBe(0);
    // An empty list writes nothing and calls nothing.
    expect(await files.write([])).toEqual([]);
    expect(calls).toBe(0);
  });
});

/** An iterator over `lines`, then (with `fail`) an error, else the end. */
async function* feed(lines: unknown[], fail?: Error): AsyncGenerator {
  for (const line of lines) yield await Promise.resolve(line); // each line a turn later, as a stream's
  if (fail !== undefined) throw fail;
}

describe('WatchHandle', () => {
  it('passes events in order, awaiting an async onEvent, then onExit() when the stream ends', async () => {
    const seen: string[] = [];
    let exit: unknown = 'not called';
    const onExit = (error?: Error): void => {
      exit = error;
    };
    const events: FilesystemEvent[] = [
      { type: 'create', name: 'a' },
      { type: 'write', name: 'a' },
      { type: 'rename', name: 'a' },
    ];
    new WatchHandle(
      new AbortController(),
      feed(events),
      async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(`${event.type} ${event.name}`);
      },
      onExit,
    );
    await expect.poll(() => exit).toBeUndefined();
    expect(seen).toEqual(['create a', 'write a', 'rename a']);
  });

  it('ends with onExit(error) on a malformed line, a broken stream, or an onEvent that throws', async () => {
    const exits: unknown[] = [];
    const onExit = (error?: Error): void => void exits.push(error);
    const ok = (): void => undefined;
    new WatchHandle(new AbortController(), feed([{ type: 'moved', name: 'a' }]), ok, onExit);
    new WatchHandle(new AbortController(), feed([], new SandboxError('broke')), ok, onExit);
    const abort = new AbortController();
    new WatchHandle(
      abort,
      feed([{ type: 'create', name: 'a' }]),
      () => {
        throw new Error('callback failed');
      },
      onExit,
    );
    await expect.poll(() => exits.length).toBe(3);
    expect(exits.map((e) => (e as Error).message).sort()).toEqual([
      'broke',
      'callback failed',
      'malformed watch event from the sandbox daemon',
    ]);
    // The request of a watch whose callback failed is closed.
    expect(abort.signal.aborted).toBe(true);
  });

  it('stop() aborts the request, resolves once delivery ended, and does not call onExit', async () => {
    const abort = new AbortController();
    let exited = false;
    const endless = (async function* () {
      yield { type: 'create', name: 'a' };
      await new Promise((_, reject) =>
        abort.signal.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    })();
    const seen: FilesystemEvent[] = [];
    const handle = new WatchHandle(
      abort,
      endless,
      (e) => void seen.push(e),
      () => {
        exited = true;
      },
    );
    await expect.poll(() => seen.length).toBe(1);
    await handle.stop();
    expect(abort.signal.aborted).toBe(true);
    expect(exited).toBe(false);
  });
});
