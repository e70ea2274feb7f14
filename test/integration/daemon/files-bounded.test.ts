/**
 * The files API's helpers are bounded (issue 24), on a local daemon (root) whose commands run as uid
 * 1000: parents are made one component at a time, so a link to /proc (where `mkdir` says ENOENT under a
 * directory that is there, and Node's recursive `mkdir` loops for ever) fails the call at once, typed;
 * a helper the user's code stopped (`kill -STOP`) ends when its client leaves, or at the deadline, which
 * fails a call still waiting with `sandbox_error`. No helper outlives its call.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxError } from '../../../rules/errors.js';
import { Commands } from '../../../sdk/commands.js';
import { Files } from '../../../sdk/files.js';
import { FILES_HELPER_MARKER, startFilesDaemon, type FilesDaemon } from '../support/files-daemon.js';
import type { LocalSandboxd } from '../support/sandboxd.js';

let world: FilesDaemon;
let home: string;
let daemon: LocalSandboxd;
let files: Files;
let commands: Commands;

beforeAll(async () => {
  world = await startFilesDaemon('sdk-files-bounded-');
  ({ home, daemon, files, commands } = world);
});

afterAll(async () => {
  // A helper a failed test left (spinning, or stopped) would outlive the daemon: ended by its pid.
  for (const pid of helpers()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await world.stop();
});

/**
 * Far beyond what any call here takes when bounded (milliseconds, or the 15 s deadline): a call still
 * unanswered by then never would be.
 */
const NEVER_MS = 45_000;

/** How long a wait for something sandboxd or the kernel does at once may take on a loaded machine. */
const SOON = { timeout: 10_000 };

/** What `promise` settles with (its error when it rejects), or `'no answer'` after `NEVER_MS`. */
async function outcomeOf(promise: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const never = new Promise((resolve) => {
    timer = setTimeout(() => resolve('no answer'), NEVER_MS);
  });
  try {
    return await Promise.race([
      promise.then(
        (v) => v,
        (e: unknown) => e,
      ),
      never,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Pids of files helpers among this file's sandboxd's descendants with every one of `args`. */
const helpers = (...args: string[]): number[] => world.helpers(FILES_HELPER_MARKER, ...args);

/** A process's state letter (`T` stopped), or `gone`. */
function stateOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return 'gone';
  }
}

/** The inode of the socket a process has as `fd` (a child's stdio are socket pairs). */
function socketOf(pid: number, fd: number): string {
  const link = readlinkSync(`/proc/${String(pid)}/fd/${String(fd)}`);
  const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
  if (inode === undefined) throw new Error(`fd ${String(fd)} of ${String(pid)} is ${link}, not a socket`);
  return inode;
}

/** The inode of the peer of the Unix socket `inode` (`0` once the peer closed it), from `ss`. */
function peerOf(inode: string): string | undefined {
  for (const line of execFileSync('ss', ['-xaH'], { encoding: 'utf8' }).split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[5] === inode) return fields[7];
  }
  return undefined;
}

/**
 * Starts a write of `target` (`send` uploads the body it is given) whose helper the user's code stops
 * (`kill -STOP`, as it may: the helper is the user's process) while it waits on the upload, so it cannot
 * have answered; then ends the upload, and returns once sandboxd has all of it (it has closed its end
 * of the helper's stdin).
 */
async function stoppedWrite<T>(
  target: string,
  send: (body: PassThrough) => Promise<T>,
): Promise<{ pid: number; outcome: Promise<T> }> {
  const body = new PassThrough();
  body.write('the first part, ');
  const outcome = send(body);
  await expect.poll(() => helpers('write', target), SOON).toHaveLength(1);
  const [pid = 0] = helpers('write', target);
  await commands.run(`kill -STOP ${String(pid)}`);
  await expect.poll(() => stateOf(pid), SOON).toBe('T');
  const stdin = socketOf(pid, 0);
  expect(peerOf(stdin)).not.toBe('0');
  body.end('and the rest');
  await expect.poll(() => peerOf(stdin), SOON).toBe('0');
  return { pid, outcome };
}

/** Records of this daemon's event stream, collected as they come until `stop`. */
function recordStream(): { seen: Record<string, unknown>[]; stop: () => void } {
  const abort = new AbortController();
  const seen: Record<string, unknown>[] = [];
  void (async () => {
    const res = await request(`${daemon.url}/v1/events?after=0`, {
      headers: { authorization: `Bearer ${daemon.token}` },
      signal: abort.signal,
    });
    let rest = '';
    for await (const chunk of res.body) {
      const lines = (rest + (chunk as Buffer).toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        try {
          seen.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // a keepalive
        }
      }
    }
  })().catch(() => undefined);
  return { seen, stop: () => abort.abort() };
}

describe('files helpers, bounded', () => {
  it('fails a write or makeDir under a link to /proc at once with file_not_found, leaving no helper', async () => {
    // As the sandbox's code may: /proc says ENOENT to any mkdir in it, though it is there.
    await commands.run(`ln -s /proc ${home}/dir`);
    const write = await outcomeOf(files.write(`${home}/dir/new/file`, 'x'));
    expect(write).toBeInstanceOf(SandboxError);
    expect(write).toMatchObject({
      code: 'file_not_found',
      message: 'files.write: no such file or directory',
    });
    await expect.poll(() => helpers('write'), SOON).toEqual([]);

    const made = await outcomeOf(files.makeDir(`${home}/dir/new/deeper`));
    expect(made).toBeInstanceOf(SandboxError);
    expect(made).toMatchObject({
      code: 'file_not_found',
      message: 'files.makeDir: no such file or directory',
    });
    // The resident helper answered (it is not spinning) and answers the next call.
    expect(await files.getInfo(`${home}/dir`)).toMatchObject({ type: 'symlink', symlinkTarget: '/proc' });

    // Parents are still made through a link to a directory, and with `.` and `..` in the path.
    await commands.run(`mkdir ${home}/real && ln -s real ${home}/via`);
    expect((await files.write(`${home}/via/a/./b/../c/file.txt`, 'c')).size).toBe(1);
    expect(readFileSync(`${home}/real/a/c/file.txt`, 'utf8')).toBe('c');
    expect(await files.makeDir(`${home}/via/made/deep`)).toBe(true);
    expect(existsSync(`${home}/real/made/deep`)).toBe(true);
    // A file in the way is not a directory; a dangling link, nothing there.
    await files.write(`${home}/plain`, 'p');
    expect(await outcomeOf(files.write(`${home}/plain/x/y`, 'x'))).toMatchObject({ code: 'not_a_directory' });
    expect(await outcomeOf(files.makeDir(`${home}/plain/x`))).toMatchObject({ code: 'not_a_directory' });
    await commands.run(`ln -s nowhere ${home}/dangling`);
    expect(await outcomeOf(files.write(`${home}/dangling/x`, 'x'))).toMatchObject({ code: 'file_not_found' });
    await expect.poll(() => helpers('write'), SOON).toEqual([]);
  });

  it('ends a write helper the user stopped once its client leaves, though the upload was whole', async () => {
    const target = `${home}/left-after-upload.txt`;
    const abort = new AbortController();
    const { pid, outcome } = await stoppedWrite(target, (body) =>
      request(`${daemon.url}/v1/files/content?path=${encodeURIComponent(target)}`, {
        method: 'PUT',
        body,
        headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/octet-stream' },
        signal: abort.signal,
      }).catch(() => undefined),
    );
    abort.abort();
    await outcome;
    // SIGTERM first (a stopped process holds it), SIGKILL 2 s later.
    await expect.poll(() => stateOf(pid), SOON).toBe('gone');
  });

  it('fails a write whose helper the user stopped with sandbox_error at the deadline, and ends it', async () => {
    const target = `${home}/stopped-at-deadline.txt`;
    const { pid, outcome } = await stoppedWrite(target, (body) => outcomeOf(files.write(target, body)));
    const failed = await outcome;
    expect(failed).toBeInstanceOf(SandboxError);
    expect(failed).toMatchObject({ code: 'sandbox_error', message: 'the files helper did not answer' });
    await expect.poll(() => stateOf(pid), SOON).toBe('gone');
  });

  it('ends a resident helper the user stopped at the deadline, though the client of its call left', async () => {
    await files.getInfo(home);
    const [pid = 0] = helpers('serve');
    expect(pid).toBeGreaterThan(0);
    await commands.run(`kill -STOP ${String(pid)}`);
    await expect.poll(() => stateOf(pid), SOON).toBe('T');
    const records = recordStream();
    try {
      // A marker in the records (an endpoint nothing else here calls), then the call that is left.
      const marker = await request(`${daemon.url}/v1/files-bounded-marker`, {
        headers: { authorization: `Bearer ${daemon.token}` },
      });
      expect(marker.statusCode).toBe(404);
      await marker.body.dump();
      const abort = new AbortController();
      const left = request(`${daemon.url}/v1/files/info?path=${encodeURIComponent(home)}`, {
        headers: { authorization: `Bearer ${daemon.token}` },
        signal: abort.signal,
      }).catch(() => undefined);
      // Once sandboxd has the call (recorded as it is routed, before it is asked of the helper).
      const infoCalls = (): number => {
        const at = records.seen.findLastIndex((r) => r['endpoint'] === 'no such endpoint');
        return at < 0
          ? 0
          : records.seen.slice(at).filter((r) => r['endpoint'] === 'GET /v1/files/info').length;
      };
      await expect.poll(infoCalls, SOON).toBe(1);
      abort.abort();
      await left;
    } finally {
      records.stop();
    }
    await expect.poll(() => stateOf(pid), { timeout: NEVER_MS }).toBe('gone');
    // The next call starts a fresh one.
    expect((await files.getInfo(home)).type).toBe('dir');
    expect(helpers('serve')).not.toContain(pid);
  });
});
