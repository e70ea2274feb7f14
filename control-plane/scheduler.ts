/**
 * Time and delivery (DESIGN.md §1: time reaches the machines only as journaled `clock` events). An event
 * reaches its actor after a `clock` at the current time, so a deadline that has passed is honoured
 * before anything else; a timer (or `tick()`, when timers are off) sends `clock` to every sandbox whose
 * next deadline has come. The actor's effects are the driver's freeze, thaw and destroy.
 */
import { DeadlineTimer } from '../actors/deadline-timer.js';
import { EffectFailedError, type SandboxEffects } from '../actors/sandbox-actor.js';
import type { SandboxMachineEvent } from '../machines/sandbox-machine.js';
import { SandboxError } from '../rules/errors.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import type { SandboxJournal } from './journal-records.js';
import type { LiveSandbox, SandboxRegistry } from './sandbox-registry.js';

/** What the scheduler works with. */
export interface SchedulerOptions {
  readonly journal: SandboxJournal;
  readonly registry: SandboxRegistry;
  /** Runs the actors' effects. */
  readonly driver: SandboxDriver;
  /** The clock, in milliseconds. */
  readonly now: () => number;
  /** Run a real timer for the next deadline; with false, time moves only through `tick()`. */
  readonly timers: boolean;
  /** Runs in each tick after the deadlines (compaction: every resolved append is applied by then). */
  readonly afterTick: () => Promise<void>;
}

/**
 * Sends events to sandbox actors, time first, and keeps the timer of the next deadline.
 *
 * @example
 * ```ts
 * const scheduler = new Scheduler({ journal, registry, driver, now: Date.now, timers: true, afterTick });
 * await scheduler.call(registry.live(id), { type: 'pause' });
 * ```
 */
export class Scheduler {
  readonly #journal: SandboxJournal;
  readonly #registry: SandboxRegistry;
  readonly #now: () => number;
  readonly #timers: boolean;
  readonly #afterTick: () => Promise<void>;
  readonly #effects: SandboxEffects;
  readonly #deadlines: DeadlineTimer;

  constructor(options: SchedulerOptions) {
    this.#journal = options.journal;
    this.#registry = options.registry;
    this.#now = options.now;
    this.#timers = options.timers;
    this.#afterTick = options.afterTick;
    // A tick that fails (a broken journal, a driver error) is retried at the next deadline or call.
    this.#deadlines = new DeadlineTimer({
      now: this.#now,
      dues: () => [...this.#registry.liveSandboxes()].map((sandbox) => sandbox.actor.nextDueAt),
      fire: () => this.tick(),
      unref: true,
    });
    const { driver } = options;
    this.#effects = {
      freeze: (id) => driver.pause(id),
      thaw: (id) => driver.resume(id),
      destroy: (id) => driver.destroy(id),
    };
  }

  /**
   * A caller's call on a sandbox: time first, so a deadline that has passed is honoured before anything
   * else; then a sandbox that has ended refuses it (`sandbox_ended`), so no caller is ever pointed at,
   * or acts through, the address of a sandbox that is gone. `undefined`: only the time.
   *
   * @throws SandboxError
   */
  async call(sandbox: LiveSandbox, event: SandboxMachineEvent | undefined): Promise<void> {
    await this.send(sandbox, { type: 'clock', now: this.#now() });
    this.#registry.live(sandbox.actor.id); // ended (by that clock, or before): `sandbox_ended`
    if (event !== undefined) await this.send(sandbox, event, false);
  }

  /**
   * A caller's request meets `sandbox` (a preview, a call through the daemon proxy): a suspended one is
   * resumed with auto-resume (true when it was), refused without it; a running one is left as it is.
   *
   * @throws SandboxError `sandbox_suspended` (no auto-resume), `sandbox_ended`
   */
  async wake(sandbox: LiveSandbox): Promise<boolean> {
    if (sandbox.actor.state !== 'suspended') return false;
    await this.call(sandbox, { type: 'sdk_call' });
    // The call may have resumed it (auto-resume); the compiler cannot see the actor's state change.
    if ((sandbox.actor.state as string) !== 'running') {
      throw new SandboxError('the sandbox is suspended without auto-resume; resume it first', {
        code: 'sandbox_suspended',
      });
    }
    return true;
  }

  /**
   * Sends one event (after a `clock`, unless it is one or `timeFirst` is false because the caller just
   * sent it), journaled before it is applied; then releases the sandbox if it ended and sets the timer.
   *
   * @throws SandboxError when a freeze or thaw failed (the failure is journaled and applied)
   */
  async send(sandbox: LiveSandbox, event: SandboxMachineEvent, timeFirst = true): Promise<void> {
    const { actor } = sandbox;
    if (timeFirst && event.type !== 'clock' && actor.state !== 'ended') {
      // Time first, so a deadline that has passed is honoured before anything else.
      await actor.send({ type: 'clock', now: this.#now() }, this.#journal.writerFor(actor.id), this.#effects);
    }
    try {
      await actor.send(event, this.#journal.writerFor(actor.id), this.#effects);
    } catch (error) {
      // The failure is journaled and applied already (the state says what is true); the caller hears it.
      if (error instanceof EffectFailedError) {
        throw new SandboxError(`the sandbox could not ${error.effect === 'freeze' ? 'pause' : 'resume'}`);
      }
      throw error;
    } finally {
      this.#registry.release(sandbox);
      this.schedule();
    }
  }

  /**
   * Traffic sandboxd saw at `at` (its own clock): journaled as a `clock` at that time (never later than
   * now), then `traffic`, so the idle policy counts it from when it happened.
   */
  async traffic(sandbox: LiveSandbox, at: number): Promise<void> {
    // Through `send`, so a deadline that clock passes ends and releases the sandbox like any other.
    await this.send(sandbox, { type: 'clock', now: Math.min(at, this.#now()) });
    if (sandbox.actor.state === 'ended') return;
    await this.send(sandbox, { type: 'traffic' }, false);
  }

  /** Sends `clock { now }` to every sandbox whose next deadline has come, then `afterTick`. */
  async tick(): Promise<void> {
    const now = this.#now();
    for (const sandbox of this.#registry.liveSandboxes()) {
      const due = sandbox.actor.nextDueAt;
      if (due === undefined || due > now) continue;
      await this.send(sandbox, { type: 'clock', now });
    }
    await this.#afterTick();
    this.schedule();
  }

  /** Sets the timer to the earliest deadline of the live sandboxes (with timers on and not closed). */
  schedule(): void {
    if (this.#timers) this.#deadlines.schedule();
  }

  /** Stops the timer for good. */
  close(): void {
    this.#deadlines.close();
  }
}
