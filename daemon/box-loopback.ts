/**
 * The gateway's loopback in a gVisor box (gateway/sandbox-loopback.ts): one relay process in the box,
 * `gvisor-exec relay`, started like any process of sandbox code (as the box's root, which alone may end
 * it besides sandboxd), told on its stdin which ports to listen on and answering on its stdout. Its
 * stdin is a pipe only sandboxd holds. A relay that ends (root in the box may kill it) is started again
 * with the next port opened, and listens on every port still open.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { constants } from 'node:os';
import type { SandboxLoopback } from '../gateway/sandbox-loopback.js';
import { killProcessTree, spawnInSandbox, type GvisorBox, type SandboxUser } from './sandbox-spawn.js';

/** The relay in the box (sandboxd's runtime image, bound read-only there). */
const RELAY = '/opt/sdk/gvisor-exec';

/** An answer the relay owes. */
interface Pending {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** An `Error` with the errno code the relay answered. */
function errnoError(port: number, errno: number): NodeJS.ErrnoException {
  const code = Object.entries(constants.errno).find(([, value]) => value === errno)?.[0] ?? 'EIO';
  return Object.assign(new Error(`the box's loopback port ${String(port)} could not be opened: ${code}`), {
    code,
  });
}

/** A gVisor box's loopback, through its relay. */
export class BoxLoopback implements SandboxLoopback {
  readonly address: string;
  readonly #user: SandboxUser;
  readonly #open = new Set<number>();
  readonly #pending = new Map<number, Pending[]>();
  #relay: ChildProcessWithoutNullStreams | undefined;

  constructor(user: SandboxUser & { readonly box: GvisorBox }) {
    this.#user = user;
    this.address = user.box.link;
  }

  async open(port: number): Promise<void> {
    await this.#ask(port);
    this.#open.add(port);
  }

  close(port: number): void {
    if (!this.#open.delete(port)) return;
    this.#relay?.stdin.write(`close ${String(port)}\n`);
  }

  /** Ends the relay (sandboxd is stopping). */
  stop(): void {
    const relay = this.#relay;
    this.#relay = undefined;
    if (relay !== undefined) void killProcessTree(relay).catch(() => undefined);
  }

  /** Asks the relay to listen on `port`; resolves once it does. */
  #ask(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiting = this.#pending.get(port) ?? [];
      waiting.push({ resolve, reject });
      this.#pending.set(port, waiting);
      this.#relayProcess().stdin.write(`open ${String(port)}\n`);
    });
  }

  /** The running relay, started (again) when there is none; every port still open is opened again. */
  #relayProcess(): ChildProcessWithoutNullStreams {
    if (this.#relay !== undefined) return this.#relay;
    const { child } = spawnInSandbox(
      { cmd: `exec ${RELAY} relay --to ${this.address}`, envs: {}, cwd: '/', account: 'root' },
      this.#user,
    );
    this.#relay = child;
    child.stdin.on('error', () => undefined);
    child.stderr.resume();
    createInterface({ input: child.stdout }).on('line', (line) => this.#answer(line));
    child.once('close', () => {
      if (this.#relay !== child) return;
      this.#relay = undefined;
      for (const [port, waiting] of this.#pending) {
        this.#pending.delete(port);
        for (const { reject } of waiting) reject(new Error("the box's loopback relay ended"));
      }
      // Ports still open come back with a new relay (at once: a route's URL must keep answering).
      if (this.#open.size > 0) this.#relayProcess();
    });
    for (const port of this.#open) child.stdin.write(`open ${String(port)}\n`);
    return child;
  }

  /** `open PORT ERRNO` / `close PORT 0` from the relay. */
  #answer(line: string): void {
    const [word, portText, errnoText] = line.split(' ');
    if (word !== 'open') return;
    const port = Number(portText);
    const errno = Number(errnoText);
    const waiting = this.#pending.get(port)?.shift();
    if (this.#pending.get(port)?.length === 0) this.#pending.delete(port);
    if (waiting === undefined) return;
    if (errno === 0) waiting.resolve();
    else waiting.reject(errnoError(port, errno));
  }
}
