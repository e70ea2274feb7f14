/**
 * Who may reach a sandbox's port through its preview URL, and what that wakes (issue 28). A port is
 * private unless its sandbox's token holder made it public (journaled, kept in the sandbox's facts); a
 * private port admits its port token (`portToken` of the sandbox's preview key, which is derived from
 * the control plane's own key, so a restart keeps every URL working and nothing is stored per port). A
 * request to a suspended sandbox with auto-resume resumes it first; one to an ended sandbox is refused
 * before anything is woken.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { portToken, previewPortSchema } from '../protocol/preview-wire.js';
import { parseOptions } from '../rules/parse-options.js';
import { SandboxError, AuthenticationError } from '../rules/errors.js';
import type { Authorization } from './authorization.js';
import type { DaemonTarget } from './daemon-agent.js';
import type { SandboxJournal } from './journal-records.js';
import { controlTokenFor } from './operator-key.js';
import type { SandboxRegistry } from './sandbox-registry.js';
import type { Scheduler } from './scheduler.js';

/** What previews need of the control plane. */
export interface PreviewsDeps {
  readonly registry: SandboxRegistry;
  readonly authorization: Authorization;
  readonly scheduler: Scheduler;
  readonly journal: SandboxJournal;
  readonly controlKey: string;
}

/** A sandbox's preview key: what its port tokens are derived from (given to its token's holder). */
export function previewKeyFor(controlKey: string, sandboxId: string): string {
  return createHmac('sha256', controlKey).update(`preview ${sandboxId}`, 'utf8').digest('base64url');
}

/** The previews of a control plane's sandboxes. */
export class Previews {
  readonly #deps: PreviewsDeps;

  constructor(deps: PreviewsDeps) {
    this.#deps = deps;
  }

  /** The preview key of a sandbox (for its token's holder: create and connect). */
  keyOf(sandboxId: string): string {
    return previewKeyFor(this.#deps.controlKey, sandboxId);
  }

  /**
   * Admits a request to `port` of a sandbox and makes it reachable: resumes a suspended sandbox with
   * auto-resume (true when it did).
   *
   * @param token - the port token the request presented, if any
   * @throws SandboxError `sandbox_not_found`, `sandbox_ended` (before anything is looked at or woken),
   *   `sandbox_suspended` (suspended without auto-resume)
   * @throws AuthenticationError a private port without its token
   */
  async open(sandboxId: string, port: number, token: string | undefined): Promise<boolean> {
    const sandbox = this.#deps.registry.live(sandboxId);
    if (!(sandbox.facts.publicPorts ?? []).includes(port) && !this.#admits(sandboxId, port, token)) {
      throw new AuthenticationError('this port needs its preview token');
    }
    return await this.#deps.scheduler.wake(sandbox);
  }

  /**
   * The sandboxd of a running sandbox, for a new tunnel (asked again at each one, so a sandbox that ended
   * or was suspended meanwhile is never dialled).
   *
   * @throws SandboxError `sandbox_ended`, `sandbox_not_found`, `sandbox_suspended`
   */
  targetOf(sandboxId: string): DaemonTarget {
    const sandbox = this.#deps.registry.live(sandboxId);
    if (sandbox.actor.state !== 'running') {
      throw new SandboxError('the sandbox is suspended', { code: 'sandbox_suspended' });
    }
    return { url: sandbox.facts.daemonUrl, token: controlTokenFor(this.#deps.controlKey, sandboxId) };
  }

  /**
   * Makes a port public (anyone with its URL) or private again; journaled.
   *
   * @throws InvalidArgumentError a port out of 1-65535; AuthenticationError; SandboxError `sandbox_ended`
   */
  async expose(
    sandboxId: string,
    port: number,
    isPublic: boolean,
    bearer: string | undefined,
  ): Promise<void> {
    parseOptions(previewPortSchema, port, 'port');
    const sandbox = this.#deps.authorization.authorized(sandboxId, bearer);
    const others = (sandbox.facts.publicPorts ?? []).filter((p) => p !== port);
    const publicPorts = isPublic ? [...others, port].sort((a, b) => a - b) : others;
    await this.#deps.journal.append({ kind: 'ports', id: sandboxId, publicPorts });
    this.#deps.registry.setPublicPorts(sandboxId, publicPorts);
  }

  /** The sandbox's public ports. */
  publicPorts(sandboxId: string, bearer: string | undefined): readonly number[] {
    this.#deps.authorization.check(sandboxId, bearer);
    return this.#deps.registry.factsOf(sandboxId).publicPorts ?? [];
  }

  #admits(sandboxId: string, port: number, token: string | undefined): boolean {
    if (token === undefined) return false;
    const expected = Buffer.from(portToken(this.keyOf(sandboxId), port));
    const presented = Buffer.from(token);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }
}
