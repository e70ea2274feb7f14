/**
 * sandboxd's files API (`/v1/files/...`) through `Files` on a local daemon (root) whose commands run as
 * uid 1000: round trips of text, bytes and streams, one file or many, parents made, listing by depth,
 * rename and remove, typed errors (no space on a real small tmpfs),
 * what is not a regular file refused, hostile paths refused, the user's permissions, never sandboxd's,
 * applying, and no helper process outliving its call.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { Commands } from '../../../sdk/commands.js';
import { Files } from '../../../sdk/files.js';
import { codeOf, FILES_HELPER_MARKER, startFilesDaemon, type FilesDaemon } from '../support/files-daemon.js';
import type { LocalSandboxd } from '../support/sandboxd.js';

let world: FilesDaemon;
let root: string;
let home: string;
let daemon: LocalSandboxd;
let files: Files;
let commands: Commands;

beforeAll(async () => {
  world = await startFilesDaemon('sdk-files-');
  ({ root, home, daemon, files, commands } = world);
});

afterAll(async () => {
  await world.stop();
});

describe('files', () => {
  it('round-trips text and bytes, making parents, as the sandbox user', async () => {
    const info = await files.write(`${home}/a/b/c/notes.txt`, 'héllo\nwörld');
    expect(info).toMatchObject({ name: 'notes.txt', type: 'file', size: 13, uid: 1000, gid: 1000 });
    expect(await files.read(`${home}/a/b/c/notes.txt`)).toBe('héllo\nwörld');
    expect(statSync(`${home}/a/b`).uid).toBe(1000);

    const bytes = new Uint8Array(256).map((_, i) => i);
    await files.write(`${home}/bin.dat`, bytes);
    expect(await files.read(`${home}/bin.dat`, { format: 'bytes' })).toEqual(bytes);
    expect(readFileSync(`${home}/bin.dat`)).toEqual(Buffer.from(bytes));
  });

  it('streams a larger file both ways', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < 8; i++) yield chunk;
      })(),
    );
    expect((await files.write(`${home}/big.bin`, source)).size).toBe(8 * chunk.length);
    const body = await buffer(await files.read(`${home}/big.bin`, { format: 'stream' }));
    expect(body.length).toBe(8 * chunk.length);
    expect(body.every((b) => b === 7)).toBe(true);
    expect(await files.read(`${home}/empty`, { format: 'text' }).catch(() => 'missing')).toBe('missing');
    await files.write(`${home}/empty`, '');
    expect(await files.read(`${home}/empty`)).toBe('');
  });

  it('lists by depth, tells info and existence, makes directories', async () => {
    await files.write(`${home}/tree/x/y/z.txt`, 'z');
    await files.write(`${home}/tree/top.txt`, 'top');
    const one = await files.list(`${home}/tree`);
    expect(one.map((e) => [e.name, e.type]).sort()).toEqual([
      ['top.txt', 'file'],
      ['x', 'dir'],
    ]);
    const deep = await files.list(`${home}/tree`, { depth: 3 });
    expect(deep.map((e) => e.path).sort()).toEqual(
      ['top.txt', 'x', 'x/y', 'x/y/z.txt'].map((p) => `${home}/tree/${p}`),
    );
    expect(await files.exists(`${home}/tree/top.txt`)).toBe(true);
    expect(await files.exists(`${home}/tree/nope`)).toBe(false);
    expect((await files.getInfo(`${home}/tree/x`)).type).toBe('dir');
    expect(await files.makeDir(`${home}/made/deep`)).toBe(true);
    expect(await files.makeDir(`${home}/made/deep`)).toBe(false);
    await commands.run(`ln -s tree/top.txt ${home}/link`);
    expect(await files.getInfo(`${home}/link`)).toMatchObject({
      type: 'symlink',
      symlinkTarget: 'tree/top.txt',
    });
  });

  it('renames and removes', async () => {
    await files.write(`${home}/r/one.txt`, '1');
    expect((await files.rename(`${home}/r/one.txt`, `${home}/r/two.txt`)).name).toBe('two.txt');
    expect(await files.exists(`${home}/r/one.txt`)).toBe(false);
    expect(await files.read(`${home}/r/two.txt`)).toBe('1');
    await files.remove(`${home}/r`);
    expect(await files.exists(`${home}/r`)).toBe(false);
    expect(await codeOf(files.remove(`${home}/r`))).toBe('file_not_found');
  });

  it('types not found, is a directory and not a directory', async () => {
    expect(await codeOf(files.read(`${home}/missing.txt`))).toBe('file_not_found');
    expect(await codeOf(files.getInfo(`${home}/missing.txt`))).toBe('file_not_found');
    expect(await codeOf(files.list(`${home}/missing`))).toBe('file_not_found');
    await files.makeDir(`${home}/adir`);
    expect(await codeOf(files.read(`${home}/adir`))).toBe('is_a_directory');
    expect(await codeOf(files.write(`${home}/adir`, 'x'))).toBe('is_a_directory');
    await files.write(`${home}/afile`, 'x');
    expect(await codeOf(files.list(`${home}/afile`))).toBe('not_a_directory');
    // A file where a parent should be, right above the path or further up.
    expect(await codeOf(files.write(`${home}/afile/under`, 'x'))).toBe('not_a_directory');
    expect(await codeOf(files.write(`${home}/afile/a/b`, 'x'))).toBe('not_a_directory');
    expect(await codeOf(files.makeDir(`${home}/afile`))).toBe('not_a_directory');
    expect(await codeOf(files.makeDir(`${home}/afile/sub`))).toBe('not_a_directory');
  });

  it("applies the user's permissions, never sandboxd's (root's)", async () => {
    // Root can read all of these; uid 1000 cannot.
    expect(await codeOf(files.read('/proc/1/environ'))).toBe('permission_denied');
    expect(await codeOf(files.read('/etc/shadow'))).toBe('permission_denied');
    expect(await codeOf(files.read(`/proc/${String(daemon.pid)}/environ`))).toBe('permission_denied');
    expect(await codeOf(files.write('/etc/sdk-files-planted', 'x'))).toBe('permission_denied');
    expect(await codeOf(files.remove('/etc/hostname'))).toBe('permission_denied');
    expect(await codeOf(files.makeDir('/root/planted'))).toBe('permission_denied');
    const secret = join(root, 'root-only');
    writeFileSync(secret, 'root only', { mode: 0o600 });
    expect(await codeOf(files.read(secret))).toBe('permission_denied');
    // `..` is no escape: the path resolves with the user's rights.
    expect(await codeOf(files.read(`${home}/../root-only`))).toBe('permission_denied');
    expect(await codeOf(files.rename(secret, `${home}/stolen`))).toBe('permission_denied');
    expect(readFileSync(secret, 'utf8')).toBe('root only');
    // What the user can read, it reads.
    expect(await files.read('/etc/hostname')).toBe(readFileSync('/etc/hostname', 'utf8'));
  });

  it('records each call as activity (its endpoint, never the path)', async () => {
    await files.getInfo(`${home}/tree`);
    const abort = new AbortController();
    const res = await request(`${daemon.url}/v1/events?after=0`, {
      headers: { authorization: `Bearer ${daemon.token}` },
      signal: abort.signal,
    });
    let seen = '';
    for await (const chunk of res.body) {
      seen += (chunk as Buffer).toString('utf8');
      if (seen.includes('"GET /v1/files/info"') && seen.includes('"PUT /v1/files/content"')) break;
    }
    abort.abort();
    expect(seen).toContain('"endpoint":"GET /v1/files/info"');
    expect(seen).not.toContain(`${home}/tree`);
  });

  it('refuses hostile paths before any call, and on the wire', async () => {
    for (const path of ['relative.txt', '', `${home}/a\0b`, `/${'x'.repeat(5000)}`]) {
      await expect(files.read(path)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(files.write(path, 'x')).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    for (const path of ['relative', '%2Fa%00b', '']) {
      const res = await request(`${daemon.url}/v1/files/content?path=${path}`, {
        headers: { authorization: `Bearer ${daemon.token}` },
      });
      expect(res.statusCode).toBe(400);
      expect(((await res.body.json()) as { code: string }).code).toBe('invalid_argument');
    }
    const res = await request(`${daemon.url}/v1/files/content?path=%2Fetc%2Fhostname`);
    expect(res.statusCode).toBe(401);
    await res.body.dump();
  });
});

/**
 * PUTs 1 MiB to `target`, then holds the body open until `written()` (checked every 20 ms, at most
 * `looks` times) says part of it reached the disk, and leaves mid-upload; what `written()` said then.
 */
async function uploadThenLeave(target: string, written: () => number, looks = Infinity): Promise<number> {
  const abort = new AbortController();
  const chunk = Buffer.alloc(256 * 1024, 5);
  let sent = 0;
  let partial = 0;
  let tries = 0;
  const leave = (): void => {
    partial = written();
    if (partial > 0 || ++tries > looks) abort.abort();
    else setTimeout(leave, 20);
  };
  const body = new Readable({
    read() {
      sent += chunk.length;
      if (sent <= 1024 * 1024) this.push(chunk);
      else leave();
    },
  });
  await request(`${daemon.url}/v1/files/content?path=${encodeURIComponent(target)}`, {
    method: 'PUT',
    body,
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/octet-stream' },
    signal: abort.signal,
  }).catch(() => undefined);
  return partial;
}

/** Pids of the resident files helper. */
const residentHelpers = (): number[] => world.helpers(FILES_HELPER_MARKER, 'serve');

/** The error `promise` rejects with. */
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'no error',
    (e: unknown) => e,
  );

describe('files, more', () => {
  it('answers JSON calls from one resident helper: concurrent calls, a helper killed, let go when idle', async () => {
    await files.write(`${home}/res/a.txt`, 'a');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? files.getInfo(`${home}/res/a.txt`) : files.list(`${home}/res`),
      ),
    );
    answers.forEach((answer, i) => {
      if (i % 2 === 0) expect(answer).toMatchObject({ name: 'a.txt', size: 1 });
      else expect(answer).toEqual([expect.objectContaining({ name: 'a.txt' })]);
    });
    expect(await codeOf(files.getInfo(`${home}/res/missing`))).toBe('file_not_found');
    const [pid] = residentHelpers();
    expect(residentHelpers()).toHaveLength(1);
    // The user's own code can end it (it is the user's process); the next call starts another.
    await commands.run(`kill -9 ${String(pid)}`);
    await expect.poll(() => residentHelpers().includes(pid ?? 0)).toBe(false);
    expect(await files.exists(`${home}/res/a.txt`)).toBe(true);
    expect(residentHelpers()).toHaveLength(1);
    // Without calls it is let go (10 s), leaving no process of the user behind.
    await expect.poll(residentHelpers, { timeout: 15_000, interval: 500 }).toEqual([]);
  });

  it('round-trips files on both sides of 64 KiB (whole through the resident helper, streamed above)', async () => {
    for (const size of [0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 300_000]) {
      const bytes = randomBytes(size);
      const path = `${home}/edge/${String(size)}.bin`;
      expect(await files.write(path, bytes)).toMatchObject({ size, uid: 1000, gid: 1000 });
      expect(readFileSync(path)).toEqual(bytes);
      expect(Buffer.from(await files.read(path, { format: 'bytes' }))).toEqual(bytes);
      const streamed = await buffer(await files.read(path, { format: 'stream' }));
      expect(streamed).toEqual(bytes);
    }
    // Written over: replaced whole, one at a time, whichever side each is on.
    await files.write(`${home}/edge/1.bin`, Buffer.alloc(100_000, 2));
    await files.write(`${home}/edge/300000.bin`, 'now small');
    expect(readFileSync(`${home}/edge/1.bin`)).toEqual(Buffer.alloc(100_000, 2));
    expect(readFileSync(`${home}/edge/300000.bin`, 'utf8')).toBe('now small');
    expect(readdirSync(`${home}/edge`).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('writes many files in one call, in order, after checking every entry', async () => {
    const written = await files.write([
      { path: `${home}/many/one.txt`, data: 'one' },
      { path: `${home}/many/deep/two.bin`, data: new Uint8Array([1, 2, 3]) },
      { path: `${home}/many/three.txt`, data: Readable.from([Buffer.from('th'), Buffer.from('ree')]) },
    ]);
    expect(written.map((e) => [e.name, e.size])).toEqual([
      ['one.txt', 3],
      ['two.bin', 3],
      ['three.txt', 5],
    ]);
    expect(readFileSync(`${home}/many/three.txt`, 'utf8')).toBe('three');
    expect(await files.write([])).toEqual([]);
    // One bad entry refuses the whole call before anything is written.
    for (const bad of [
      [
        { path: `${home}/many/ok.txt`, data: 'x' },
        { path: 'relative.txt', data: 'x' },
      ],
      [
        { path: `${home}/many/ok.txt`, data: 'x' },
        { path: `${home}/many/n.txt`, data: 42 },
      ],
      [{ path: `${home}/many/ok.txt` }],
    ]) {
      const error = await files.write(bad as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/^files\.write: entries\[\d\]/);
    }
    expect(existsSync(`${home}/many/ok.txt`)).toBe(false);
  });

  it('refuses to read or write what is not a regular file (a FIFO would block forever)', async () => {
    const fifo = join(home, 'pipe');
    execFileSync('mkfifo', ['-m', '0666', fifo]);
    chownSync(fifo, 1000, 1000);
    const socketPath = join(home, 'sock');
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    chmodSync(socketPath, 0o777);
    try {
      for (const path of [fifo, '/dev/zero', '/dev/null', socketPath]) {
        const read = await files.read(path).catch((e: unknown) => e);
        expect(read).toBeInstanceOf(InvalidArgumentError);
        expect(read).toMatchObject({ code: 'invalid_argument', message: 'files.read: not a regular file' });
        const write = await files.write(path, 'x').catch((e: unknown) => e);
        expect(write).toBeInstanceOf(InvalidArgumentError);
        expect(write).toMatchObject({ code: 'invalid_argument', message: 'files.write: not a regular file' });
      }
      expect(statSync(fifo).isFIFO()).toBe(true);
    } finally {
      server.close();
    }
  });

  it('exists: false when nothing is there, an error when the user may not look', async () => {
    writeFileSync(join(home, 'a-file'), 'x');
    expect(await files.exists(`${home}/a-file/below`)).toBe(false);
    expect(await files.exists(`${home}/nothing/below`)).toBe(false);
    // As E2B's `exists`: an unsearchable parent is not "absent", it is a permission error.
    const closed = join(root, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    writeFileSync(join(closed, 'inside'), 'x');
    expect(await codeOf(files.exists(join(closed, 'inside')))).toBe('permission_denied');
    expect(await codeOf(files.exists(join(closed, 'missing')))).toBe('permission_denied');
  });

  it('leaves no partial file behind when an upload breaks off', async () => {
    const target = `${home}/broken-off.bin`;
    // Once part of it is in the file, the client goes away mid-upload.
    const partial = await uploadThenLeave(target, () => (existsSync(target) ? statSync(target).size : 0));
    expect(partial).toBeGreaterThan(0);
    await expect.poll(() => existsSync(target)).toBe(false);
  });

  it('fails with no_space when the disk fills, leaving no partial file behind', async () => {
    const small = mkdtempSync(join(tmpdir(), 'sdk-files-small-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0777', 'sdk-files-small', small]);
    try {
      const big = Buffer.alloc(3 * 1024 * 1024, 1);
      expect(await codeOf(files.write(`${small}/big.bin`, big))).toBe('no_space');
      expect(existsSync(`${small}/big.bin`)).toBe(false);
      // A file that was there keeps its content: the new bytes went to a temporary file, now gone.
      await files.write(`${small}/kept.txt`, 'old content');
      expect(await codeOf(files.write(`${small}/kept.txt`, big))).toBe('no_space');
      expect(readFileSync(`${small}/kept.txt`, 'utf8')).toBe('old content');
      expect(readdirSync(small).sort()).toEqual(['kept.txt']);
      // The space is back for what fits.
      expect((await files.write(`${small}/fits.bin`, Buffer.alloc(512 * 1024))).size).toBe(512 * 1024);
    } finally {
      execFileSync('umount', [small]);
      rmSync(small, { recursive: true, force: true });
    }
  });
});

describe('files, against the sandbox code', () => {
  it('kills a resident helper the user stopped, failing its calls in time, and starts a fresh one', async () => {
    await files.getInfo(home);
    const [pid] = residentHelpers();
    expect(pid).toBeDefined();
    // As the sandbox user's code would: find the helper in /proc and stop it.
    await commands.run(`kill -STOP ${String(pid)}`);
    const started = Date.now();
    const [info, list] = await Promise.all([failureOf(files.getInfo(home)), failureOf(files.list(home))]);
    for (const error of [info, list]) {
      expect(error).toBeInstanceOf(SandboxError);
      expect(error).toMatchObject({ code: 'sandbox_error', message: 'the files helper did not answer' });
    }
    expect(Date.now() - started).toBeLessThan(25_000);
    await expect.poll(() => existsSync(`/proc/${String(pid)}`)).toBe(false);
    expect((await files.getInfo(home)).type).toBe('dir');
    expect(residentHelpers()).not.toContain(pid);
  });

  it('refuses a listing over 8 MiB rather than holding it in sandboxd', async () => {
    const dir = world.freshDir('huge-listing');
    // ~20,000 entries of ~450 bytes of JSON each: about 9 MiB.
    execFileSync('sh', ['-c', `cd ${dir} && seq -f "${'n'.repeat(200)}%05g" 1 20000 | xargs touch`]);
    const error = await failureOf(files.list(dir));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({
      code: 'invalid_argument',
      message: 'files.list: the listing is over 8 MiB; list a smaller depth or directory',
    });
    // What fits still lists, and the resident helper still answers.
    expect((await files.list(home)).map((e) => e.name)).toContain('huge-listing');
    rmSync(dir, { recursive: true });
  });

  it('a read whose bytes break off midway fails with SandboxError, as a stream or whole', async () => {
    execFileSync('truncate', ['-s', '256M', join(home, 'long.bin')]);
    chownSync(join(home, 'long.bin'), 1000, 1000);
    const readers = (): number[] => world.helpers(FILES_HELPER_MARKER, 'read');
    const stream = await files.read(`${home}/long.bin`, { format: 'stream' });
    const chunks = stream[Symbol.asyncIterator]();
    await chunks.next();
    const [reader] = readers();
    await commands.run(`kill -9 ${String(reader)}`);
    const broken = await (async () => {
      for (;;) if ((await chunks.next()).done === true) return 'ended';
    })().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(SandboxError);
    expect(broken).toMatchObject({
      code: 'sandbox_error',
      message: "files.read: the file's bytes broke off",
    });

    const whole = failureOf(files.read(`${home}/long.bin`, { format: 'bytes' }));
    // Once the helper has answered and sent some of the bytes (its reads, in /proc/<pid>/io).
    const sentSome = (): boolean =>
      readers().some((pid) => {
        try {
          return Number(/rchar: (\d+)/.exec(readFileSync(`/proc/${String(pid)}/io`, 'utf8'))?.[1]) > 1 << 20;
        } catch {
          return false;
        }
      });
    await expect.poll(sentSome, { interval: 2 }).toBe(true);
    await commands.run(`kill -9 ${String(readers()[0])}`);
    expect(await whole).toMatchObject({
      code: 'sandbox_error',
      message: "files.read: the file's bytes broke off",
    });
    expect(await whole).toBeInstanceOf(SandboxError);
    rmSync(join(home, 'long.bin'));
  });

  it('announces the size, and refuses text or bytes of a file over 1 GiB before reading it', async () => {
    await files.write(`${home}/sized.txt`, 'twelve bytes');
    const res = await request(
      `${daemon.url}/v1/files/content?path=${encodeURIComponent(`${home}/sized.txt`)}`,
      {
        headers: { authorization: `Bearer ${daemon.token}` },
      },
    );
    expect(res.headers['content-length']).toBe('12');
    expect(await res.body.text()).toBe('twelve bytes');
    // Costs the sandbox nothing: a sparse file.
    await commands.run(`truncate -s 1T ${home}/sparse.bin`);
    for (const read of [
      () => files.read(`${home}/sparse.bin`, { format: 'text' }),
      () => files.read(`${home}/sparse.bin`, { format: 'bytes' }),
    ]) {
      const error = await failureOf(read());
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({
        field: 'format',
        message: "files.read: format: the file is over 1 GiB; read it with format 'stream'",
      });
    }
    const stream = await files.read(`${home}/sparse.bin`, { format: 'stream' });
    expect(((await stream[Symbol.asyncIterator]().next()).value as Buffer).every((b) => b === 0)).toBe(true);
    stream.destroy();
    // A file that grows while it is read: the body is the size announced, no more.
    await files.write(`${home}/growing.bin`, Buffer.alloc(8 * 1024 * 1024, 1));
    const growing = await files.read(`${home}/growing.bin`, { format: 'stream' });
    const parts = growing[Symbol.asyncIterator]();
    let read = ((await parts.next()).value as Buffer).length;
    await commands.run(`head -c 4194304 /dev/zero >> ${home}/growing.bin`);
    for (let part = await parts.next(); part.done !== true; part = await parts.next()) {
      read += (part.value as Buffer).length;
    }
    expect(read).toBe(8 * 1024 * 1024);
    expect(statSync(`${home}/growing.bin`).size).toBe(12 * 1024 * 1024);
    await expect.poll(() => world.helpers(FILES_HELPER_MARKER, 'read')).toEqual([]);
    await files.remove(`${home}/sparse.bin`);
  });

  it('writes over a file atomically: a broken upload leaves the old content, the mode is kept', async () => {
    const target = `${home}/kept-on-break.bin`;
    await files.write(target, 'old content');
    const temps = (): string[] => readdirSync(home).filter((n) => n.startsWith('.kept-on-break.bin.sdk-'));
    // Once part of the upload is in the temporary file (or after 2 s without one), the client leaves.
    const partial = await uploadThenLeave(
      target,
      () => {
        const [temp] = temps();
        return temp === undefined ? 0 : statSync(join(home, temp)).size;
      },
      100,
    );
    expect(partial).toBeGreaterThan(0);
    await expect.poll(temps).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe('old content');

    await files.write(`${home}/tool.sh`, '#!/bin/sh\necho one\n');
    await commands.run(`chmod 0750 ${home}/tool.sh`);
    const info = await files.write(`${home}/tool.sh`, '#!/bin/sh\necho two\n');
    expect(info.mode).toBe(0o750);
    expect(statSync(`${home}/tool.sh`).mode & 0o7777).toBe(0o750);
    expect((await commands.run(`${home}/tool.sh`)).stdout).toBe('two\n');
    // A file the user made read-only is refused, as a write in place would be.
    await commands.run(`chmod 0444 ${home}/tool.sh`);
    expect(await codeOf(files.write(`${home}/tool.sh`, 'x'))).toBe('permission_denied');
    expect(readFileSync(`${home}/tool.sh`, 'utf8')).toBe('#!/bin/sh\necho two\n');
    // Where the user may not make a file beside it, the file is rewritten in place.
    const shared = join(root, 'shared.txt');
    writeFileSync(shared, 'old');
    chownSync(shared, 1000, 1000);
    expect((await files.write(shared, 'new')).size).toBe(3);
    expect(readFileSync(shared, 'utf8')).toBe('new');
  });
});
