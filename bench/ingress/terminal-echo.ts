/**
 * The terminal's figure of `bench:ingress` (issue 28): a keystroke's round trip through a terminal (the
 * key typed with `sendInput`, until its echo from the shell's line editor reaches `onData`), beside a
 * command's round trip (`commands.run('true')`) on the same sandbox in the same run. Closed loop, one at
 * a time: each key is erased again (Backspace) so the line never grows.
 */
import { performance } from 'node:perf_hooks';
import type { Sandbox } from '../../sdk/sandbox.js';
import { median } from '../support/report.js';

/** A terminal's output, and a wait for the next bytes that hold `text`. */
class Echoes {
  #seen = '';
  #waiter: { readonly text: string; readonly resolve: () => void } | undefined;
  readonly onData = (data: Uint8Array): void => {
    this.#seen += Buffer.from(data).toString('latin1');
    if (this.#waiter !== undefined && this.#seen.includes(this.#waiter.text)) {
      const { resolve } = this.#waiter;
      this.#waiter = undefined;
      resolve();
    }
  };

  /** Forgets what came so far, then resolves once `text` comes. */
  next(text: string): Promise<void> {
    this.#seen = '';
    return new Promise((resolve) => {
      this.#waiter = { text, resolve };
    });
  }
}

/** Medians in ms of `count` keystroke echoes and of `count` command round trips. */
export async function terminalAndCommandRoundTrips(
  sbx: Sandbox,
  count: number,
): Promise<{ keystrokeP50: number; commandP50: number }> {
  const echoes = new Echoes();
  const prompt = echoes.next('$ ');
  const term = await sbx.pty.create({ cols: 80, rows: 24, onData: echoes.onData });
  try {
    await prompt;
    const keystrokes: number[] = [];
    for (let i = 0; i < count + 10; i++) {
      const started = performance.now();
      const echoed = echoes.next('x');
      await term.sendInput('x');
      await echoed;
      if (i >= 10) keystrokes.push(performance.now() - started); // the first ten warm the path up
      const erased = echoes.next('\b');
      await term.sendInput('\x7f');
      await erased;
    }
    const commands: number[] = [];
    for (let i = 0; i < count + 10; i++) {
      const started = performance.now();
      await sbx.commands.run('true');
      if (i >= 10) commands.push(performance.now() - started);
    }
    return { keystrokeP50: median(keystrokes), commandP50: median(commands) };
  } finally {
    await term.kill().catch(() => undefined);
  }
}
