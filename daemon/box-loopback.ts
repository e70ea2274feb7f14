/**
 * The gateway's loopback in a gVisor box (gateway/sandbox-loopback.ts): one relay process in the box,
 * `gvisor-exec relay`, started like any process of sandbox code (as the box's root, which alone may end
 * it besides sandboxd), told on its stdin which ports to listen on and answering on its stdout. Its
 * stdin is a pipe only sandboxd holds. A relay that ends (root in the box may kill it) is started again
 * with the next port opened, and listens on every port still open.
 *
 * The other way (preview URLs, `port-tunnel.ts`): `dial` asks the relay to connect to the box's
 * `127.0.0.1:<port>` and, once that is open, to connect back to sandboxd's dial-back listener on the
 * link with the dial's id (128 random bits: code in the box, which can reach that listener too, cannot
 * guess one) as its first line.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { constants } from 'node:os';
import type { SandboxLoopback } from '../gateway/sandbox-loopback.js';
import { killProcessTree, spawnInSandbox, type GvisorBox, type SandboxUser } from './sandbox-spawn.js';

/** The relay in the box (sandboxd's runtime image, bound read-only there). */
const RELAY = '/opt/sdk/gvisor-exec';

/** How long a dial may take (the relay's two connects). */
const DIAL_TIMEOUT_MS = 10_000;
/** Longest first line of a dial-back connection: an id and its newline. */
const MAX_DIAL_LINE = 64;

/** A dial waiting for its connection back. */
interface PendingDial {
  readonly resolve: (socket: Socket) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** An answer the relay owes. */
interface Pending {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** An `Error` with the errno code the relay answered. */
function errnoError(what: string, errno: number): NodeJS.ErrnoException {
  const code = Object.entries(constants.errno).find(([, value]) => value === errno)?.[0] ?? 'EIO';
  return Object.assign(new Error(`${what}: ${code}`), { code });
}

/** A gVisor box's loopback, through its relay. */
export class BoxLoopback implements SandboxLoopback {
  readonly address: string;
  readonly #user: SandboxUser;
  readonly #open = new Set<number>();
  readonly #pending = new Map<number, Pending[]>();
  readonly #dials = new Map<string, PendingDial>();
  #relay: ChildProcessWithoutNullStreams | undefined;
  #dialBack: Server | undefined;
  #dialBackPort: Promise<number> | undefined;

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

  /**
   * A connection to the box's `127.0.0.1:port`.
   *
   * @throws Error with the errno `code` the relay met (`ECONNREFUSED`: nothing listens), or a time-out
   */
  async dial(port: number): Promise<Socket> {
    const back = await this.#dialBackListener();
    const id = randomBytes(16).toString('hex');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.#endDial(id, new Error('the box did not answer the dial')),
        DIAL_TIMEOUT_MS,
      );
      this.#dials.set(id, { resolve, reject, timer });
      this.#relayProcess().stdin.write(`dial ${String(port)} ${String(back)} ${id}\n`);
    });
  }

  /** Ends the relay (sandboxd is stopping). */
  stop(): void {
    this.#dialBack?.close();
    for (const id of [...this.#dials.keys()]) this.#endDial(id, new Error('sandboxd is stopping'));
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
      for (const id of [...this.#dials.keys()])
        this.#endDial(id, new Error("the box's loopback relay ended"));
      // Ports still open come back with a new relay (at once: a route's URL must keep answering).
      if (this.#open.size > 0) this.#relayProcess();
    });
    for (const port of this.#open) child.stdin.write(`open ${String(port)}\n`);
    return child;
  }

  /** sandboxd's listener on the link the relay connects dials back to; its port. */
  #dialBackListener(): Promise<number> {
    this.#dialBackPort ??= new Promise((resolve, reject) => {
      const server = createServer((socket) => this.#dialledBack(socket));
      server.maxConnections = 256;
      server.once('error', reject);
      server.listen(0, this.address, () => resolve((server.address() as AddressInfo).port));
      this.#dialBack = server;
    });
    return this.#dialBackPort;
  }

  /** A connection to the dial-back listener: its first line names the dial it answers. */
  #dialledBack(socket: Socket): void {
    let head = Buffer.alloc(0);
    socket.on('error', () => socket.destroy());
    socket.setTimeout(DIAL_TIMEOUT_MS, () => socket.destroy());
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(0x0a);
      if (end < 0) {
        if (head.length > MAX_DIAL_LINE) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      const dial = this.#dials.get(head.subarray(0, end).toString('latin1'));
      if (dial === undefined) {
        socket.destroy();
        return;
      }
      this.#dials.delete(head.subarray(0, end).toString('latin1'));
      clearTimeout(dial.timer);
      const rest = head.subarray(end + 1);
      if (rest.length > 0) socket.unshift(rest);
      dial.resolve(socket);
    };
    socket.on('data', onData);
  }

  #endDial(id: string, error: Error): void {
    const dial = this.#dials.get(id);
    if (dial === undefined) return;
    this.#dials.delete(id);
    clearTimeout(dial.timer);
    dial.reject(error);
  }

  /** `open PORT ERRNO` / `close PORT 0` / `dial ID ERRNO` from the relay. */
  #answer(line: string): void {
    const [word, portText, errnoText] = line.split(' ');
    if (word === 'dial') {
      this.#endDial(
        portText ?? '',
        errnoError("the box's loopback port could not be reached", Number(errnoText)),
      );
      return;
    }
    if (word !== 'open') return;
    const port = Number(portText);
    const errno = Number(errnoText);
    const waiting = this.#pending.get(port)?.shift();
    if (this.#pending.get(port)?.length === 0) this.#pending.delete(port);
    if (waiting === undefined) return;
    if (errno === 0) waiting.resolve();
    else waiting.reject(errnoError(`the box's loopback port ${String(port)} could not be opened`, errno));
  }
}
