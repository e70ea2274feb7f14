/**
 * Terminals (issue 28 item 2) in real sandboxes, both isolations: a login shell on a pseudo-terminal of
 * the sandbox's own (`tty` names it, `stty size` reads the size, a resize reaches the program as
 * SIGWINCH), input typed and echoed, Ctrl-C interrupting the foreground program, a second client (another
 * handle, as another process would) reattaching with the screen's recent output replayed, the terminal
 * surviving its first client and a pause and resume, driven by pid without a stream, a handle
 * disconnected, and kill ending it. And the operator's terminal
 * (the inspector's panel) through the control plane's API, which drives no process it did not open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Isolation } from '../../../protocol/control-plane-api.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { request } from 'undici';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';

/** A screen: the bytes a terminal showed, and a way to wait for text on it. */
class Screen {
  text = '';
  readonly #waiters = new Set<() => void>();
  readonly onData = (data: Uint8Array): void => {
    this.text += Buffer.from(data).toString('utf8');
    for (const wake of this.#waiters) wake();
  };

  /** Resolves once the screen shows `pattern` (after `from`). */
  async shows(pattern: RegExp, from = 0): Promise<RegExpExecArray> {
    for (;;) {
      const found = pattern.exec(this.text.slice(from));
      if (found !== null) return found;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
  }
}

describe.each<Isolation>(['namespace', 'gvisor'])('terminals (%s)', { timeout: 120_000 }, (isolation) => {
  let cp: InProcessControlPlane;
  let sbx: Sandbox;

  beforeAll(async () => {
    cp = await startControlPlane();
    sbx = await cp.createSandbox({ isolation });
  });

  afterAll(async () => {
    await sbx.kill().catch(() => undefined);
    await cp.stop();
  });

  it('runs a shell on a terminal of its own: input, echo, size, resize, Ctrl-C, exit status', async () => {
    const screen = new Screen();
    const term = await sbx.pty.create({ cols: 100, rows: 30, onData: screen.onData });
    await term.sendInput('tty; stty size; echo "[$TERM]"\n');
    await screen.shows(/\/dev\/pts\/\d+/);
    await screen.shows(/30 100/);
    await screen.shows(/\[xterm-256color\]/);
    // SIGWINCH reaches the foreground program: its trap prints the new size.
    await term.sendInput(
      `sh -c 'trap "stty size; exit 0" WINCH; echo waiting; while :; do sleep 0.1; done'\n`,
    );
    await screen.shows(/waiting\r?\n/);
    const mark = screen.text.length;
    await term.resize({ cols: 132, rows: 43 });
    await screen.shows(/43 132/, mark);
    // Ctrl-C interrupts the foreground command, the shell goes on. Each step waits for the screen: a
    // Ctrl-C flushes the terminal's unread input, so nothing is typed ahead of it or before the prompt.
    // "started" comes from the foreground job itself (not from the shell before it hands the terminal
    // over: a Ctrl-C in that moment reached the shell, and sleep ran on).
    let from = screen.text.length;
    await term.sendInput(`sh -c 'echo started; exec sleep 600'\n`);
    await screen.shows(/started\r?\n/, from); // the output, not the typed line ("started;")
    from = screen.text.length;
    await term.sendInput('\x03');
    await screen.shows(/\$ /, from); // the prompt again
    await term.sendInput('echo "after [$?]"\n');
    await screen.shows(/after \[130\]/);
    await term.sendInput('exit 7\n');
    expect(await term.wait()).toEqual({ exitCode: 7, signal: null });
    await expect(term.resize({ cols: 0, rows: 10 })).rejects.toMatchObject({ name: 'InvalidArgumentError' });
  });

  it('survives its client, is reattached from another handle with the screen replayed, and lives through a pause', async () => {
    const first = new Screen();
    const term = await sbx.pty.create({ onData: first.onData });
    await term.sendInput('echo "marker-$((6*7))"\n');
    await first.shows(/marker-42/);

    // Another client, as another process would: a connected handle and the terminal's pid.
    const other = await Sandbox.connect(sbx.sandboxId, {
      accessToken: sbx.accessToken,
      controlPlaneUrl: cp.url,
    });
    const second = new Screen();
    const again = await other.pty.connect(term.pid, { onData: second.onData });
    await second.shows(/marker-42/); // replayed
    expect((await other.commands.list()).find((p) => p.pid === term.pid)).toMatchObject({
      running: true,
      pty: true,
    });

    await sbx.pause();
    await other.connect(); // resumed
    await again.sendInput('echo "still-$((2+3))"\n');
    await second.shows(/still-5/);
    await first.shows(/still-5/); // the first client sees it too

    // By pid, with no handle's stream: typed, resized; a disconnected handle stops following it.
    again.disconnect();
    await expect(again.wait()).rejects.toMatchObject({ name: 'SandboxError' });
    const mark = first.text.length;
    await other.pty.resize(term.pid, { cols: 77, rows: 11 });
    await other.pty.sendInput(term.pid, 'stty size\n');
    await first.shows(/11 77/, mark);
    expect(second.text).not.toMatch(/11 77/);

    await other.pty.kill(term.pid);
    expect((await term.wait()).exitCode).not.toBe(0);
  });

  it("opens the operator's terminal through the control plane, and drives no process it did not open", async () => {
    const call = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) =>
      request(`${cp.url}/v1/sandboxes/${sbx.sandboxId}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const type = (pid: number, text: string) =>
      call('POST', `/terminals/${String(pid)}/input`, { data: Buffer.from(text).toString('base64') });
    const opened = await call('POST', '/terminals', { cols: 70, rows: 20 });
    expect(opened.statusCode).toBe(201);
    const { pid } = (await opened.body.json()) as { pid: number };
    const events = await call('GET', `/terminals/${String(pid)}/events`);
    expect(events.statusCode).toBe(200);
    const screen = new Screen();
    let ended: unknown;
    const reading = (async () => {
      let pending = '';
      for await (const chunk of events.body) {
        pending += (chunk as Buffer).toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines.filter((text) => text !== '')) {
          const event = JSON.parse(line) as { type: string; data?: string; exitCode?: number | null };
          if (event.type === 'data') screen.onData(Buffer.from(event.data ?? '', 'base64'));
          if (event.type === 'end') ended = event;
        }
      }
    })();
    expect((await type(pid, 'stty size; echo op-$((2+3))\n')).statusCode).toBe(200);
    await screen.shows(/20 70/);
    await screen.shows(/op-5/);
    const mark = screen.text.length;
    expect((await call('POST', `/terminals/${String(pid)}/resize`, { cols: 90, rows: 30 })).statusCode).toBe(
      200,
    );
    await type(pid, 'stty size\n');
    await screen.shows(/30 90/, mark);
    // A command the sandbox's token started is not the operator's: sandboxd refuses the credential.
    const other = await sbx.commands.run('cat', { background: true });
    const refused = await type(other.pid, 'x');
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    await other.kill();
    expect((await call('POST', '/terminals', { cols: 0, rows: 20 })).statusCode).toBe(400);
    expect((await call('DELETE', `/terminals/${String(pid)}`)).statusCode).toBe(200);
    await reading;
    expect(ended).toMatchObject({ type: 'end' });
  });

  it('refuses bad options before any call', async () => {
    const onData = (): void => undefined;
    await expect(sbx.pty.create({ cols: 5000, onData })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
    });
    await expect(sbx.pty.create({ cwd: 'relative', onData })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
    });
    await expect(sbx.pty.create({} as never)).rejects.toMatchObject({ name: 'InvalidArgumentError' });
    await expect(sbx.pty.connect(0, { onData })).rejects.toMatchObject({ name: 'InvalidArgumentError' });
  });
});
