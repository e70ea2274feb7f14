/**
 * How the control plane reaches a sandbox's sandboxd for a caller: with its own credential for the
 * operator's and the agent's calls (`target`: only while the sandbox runs, a call never resumes it), and
 * for an SDK call through the daemon proxy (`reach`: a suspended sandbox is resumed with auto-resume
 * where the caller's request meets it, a passive read waits until something else resumed it).
 */
import { filter, firstValueFrom, fromEvent, takeUntil } from 'rxjs';
import { SandboxError } from '../rules/errors.js';
import type { Authorization } from './authorization.js';
import { controlTokenFor } from './operator-key.js';
import type { DaemonTarget } from './daemon-agent.js';
import type { DaemonUse } from './daemon-proxy.js';
import type { SandboxRegistry } from './sandbox-registry.js';
import type { Scheduler } from './scheduler.js';

/** What reaching a sandboxd needs. */
export interface DaemonAccessOptions {
  readonly authorization: Authorization;
  readonly registry: SandboxRegistry;
  readonly scheduler: Scheduler;
  /** The key the control plane's per-sandbox credential is derived from. */
  readonly controlKey: string;
}

/** The sandboxd of a sandbox, for a caller the sandbox admits. */
export class DaemonAccess {
  readonly #options: DaemonAccessOptions;

  constructor(options: DaemonAccessOptions) {
    this.#options = options;
  }

  /**
   * Where to call a sandbox's sandboxd with the control plane's credential, for a caller holding the
   * sandbox's token or the operator key: only while it runs (a call never resumes it).
   *
   * @throws AuthenticationError, SandboxError `sandbox_not_found`, `sandbox_ended`, `sandbox_suspended`
   */
  target(id: string, bearer: string | undefined): DaemonTarget {
    const sandbox = this.#options.authorization.authorized(id, bearer);
    if (sandbox.actor.state !== 'running') {
      throw new SandboxError('the sandbox is suspended; resume it first', { code: 'sandbox_suspended' });
    }
    return { url: sandbox.facts.daemonUrl, token: controlTokenFor(this.#options.controlKey, id) };
  }

  /**
   * The sandboxd of a sandbox the bearer may use, for a call through the daemon proxy: a running one's
   * at once, journaling nothing; a suspended one's after the call resumed it (auto-resume), or refused;
   * for a passive read, once something else resumed it.
   *
   * @throws AuthenticationError; SandboxError `sandbox_not_found`, `sandbox_ended`, `sandbox_suspended`
   */
  async reach(id: string, bearer: string | undefined, use: DaemonUse): Promise<string> {
    const sandbox = this.#options.authorization.authorized(id, bearer);
    if (use.passive && sandbox.actor.state === 'suspended') {
      await firstValueFrom(
        sandbox.actor.state$.pipe(
          filter((state) => state !== 'suspended'),
          takeUntil(fromEvent(use.signal, 'abort')),
        ),
        { defaultValue: undefined },
      );
      this.#options.registry.live(id); // ended meanwhile: `sandbox_ended`
      // The reader went away while it slept: it never resumes the sandbox.
      if (use.signal.aborted) throw new SandboxError('the caller went away', { code: 'sandbox_suspended' });
    }
    await this.#options.scheduler.wake(sandbox);
    return sandbox.facts.daemonUrl;
  }
}
