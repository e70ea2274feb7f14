/**
 * sandboxd's part of a sandbox's egress policy (issue 27): the resolver every DNS question of sandbox
 * code reaches and the name checks of its HTTP and TLS connections, both under one policy that the
 * control plane replaces (`PUT /v1/egress`) as it replaces the driver's tables. Decisions are recorded
 * for the event stream (`egress` records: never a header, path or body).
 */
import { EGRESS_PORTS, type EgressSettings } from '../../protocol/egress-wire.js';
import type { DaemonRecord } from '../../protocol/daemon-events.js';
import { recordText } from '../../protocol/daemon-events.js';
import { policyOfInternetAccess, type EgressPolicy } from '../../rules/egress-policy.js';
import type { LookupFunction } from 'node:net';
import type { EgressPassage, EgressRefusal } from './egress-refusal.js';
import { CredentialBroker, type CredentialBrokerDeps } from './credential-broker.js';
import { EgressResolver } from './egress-resolver.js';
import { NameChecks } from './name-checks.js';
import { UpstreamNames } from './upstream-names.js';

/** The resolver and the name checks of one sandboxd. */
export class EgressFilter {
  #policy: EgressPolicy;
  readonly #resolver: EgressResolver;
  readonly #checks: NameChecks;
  readonly #names: UpstreamNames;
  readonly #own: readonly string[];
  readonly #record: (record: DaemonRecord) => void;

  /**
   * @param own - the sandbox's own addresses (never an answer)
   * @param record - where decisions go (the daemon's event stream)
   */
  constructor(settings: EgressSettings, own: readonly string[], record: (record: DaemonRecord) => void) {
    this.#policy = settings.policy;
    const names = new UpstreamNames(settings.dnsServers, own);
    this.#names = names;
    this.#own = own;
    this.#record = record;
    const policy = (): EgressPolicy => this.#policy;
    const refused = (refusal: EgressRefusal): void => record(refusalRecord(refusal));
    this.#resolver = new EgressResolver(names, policy, refused);
    this.#checks = new NameChecks(names, policy, {
      refused,
      passed: (passage) => record(passageRecord(passage)),
    });
  }

  /** The policy in force. */
  get policy(): EgressPolicy {
    return this.#policy;
  }

  /** Replaces the policy; connections already let through stay. */
  update(policy: EgressPolicy): void {
    this.#policy = policy;
  }

  /**
   * Lookups of the gateway's upstreams through the same DNS servers as sandbox code's names, under no
   * policy: a gateway route is how a sandbox with closed egress reaches its upstream (SPEC).
   */
  gatewayLookup(): LookupFunction {
    return this.#names.lookupFunction(() => policyOfInternetAccess(true));
  }

  /**
   * The credential broker (`credential-broker.ts`) under this filter's policy and lookups, recording
   * on the same stream.
   */
  createBroker(options: Omit<CredentialBrokerDeps, 'names' | 'policy' | 'events' | 'own'>): CredentialBroker {
    return new CredentialBroker({
      ...options,
      names: this.#names,
      policy: () => this.#policy,
      own: this.#own,
      events: {
        refused: (refusal) => this.#record(refusalRecord(refusal)),
        passed: (passage) => this.#record(passageRecord(passage)),
      },
    });
  }

  /** Listens on `EGRESS_PORTS`, every address of the sandbox's namespace. */
  async listen(): Promise<void> {
    await Promise.all([
      this.#resolver.listen(EGRESS_PORTS.dns),
      this.#checks.listen({ tls: EGRESS_PORTS.tls, http: EGRESS_PORTS.http }),
    ]);
  }

  /** Stops both. */
  close(): void {
    this.#resolver.close();
    this.#checks.close();
  }
}

function refusalRecord(refusal: EgressRefusal): DaemonRecord {
  return {
    at: Date.now(),
    type: 'egress',
    event: 'refused',
    via: refusal.via,
    name: recordText(refusal.name),
    rule: recordText(refusal.rule),
    ...(refusal.port === undefined ? {} : { port: refusal.port }),
  };
}

function passageRecord(passage: EgressPassage): DaemonRecord {
  const { via, address, port, bytes } = passage;
  return {
    at: Date.now(),
    type: 'egress',
    event: 'allowed',
    via,
    name: recordText(passage.name),
    rule: recordText(passage.rule),
    ...(address === undefined ? {} : { address }),
    port,
    bytes,
  };
}
