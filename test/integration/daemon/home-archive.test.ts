/**
 * sandboxd's home archive (`GET`/`PUT /v1/home/archive`) on a local daemon whose commands run as uid
 * 1000: the archive streams with tar's exit status as its trailer, extraction keeps contents, modes and
 * symlinks, and refuses what tar refuses (`..`, device nodes) with nothing written outside the home.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ARCHIVE_EXIT_TRAILER,
  HOME_ARCHIVE_PATH,
  HOME_ARCHIVE_TYPE,
} from '../../../protocol/home-archive.js';
import { SandboxError } from '../../../rules/errors.js';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { startSandboxd, type LocalSandboxd } from '../support/sandboxd.js';

let root: string;
const daemons: LocalSandboxd[] = [];

/** A daemon on a fresh home owned by uid 1000, with its client and commands. */
async function world(name: string) {
  const home = join(root, name);
  execFileSync('mkdir', ['-m', '0750', home]);
  chownSync(home, 1000, 1000);
  const daemon = await startSandboxd(home);
  daemons.push(daemon);
  const client = new DaemonClient({ url: daemon.url, accessToken: daemon.token });
  return { home, daemon, client, commands: new Commands(client) };
}

/** A tar.gz made by Python's tarfile with members tar itself would never write (`spec`: a Python list). */
function craftedArchive(spec: string): Buffer {
  const script = `
import io, sys, tarfile
out = io.BytesIO()
with tarfile.open(fileobj=out, mode='w:gz') as t:
    for name, kind, extra in ${spec}:
        info = tarfile.TarInfo(name)
        info.type = kind
        data = b'planted'
        if kind == tarfile.SYMTYPE: info.linkname = extra
        if kind == tarfile.CHRTYPE: info.devmajor, info.devminor = 1, 3
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        t.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
sys.stdout.buffer.write(out.getvalue())
`;
  return execFileSync('python3', ['-c', script]);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'sdk-home-archive-'));
  execFileSync('chmod', ['0755', root]);
});

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  rmSync(root, { recursive: true, force: true });
});

describe('GET and PUT /v1/home/archive', () => {
  it('streams the home as gzip with exit status 0 in the trailer, and extracts it with contents, modes and links', async () => {
    const from = await world('from');
    await from.commands.run(
      'mkdir -p a/b && printf deep > a/b/c.txt && chmod 640 a/b/c.txt && printf run > run.sh && chmod 751 run.sh && ln -s a/b/c.txt link && mkdir ro && printf x > ro/f && chmod 555 ro',
    );
    const res = await request(`${from.daemon.url}${HOME_ARCHIVE_PATH}`, {
      headers: { authorization: `Bearer ${from.daemon.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(HOME_ARCHIVE_TYPE);
    const archive = Buffer.from(await res.body.arrayBuffer());
    expect(res.trailers[ARCHIVE_EXIT_TRAILER]).toBe('0');
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));

    const to = await world('to');
    await to.client.upload(HOME_ARCHIVE_PATH, Readable.from([archive]), HOME_ARCHIVE_TYPE, z.object({}));
    expect(readFileSync(join(to.home, 'a/b/c.txt'), 'utf8')).toBe('deep');
    expect(statSync(join(to.home, 'a/b/c.txt')).mode & 0o7777).toBe(0o640);
    expect(statSync(join(to.home, 'run.sh')).mode & 0o7777).toBe(0o751);
    expect(statSync(join(to.home, 'ro')).mode & 0o7777).toBe(0o555);
    expect(readlinkSync(join(to.home, 'link'))).toBe('a/b/c.txt');
    expect(statSync(join(to.home, 'a/b/c.txt')).uid).toBe(1000);
    // The home itself keeps its own owner and mode (`--no-overwrite-dir`).
    expect(statSync(to.home).mode & 0o7777).toBe(0o750);
  });

  it('ends with tar’s failure in the trailer when a file cannot be read', async () => {
    const { daemon, commands } = await world('unreadable');
    await commands.run('printf secret > locked && chmod 000 locked && printf fine > ok');
    const res = await request(`${daemon.url}${HOME_ARCHIVE_PATH}`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.arrayBuffer();
    expect(res.trailers[ARCHIVE_EXIT_TRAILER]).toBe('2');
  });

  it('refuses members outside the home and device nodes, writing nothing outside it', async () => {
    const { home, client } = await world('crafted');
    const escapes = craftedArchive(
      `[('../escaped', tarfile.REGTYPE, None), ('${root}/absolute', tarfile.REGTYPE, None), ('out', tarfile.SYMTYPE, '${root}'), ('out/through', tarfile.REGTYPE, None), ('kept', tarfile.REGTYPE, None)]`,
    );
    const refused = await client
      .upload(HOME_ARCHIVE_PATH, Readable.from([escapes]), HOME_ARCHIVE_TYPE, z.object({}))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SandboxError);
    expect((refused as Error).message).toBe('the home archive could not be extracted (tar ended with 2)');
    expect(existsSync(join(root, 'escaped'))).toBe(false);
    expect(existsSync(join(root, 'absolute'))).toBe(false);
    expect(existsSync(join(root, 'through'))).toBe(false);
    expect(readFileSync(join(home, root.slice(1), 'absolute'), 'utf8')).toBe('planted'); // `/` stripped
    const device = craftedArchive(`[('null', tarfile.CHRTYPE, None)]`);
    await expect(
      client.upload(HOME_ARCHIVE_PATH, Readable.from([device]), HOME_ARCHIVE_TYPE, z.object({})),
    ).rejects.toThrow('tar ended with 2');
    expect(existsSync(join(home, 'null'))).toBe(false);
  });

  it('answers a body that is no archive with sandbox_error, even a large one', async () => {
    const { client } = await world('garbage');
    const junk = Readable.from(
      (function* () {
        for (let i = 0; i < 64; i++) yield Buffer.alloc(1024 * 1024, i);
      })(),
    );
    await expect(client.upload(HOME_ARCHIVE_PATH, junk, HOME_ARCHIVE_TYPE, z.object({}))).rejects.toThrow(
      /could not be extracted \(tar ended with 2\)/,
    );
  });

  it('ends tar when the reader goes away mid-archive', async () => {
    const { daemon, commands } = await world('abandoned');
    await commands.run('head -c 64M /dev/urandom > big');
    const tars = (): string => {
      try {
        return execFileSync('pgrep', ['-u', '1000', '-f', `^tar --create .*${root}/abandoned`], {
          encoding: 'utf8',
        }).trim();
      } catch {
        return ''; // none
      }
    };
    const res = await request(`${daemon.url}${HOME_ARCHIVE_PATH}`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    await once(res.body, 'data');
    expect(tars()).not.toBe(''); // 64 MiB of noise takes tar about a second
    res.body.destroy(); // one chunk, then the connection goes
    await expect.poll(tars, { timeout: 5_000 }).toBe('');
    // No fault reached the last-resort handler, and the daemon serves on.
    expect(daemon.stderr()).toBe('');
    expect(daemon.running()).toBe(true);
  });
});
