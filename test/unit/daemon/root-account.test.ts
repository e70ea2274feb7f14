/**
 * sandboxd and the accounts (issue 25), without a sandbox: an in-process sandboxd on the host, where
 * there is no root to act as, answers `user: 'root'` on a command or any files call with
 * `invalid_argument` on `user` before starting anything, and a `user` naming neither account likewise;
 * the user's calls go on as before. And the files helper's own part of E2B's missing parents, run here
 * as the test's root: `parents` and `mkdir` with the user's `uid:gid` make each missing folder and hand
 * it to the user, leaving what was there as it was.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILES_HELPER } from '../../../daemon/files-program.js';
import { useDaemonWorld } from './daemon-world.js';

const TOKEN = 'unit-test-token-root-account-0123';
const daemon = useDaemonWorld({ name: 'root-account-unit-', token: TOKEN, runtime: '#!/bin/sh\nexit 0\n' });

/** A call's refusal: its code and its context (the field it names). */
async function refusal(response: Response): Promise<{ code: string; message: string; field: unknown }> {
  expect(response.status).toBe(400);
  const envelope = (await response.json()) as {
    code: string;
    message: string;
    context?: { field?: unknown };
  };
  return { code: envelope.code, message: envelope.message, field: envelope.context?.field };
}

describe('root outside a sandbox', () => {
  it('refuses a root command with invalid_argument on user, starting nothing (foreground or not)', async () => {
    for (const path of ['/v1/processes', '/v1/processes?stream=true']) {
      const refused = await refusal(await daemon.call('POST', path, { cmd: 'id -u', user: 'root' }));
      expect(refused).toEqual({
        code: 'invalid_argument',
        message: "commands.run: user: 'root' exists only inside a sandbox; this sandboxd runs on the host",
        field: 'user',
      });
    }
    expect(await (await daemon.call('GET', '/v1/processes')).json()).toEqual([]);
  });

  it('refuses a command whose user names neither account', async () => {
    for (const user of ['nobody', '', 0]) {
      const refused = await refusal(await daemon.call('POST', '/v1/processes', { cmd: 'id -u', user }));
      expect(refused.code).toBe('invalid_argument');
      expect(refused.message).toBe("user: must be 'user' or 'root'");
    }
    expect(await (await daemon.call('GET', '/v1/processes')).json()).toEqual([]);
  });

  it('refuses every files call as root with invalid_argument on user, and one naming neither account', async () => {
    const calls: [string, string, string, unknown?][] = [
      ['files.read', 'GET', '/v1/files/content?path=/etc/hostname'],
      ['files.write', 'PUT', '/v1/files/content?path=/tmp/sdk-root-account-never', 'x'],
      ['files.list', 'GET', '/v1/files/list?path=/'],
      ['files.getInfo', 'GET', '/v1/files/info?path=/'],
      ['files.watchDir', 'GET', '/v1/files/watch?path=/tmp'],
    ];
    for (const [call, method, path, body] of calls) {
      const root = await refusal(await daemon.call(method, `${path}&user=root`, body));
      expect(root).toEqual({
        code: 'invalid_argument',
        message: `${call}: user: 'root' exists only inside a sandbox; this sandboxd runs on the host`,
        field: 'user',
      });
      const neither = await refusal(await daemon.call(method, `${path}&user=nobody`, body));
      expect(neither).toEqual({
        code: 'invalid_argument',
        message: `${call}: user: must be 'user' or 'root'`,
        field: 'user',
      });
    }
    const bodies: [string, string, Record<string, unknown>][] = [
      ['files.makeDir', '/v1/files/dir', { path: '/tmp/sdk-root-account-never' }],
      ['files.remove', '/v1/files/remove', { path: '/tmp/sdk-root-account-never' }],
      ['files.rename', '/v1/files/rename', { from: '/tmp/a-never', to: '/tmp/b-never' }],
    ];
    for (const [call, path, body] of bodies) {
      const root = await refusal(await daemon.call('POST', path, { ...body, user: 'root' }));
      expect(root).toMatchObject({ code: 'invalid_argument', field: 'user' });
      expect(root.message).toBe(
        `${call}: user: 'root' exists only inside a sandbox; this sandboxd runs on the host`,
      );
      const neither = await refusal(await daemon.call('POST', path, { ...body, user: 'nobody' }));
      expect(neither).toMatchObject({ code: 'invalid_argument' });
      expect(neither.message).toBe(`${call}: user: must be 'user' or 'root'`);
    }
    expect(() => statSync('/tmp/sdk-root-account-never')).toThrow();
  });

  it("answers the user's files calls as before, with or without user=user", async () => {
    for (const query of ['', '&user=user']) {
      const answer = await daemon.call('GET', `/v1/files/info?path=/${query}`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ path: '/', type: 'dir' });
    }
  });
});

/** The files helper's resident program, run as this process's user (root here). */
class Helper {
  readonly #child = spawn(process.execPath, ['-e', FILES_HELPER, '--', 'serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  readonly #answers = new Map<number, (answer: unknown) => void>();
  #id = 0;

  constructor() {
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const answer = JSON.parse(line) as { id: number };
      this.#answers.get(answer.id)?.(answer);
    });
  }

  ask(op: string, a: string, b?: string): Promise<unknown> {
    const id = ++this.#id;
    const answered = new Promise<unknown>((resolve) => this.#answers.set(id, resolve));
    this.#child.stdin.write(`${JSON.stringify({ id, op, a, b })}\n`);
    return answered;
  }

  stop(): void {
    this.#child.stdin.end();
  }
}

describe("the files helper making the user's missing parents (as root)", () => {
  let dir: string;
  let helper: Helper;
  const owner = (path: string): [number, number] => {
    const { uid, gid } = statSync(path);
    return [uid, gid];
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-parents-'));
    helper = new Helper();
  });

  afterAll(() => {
    helper.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("parents makes a write's missing folders and hands each to the owner; what was there stays", async () => {
    expect(await helper.ask('parents', join(dir, 'path', 'to', 'file'), '1000:1000')).toEqual({
      id: 1,
      ok: {},
    });
    expect(owner(join(dir, 'path'))).toEqual([1000, 1000]);
    expect(owner(join(dir, 'path', 'to'))).toEqual([1000, 1000]);
    // The mode a mkdir of this process's own gives (the same umask): E2B's envd makes them 0755.
    mkdirSync(join(dir, 'reference'));
    expect(statSync(join(dir, 'path', 'to')).mode & 0o777).toBe(
      statSync(join(dir, 'reference')).mode & 0o777,
    );
    expect(owner(dir)).toEqual([0, 0]);
    expect(() => statSync(join(dir, 'path', 'to', 'file'))).toThrow(); // the file is the user's helper's
    // Parents that are there: nothing is made or changed.
    expect(await helper.ask('parents', join(dir, 'path', 'to', 'other'), '1000:1000')).toMatchObject({
      ok: {},
    });
  });

  it('mkdir with an owner makes the folder and its parents the owner’s; false once it is there', async () => {
    const made = join(dir, '0', 'deeper');
    expect(await helper.ask('mkdir', made, '1000:1000')).toMatchObject({ ok: { created: true } });
    expect(owner(join(dir, '0'))).toEqual([1000, 1000]);
    expect(owner(made)).toEqual([1000, 1000]);
    expect(await helper.ask('mkdir', made, '1000:1000')).toMatchObject({ ok: { created: false } });
  });

  it('without an owner the folders are its own; a file in the way is ENOTDIR', async () => {
    expect(await helper.ask('mkdir', join(dir, 'own', 'dir'))).toMatchObject({ ok: { created: true } });
    expect(owner(join(dir, 'own', 'dir'))).toEqual([0, 0]);
    writeFileSync(join(dir, 'plain'), 'x');
    expect(await helper.ask('parents', join(dir, 'plain', 'sub', 'file'), '1000:1000')).toMatchObject({
      errno: 'ENOTDIR',
    });
    expect(await helper.ask('mkdir', join(dir, 'plain', 'sub'), '1000:1000')).toMatchObject({
      errno: 'ENOTDIR',
    });
  });
});
