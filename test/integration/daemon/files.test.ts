/**
 * sandboxd's files API (`/v1/files/...`) through `Files` on a local daemon (root) whose commands run as
 * uid 1000: round trips of text, bytes and streams, parents made, listing by depth, rename and remove,
 * typed errors, hostile paths refused, and the user's permissions, never sandboxd's, applying.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { Files } from '../../../sdk/files.js';
import { startSandboxd, type LocalSandboxd } from '../support/sandboxd.js';

let root: string;
let home: string;
let daemon: LocalSandboxd;
let files: Files;
let commands: Commands;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sdk-files-'));
  execFileSync('chmod', ['0755', root]);
  home = join(root, 'home');
  execFileSync('mkdir', ['-m', '0750', home]);
  chownSync(home, 1000, 1000);
  daemon = await startSandboxd(home);
  const client = new DaemonClient({ url: daemon.url, accessToken: daemon.token });
  files = new Files(client);
  commands = new Commands(client);
});

afterAll(async () => {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The SandboxError code `promise` rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SandboxError);
  return (error as SandboxError).code;
}

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
