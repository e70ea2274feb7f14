/**
 * Control planes on the in-memory driver for unit tests: a temporary state folder (the journal lives
 * there), a clock the test moves (`now`, no real timers: time passes through `tick()` and calls), and
 * restarts on the same folder with the same driver instance in a "new process".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlPlane, type ControlPlaneOptions } from '../../control-plane/control-plane.js';
import { MemoryDriver, type MemoryHost } from './memory-driver.js';

/** Options a test may set; the folder, the driver and the clock are the world's. */
export type MemoryPlaneOptions = Partial<Omit<ControlPlaneOptions, 'stateDir' | 'driver' | 'now' | 'timers'>>;

/** A state folder, a memory driver and the control planes started on them. */
export class MemoryPlaneWorld {
  readonly stateDir = mkdtempSync(join(tmpdir(), 'sdk-plane-unit-'));
  /** The clock every plane reads, milliseconds. */
  now = 1_700_000_000_000;
  /** The driver of the current "process"; `crash` replaces it with the same instance restarted. */
  driver: MemoryDriver;
  readonly #planes: ControlPlane[] = [];

  /** `host`: a machine shared with other worlds (other control planes on the same host). */
  constructor(options: { readonly host?: MemoryHost } = {}) {
    this.driver = new MemoryDriver(options.host === undefined ? {} : { host: options.host });
  }

  /** Starts a control plane on the folder with the current driver. */
  async start(options: MemoryPlaneOptions = {}): Promise<ControlPlane> {
    const plane = await ControlPlane.start({
      ...options,
      stateDir: this.stateDir,
      driver: this.driver,
      now: () => this.now,
      timers: false,
    });
    this.#planes.push(plane);
    return plane;
  }

  /**
   * The process of `plane` ends: the plane stops (its sandboxes keep running, as after a crash) and the
   * driver becomes the next process's (same host and instance, nothing watched). `start` follows.
   */
  async crash(plane: ControlPlane): Promise<void> {
    await plane.close();
    this.driver = this.driver.restarted();
  }

  /** `crash(plane)`, then a new control plane on the same folder. */
  async restart(plane: ControlPlane, options: MemoryPlaneOptions = {}): Promise<ControlPlane> {
    await this.crash(plane);
    return this.start(options);
  }

  /** The journal's records as written so far (kind and sandbox id). */
  journal(): { readonly kind: string; readonly id: string }[] {
    return readFileSync(join(this.stateDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { kind: string; id: string });
  }

  /** Closes every plane and removes the folder. */
  async dispose(): Promise<void> {
    for (const plane of this.#planes) await plane.close();
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}
