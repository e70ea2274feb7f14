/**
 * Issue 24: sandboxd under load. Output is read from a command only as fast as its slowest reader takes
 * it; a reader that stops reading is cut off and may re-attach after the last event it read; stdin is
 * passed on only as fast as the command reads it; ended commands' output is bounded by the sandbox's
 * budget and old ended commands are forgotten. Through all of it sandboxd's resident memory stays under
 * `SANDBOXD_MEMORY_BOUND` (daemon/README.md), measured on the daemon process itself.
 */
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { MAX_ENDED } from '../../../daemon/process-table.js';
import { startCutProxy } from '../support/cut-proxy.js';
import { startSandboxd, type LocalSandboxd } from '../support/sandboxd.js';
import { peakBytes, resetPeak, SANDBOXD_MEMORY_BOUND } from '../support/sandboxd-memory.js';

/** How long a full socket may stay full before this test daemon cuts its reader. */
const STALL_MS = 1_000;

let daemon: LocalSandboxd;
let home: string;
let commands: Commands;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'sdk-home-'));
  chmodSync(home, 0o777);
  daemon = await startSandboxd(home, {}, { streamStallMs: STALL_MS });
  commands = new Commands(new DaemonClient({ url: daemon.url, accessToken: daemon.token }));
});

afterAll(async () => {
  await daemon.stop();
  rmSync(home, { recursive: true, force: true });
});

// Each test's peak is its own: the kernel's high-water mark of the daemon's RSS starts again here.
beforeEach(() => resetPeak(daemon.pid));

/** A raw connection that sends `request` and reads nothing until `resume`. */
function rawRequest(request: string): Promise<Socket> {
  const { port } = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.pause();
      socket.write(request);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** A GET of `path` with the token, over a raw connection that reads nothing yet. */
function rawGet(path: string): Promise<Socket> {
  return rawRequest(
    `GET ${path} HTTP/1.1\r\nHost: sandboxd\r\nConnection: close\r\nAuthorization: Bearer ${daemon.token}\r\n\r\n`,
  );
}

/** Everything `socket` receives until the server closes it. */
function readToClose(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  return new Promise((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1'))),
  );
}

/** The NDJSON values of a chunked answer's body (chunk sizes stripped). */
function ndjsonOf(answer: string): Record<string, unknown>[] {
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4).replace(/(?:^|\r\n)[0-9a-f]+\r\n/g, '');
  return body
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return []; // the last line of a stream that was cut
      }
    });
}

const bytesOf = (events: Record<string, unknown>[]): number =>
  events.reduce(
    (sum, e) => sum + (e['type'] === 'data' ? Buffer.from(String(e['data']), 'base64').length : 0),
    0,
  );

describe('sandboxd under load', () => {
  it('reads a flood only as fast as the SDK takes it, and the SDK gets all of it', async () => {
    let received = 0;
    const result = await commands.run('head -c 100000000 /dev/zero; echo', {
      onStdout: (data) => (received += data.length),
    });
    expect(result.exitCode).toBe(0);
    expect(received).toBe(100_000_001);
    expect(peakBytes(daemon.pid)).toBeLessThan(SANDBOXD_MEMORY_BOUND);
  });

  it('cuts a reader that stops reading, runs the command on, and takes the reader back after its cursor', async () => {
    // A reader that never reads: the command waits for it, then it is cut and the command finishes.
    const handle = await commands.run('head -c 40000000 /dev/zero; echo done', { background: true });
    const stalled = await rawGet(`/v1/processes/${String(handle.pid)}/events`);
    const result = await handle.wait();
    expect(result.stdout.length).toBe(40_000_005);
    expect(result.stdout.endsWith('done\n')).toBe(true);
    const cut = ndjsonOf(await readToClose(stalled));
    expect(cut.some((event) => event['type'] === 'end')).toBe(false); // cut off before the end
    expect(peakBytes(daemon.pid)).toBeLessThan(SANDBOXD_MEMORY_BOUND);

    // Re-attaching after the last event read gives exactly the events after it that are still kept.
    const last = cut.at(-1)?.['seq'];
    expect(typeof last).toBe('number');
    const rest = ndjsonOf(
      await readToClose(await rawGet(`/v1/processes/${String(handle.pid)}/events?after=${String(last)}`)),
    );
    expect(rest.at(-1)).toMatchObject({ type: 'end', exitCode: 0 });
    expect(rest.every((event) => Number(event['seq']) > Number(last))).toBe(true);
    const seqs = rest.map((event) => Number(event['seq']));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('re-attaches a reader after its cursor with nothing missed or repeated', async () => {
    const handle = await commands.run('for i in $(seq 1 2000); do echo "line $i"; done', {
      background: true,
    });
    const all = (await handle.wait()).stdout;
    const whole = ndjsonOf(await readToClose(await rawGet(`/v1/processes/${String(handle.pid)}/events`)));
    const middle = Number(whole[Math.floor(whole.length / 2)]?.['seq']);
    const after = ndjsonOf(
      await readToClose(await rawGet(`/v1/processes/${String(handle.pid)}/events?after=${String(middle)}`)),
    );
    const upTo = whole.filter((event) => Number(event['seq']) <= middle);
    const text = (events: Record<string, unknown>[]): string =>
      events
        .map((e) => (e['type'] === 'data' ? Buffer.from(String(e['data']), 'base64').toString() : ''))
        .join('');
    expect(text(upTo) + text(after)).toBe(all);
    expect(bytesOf(after)).toBeGreaterThan(0);
  });

  it('has the SDK open a cut-off stream again after its last event, missing and repeating nothing', async () => {
    const proxy = await startCutProxy(daemon.url, '/v1/processes');
    try {
      const through = new Commands(new DaemonClient({ url: proxy.url, accessToken: daemon.token }));
      const expected = Array.from({ length: 3000 }, (_, i) => `line ${String(i + 1)}\n`).join('');
      const result = await through.run('for i in $(seq 1 3000); do echo line $i; done');
      expect(result).toEqual({ stdout: expected, stderr: '', exitCode: 0, signal: null });
      expect(proxy.streams()).toBe(2); // cut once, opened again after the last event read
    } finally {
      await proxy.close();
    }
  });

  it('passes stdin on only as fast as the command reads it, holding the sender back', async () => {
    const handle = await commands.run('sleep 600', { background: true });
    const body = 200 * 1024 * 1024;
    const sender = await rawRequest(
      `POST /v1/processes/${String(handle.pid)}/stdin HTTP/1.1\r\nHost: sandboxd\r\n` +
        `Authorization: Bearer ${daemon.token}\r\nContent-Length: ${String(body)}\r\n\r\n`,
    );
    // Write until the connection holds us back: sandboxd stopped reading the body.
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    while (sent < body && sender.write(chunk)) sent += chunk.length;
    await new Promise((resolve) => setTimeout(resolve, 500)); // a window for sandboxd to read on if it would
    const written = sender.bytesWritten;
    expect(written).toBeLessThan(body);
    expect(peakBytes(daemon.pid)).toBeLessThan(SANDBOXD_MEMORY_BOUND);
    sender.destroy();
    await handle.kill();
    await handle.wait();
  });

  it('holds at most 1,024 connections that send nothing, within its bound', async () => {
    const { port } = new URL(daemon.url);
    const sockets: Socket[] = [];
    // A connection past the cap is closed as it is accepted, without a byte; one held past its 10 s
    // for a request head is answered 408 first. Only the former are counted.
    let refused = 0;
    // In batches the kernel's accept queue takes whole, so each connection reaches sandboxd at once.
    for (let batch = 0; batch < 1_074 / 64; batch += 1) {
      const next = await Promise.all(
        Array.from(
          { length: Math.min(64, 1_074 - sockets.length) },
          () =>
            new Promise<Socket>((resolve, reject) => {
              let answered = false;
              const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
              socket.once('error', reject);
              socket.on('data', () => (answered = true));
              socket.once('close', () => {
                if (!answered) refused += 1;
              });
            }),
        ),
      );
      sockets.push(...next);
    }
    try {
      await expect.poll(() => refused).toBeGreaterThanOrEqual(50);
      expect(peakBytes(daemon.pid)).toBeLessThan(SANDBOXD_MEMORY_BOUND);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    await expect.poll(() => commands.run('echo served').then((r) => r.stdout)).toBe('served\n');
  });

  it('keeps ended commands within the output budget and forgets the oldest beyond the count', async () => {
    // 8 commands of 6 MB each: more than the budget (16 MiB of base64), each within its own 8 MiB.
    const pids: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const handle = await commands.run('head -c 6000000 /dev/zero', { background: true });
      await handle.wait();
      pids.push(handle.pid);
    }
    const first = await commands.connect(pids[0] ?? 0);
    const last = await commands.connect(pids.at(-1) ?? 0);
    // The newest keeps its output whole; the oldest's was dropped to keep the budget.
    expect((await last.wait()).stdout.length).toBe(6_000_000);
    expect((await first.wait()).stdout.length).toBeLessThan(6_000_000);
    expect(peakBytes(daemon.pid)).toBeLessThan(SANDBOXD_MEMORY_BOUND);

    // Beyond MAX_ENDED ended commands, the one that ended first is forgotten: a typed not found.
    for (let i = 0; i < MAX_ENDED; i += 1) await commands.run('true');
    await expect(commands.connect(pids[0] ?? 0)).rejects.toMatchObject({ code: 'process_not_found' });
    expect((await commands.list()).some((p) => p.pid === pids[0])).toBe(false);
  });
});
