/**
 * `sbx.files` end to end: real sandboxes of the namespace driver behind a control plane. Every call acts
 * as the sandbox user (so a root-only file, `..`, or a symlink into sandboxd's own files is refused by
 * permissions), counts as activity for the idle policy, and streams: a 1 GiB round trip driven by a
 * separate SDK process keeps that process's memory far below the file's size.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import type { FilesystemEvent } from '../../../sdk/files-watch.js';
import { IdlePolicy } from '../../../sdk/idle-policy.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';

const execFileAsync = promisify(execFile);
const SDK = fileURLToPath(new URL('../../../dist/sdk/index.js', import.meta.url));
const HOME = '/home/user';
let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  await cp.stop();
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

/** Runs `body` with a fresh sandbox, killed afterwards whatever happened. */
async function withSandbox(
  options: Parameters<InProcessControlPlane['createSandbox']>[0],
  body: (sbx: Sandbox) => Promise<void>,
): Promise<void> {
  const sbx = await cp.createSandbox(options);
  try {
    await body(sbx);
  } finally {
    await sbx.kill();
  }
}

describe('sbx.files in a sandbox', () => {
  it('reads, writes, lists, tells, makes, renames, removes and watches, as the sandbox user', async () => {
    await withSandbox({}, async (sbx) => {
      const events: FilesystemEvent[] = [];
      const watch = await sbx.files.watchDir(HOME, (event) => void events.push(event), { recursive: true });
      const info = await sbx.files.write(`${HOME}/project/src/main.py`, 'print("hi")\n');
      expect(info).toMatchObject({ name: 'main.py', type: 'file', size: 12, uid: 1000, gid: 1000 });
      expect((await sbx.commands.run(`python3 ${HOME}/project/src/main.py`)).stdout).toBe('hi\n');
      await sbx.commands.run(`printf 'from code' > ${HOME}/project/out.txt`);
      expect(await sbx.files.read(`${HOME}/project/out.txt`)).toBe('from code');
      expect(await sbx.files.read(`${HOME}/project/out.txt`, { format: 'bytes' })).toEqual(
        new TextEncoder().encode('from code'),
      );
      const written = await sbx.files.write([
        { path: `${HOME}/project/a.txt`, data: 'a' },
        { path: `${HOME}/project/b.txt`, data: new Uint8Array([98]) },
      ]);
      expect(written.map((e) => e.path)).toEqual([`${HOME}/project/a.txt`, `${HOME}/project/b.txt`]);
      expect((await sbx.files.list(`${HOME}/project`)).map((e) => e.name).sort()).toEqual([
        'a.txt',
        'b.txt',
        'out.txt',
        'src',
      ]);
      expect((await sbx.files.list(`${HOME}/project`, { depth: 2 })).map((e) => e.name)).toContain('main.py');
      expect(await sbx.files.exists(`${HOME}/project/a.txt`)).toBe(true);
      expect(await sbx.files.exists(`${HOME}/project/zzz`)).toBe(false);
      expect(await sbx.files.getInfo(`${HOME}/project/src`)).toMatchObject({ type: 'dir', uid: 1000 });
      expect(await sbx.files.makeDir(`${HOME}/made/deeper`)).toBe(true);
      expect(await sbx.files.makeDir(`${HOME}/made/deeper`)).toBe(false);
      // A new folder is watched once its creation was seen (inotify watches folder by folder): a rename
      // into it before then would be seen as a remove here and a create there.
      await expect
        .poll(() => events.map((e) => `${e.type} ${e.name}`), { timeout: 30_000 })
        .toContain('create made/deeper');
      expect((await sbx.files.rename(`${HOME}/project/a.txt`, `${HOME}/made/a.txt`)).path).toBe(
        `${HOME}/made/a.txt`,
      );
      await sbx.files.remove(`${HOME}/project`);
      expect(await sbx.files.exists(`${HOME}/project`)).toBe(false);
      await expect
        .poll(() => events.map((e) => `${e.type} ${e.name}`))
        .toEqual(
          expect.arrayContaining([
            'create project',
            'create project/src/main.py',
            'create project/out.txt',
            'create made/deeper',
            'rename project/a.txt',
            'create made/a.txt',
            'remove project/src/main.py',
            'remove project',
          ]),
        );
      await watch.stop();
      // The helper ends with the watch (once sandboxd sees the stream closed, through the control plane's
      // hop): nothing of it is left running as the user.
      const helpers = async (): Promise<string> =>
        (
          await sbx.commands.run('ps -u user -o args= | grep -c "[s]andboxd files watch" || true')
        ).stdout.trim();
      await expect.poll(helpers, { timeout: 30_000 }).toBe('0');
    });
  });

  it('refuses what the user may not reach: root-only files, `..`, symlinks into sandboxd', async () => {
    await withSandbox({}, async (sbx) => {
      expect(await codeOf(sbx.files.read('/etc/shadow'))).toBe('permission_denied');
      expect(await codeOf(sbx.files.read(`${HOME}/../../etc/shadow`))).toBe('permission_denied');
      // pid 1 is the sandbox's init, the sandbox root's: its environment and descriptors are not the
      // user's. sandboxd has no pid in the sandbox at all.
      await sbx.commands.run(
        `ln -s /proc/1/environ ${HOME}/init-env && ln -s /proc/1/fd ${HOME}/daemon-fds && ` +
          `ln -s /opt/sdk/sandboxd.cjs ${HOME}/daemon-code`,
      );
      expect(await codeOf(sbx.files.read(`${HOME}/init-env`))).toBe('permission_denied');
      expect(await codeOf(sbx.files.list(`${HOME}/daemon-fds`))).toBe('permission_denied');
      expect(await codeOf(sbx.files.read(`${HOME}/daemon-fds/0`))).toBe('permission_denied');
      expect(await codeOf(sbx.files.watchDir(`${HOME}/daemon-fds`, () => undefined))).toBe(
        'permission_denied',
      );
      expect(await codeOf(sbx.files.write(`${HOME}/daemon-code`, 'planted'))).toBe('permission_denied');
      expect(await codeOf(sbx.files.write('/etc/planted', 'x'))).toBe('permission_denied');
      expect(await codeOf(sbx.files.remove('/opt/sdk/start.cjs'))).toBe('permission_denied');
      // The symlink itself is the user's: it is told as a link, its target named, nothing read.
      expect(await sbx.files.getInfo(`${HOME}/init-env`)).toMatchObject({
        type: 'symlink',
        symlinkTarget: '/proc/1/environ',
      });
      // Malformed paths never leave the SDK.
      await expect(sbx.files.read('etc/shadow')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(sbx.files.write(`${HOME}/a\0b`, 'x')).rejects.toBeInstanceOf(InvalidArgumentError);
    });
  });

  it('counts files calls as activity: a sandbox only called through its files API stays running', async () => {
    await withSandbox({ idlePolicy: new IdlePolicy({ maxIdleSeconds: 2 }) }, async (sbx) => {
      const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
      // A client of sandboxd alone, which never tells the control plane anything itself: the calls
      // reach the control plane as sandboxd's audit records.
      const direct = new DaemonClient({ url: daemonUrl, accessToken: sbx.accessToken });
      const end = Date.now() + 5_000; // more than twice the idle time
      while (Date.now() < end) {
        await direct.call('GET', `/v1/files/info?path=${encodeURIComponent(HOME)}`, z.unknown());
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(cp.plane.get(sbx.sandboxId).state).toBe('running');
      await expect
        .poll(() => cp.plane.get(sbx.sandboxId).state, { timeout: 10_000, interval: 100 })
        .toBe('suspended');
    });
  });

  it('round-trips 1 GiB streamed, hash for hash, with the SDK process memory flat', async () => {
    // /home is a tmpfs of half the sandbox's memory: room for the file.
    await withSandbox({ memoryMb: 3072 }, async (sbx) => {
      const size = 1024 * 2 ** 20;
      const script = `
        import { createHash, randomBytes } from 'node:crypto';
        import { Readable } from 'node:stream';
        import { Sandbox } from ${JSON.stringify(SDK)};
        const [id, url, token, size] = process.argv.slice(1);
        const sbx = await Sandbox.connect(id, { controlPlaneUrl: url, accessToken: token });
        const base = randomBytes(2 ** 20);
        const sent = createHash('sha256');
        async function* generate() {
          for (let i = 0; i < Number(size) / base.length; i++) {
            const chunk = Buffer.from(base);
            chunk.writeUInt32LE(i, 0);
            sent.update(chunk);
            yield chunk;
          }
        }
        const info = await sbx.files.write('${HOME}/big.bin', Readable.from(generate()));
        const received = createHash('sha256');
        let bytes = 0;
        for await (const chunk of await sbx.files.read('${HOME}/big.bin', { format: 'stream' })) {
          received.update(chunk);
          bytes += chunk.length;
        }
        console.log(JSON.stringify({ size: info.size, bytes, sent: sent.digest('hex'),
          received: received.digest('hex'), maxRssKiB: process.resourceUsage().maxRSS }));`;
      const { stdout } = await execFileAsync(
        process.execPath,
        ['--input-type=module', '-e', script, sbx.sandboxId, cp.url, sbx.accessToken, String(size)],
        { env: process.env },
      );
      const result = JSON.parse(stdout) as {
        size: number;
        bytes: number;
        sent: string;
        received: string;
        maxRssKiB: number;
      };
      expect(result.size).toBe(size);
      expect(result.bytes).toBe(size);
      expect(result.received).toBe(result.sent);
      expect(result.maxRssKiB * 1024).toBeLessThan(256 * 2 ** 20);
      // What landed in the sandbox is what was sent.
      const inside = await sbx.commands.run(`sha256sum ${HOME}/big.bin`);
      expect(inside.stdout.split(' ')[0]).toBe(result.sent);
      console.log(
        `1 GiB round trip: SDK process peak RSS ${String(Math.round(result.maxRssKiB / 1024))} MiB`,
      );
    });
  });
});
