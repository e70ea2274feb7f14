/**
 * `sbx.egress` (issue 27): where the sandbox's code may connect. `get()` reads the policy in force from
 * the control plane, `update()` replaces it on the running sandbox (its network's tables and sandboxd's
 * resolver and name checks, in one step; connections already open stay open).
 */
import type { z } from 'zod';
import { egressPolicyWire } from '../protocol/egress-wire.js';
import { sandboxInfoSchema } from '../protocol/control-plane-api.js';
import { egressPolicySchema, type EgressPolicy } from '../rules/egress-policy.js';
import { parseOptions } from '../rules/parse-options.js';
import type { ControlPlaneClient } from './control-plane-client.js';

/** An egress policy as a caller writes it: `allow` and `deny` default to empty. */
export type EgressPolicyInput = z.input<typeof egressPolicySchema>;

export type { EgressPolicy };

/** The egress policy of one sandbox. */
export class SandboxEgress {
  readonly #plane: ControlPlaneClient;
  readonly #path: string;
  readonly #token: () => string;

  /** @internal */
  constructor(plane: ControlPlaneClient, sandboxId: string, token: () => string) {
    this.#plane = plane;
    this.#path = `/v1/sandboxes/${sandboxId}`;
    this.#token = token;
  }

  /** The policy in force, normalised (lower-case domains, canonical CIDRs). */
  async get(): Promise<EgressPolicy> {
    return (await this.#plane.call('GET', this.#path, sandboxInfoSchema, { token: this.#token() })).egress;
  }

  /**
   * Replaces the policy of the running sandbox (a suspended one with autoResume is resumed first).
   *
   * @example
   * ```ts
   * await sbx.egress.update({ mode: 'allowlist', allow: ['pypi.org', '*.pythonhosted.org'] });
   * ```
   * @throws InvalidArgumentError for a malformed policy, before any call
   */
  async update(policy: EgressPolicyInput): Promise<EgressPolicy> {
    const parsed = parseOptions(egressPolicySchema, policy, 'sbx.egress.update');
    return this.#plane.call('PUT', `${this.#path}/egress`, egressPolicyWire, {
      token: this.#token(),
      body: parsed,
    });
  }
}
