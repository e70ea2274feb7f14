/**
 * What the SDK and the control plane configure in a sandbox, values included, each kept by the one part
 * that uses it and never echoed: the gateway routes (`POST /v1/gateways`, header values → the gateway
 * host), `secrets=` (`PUT /v1/secrets` → `SecretEnvs`, for commands), the credential broker's rules
 * (`POST /v1/credentials`), the egress policy (`PUT /v1/egress`, the control plane's alone) and what a
 * memory snapshot's copy takes over (`GET /v1/snapshot-carry`).
 */
import { configureCredentialsSchema } from '../protocol/credentials-wire.js';
import { egressPolicyWire } from '../protocol/egress-wire.js';
import { configureSandboxSchema, type GatewayState } from '../protocol/gateway-wire.js';
import { putSecretsSchema } from '../protocol/secrets-wire.js';
import type { SnapshotCarry } from '../protocol/snapshot-carry.js';
import type { GatewayHost } from '../gateway/gateway-host.js';
import type { AgentHost } from './agent-host.js';
import { ok, readJson, type DaemonRoutes } from './daemon-call.js';
import type { CredentialBroker } from './egress/credential-broker.js';
import type { EgressFilter } from './egress/egress-filter.js';
import { RequestError } from './request-error.js';
import type { SecretEnvs } from './secret-envs.js';

/** What the configuration routes need. */
export interface ConfigRoutesOptions {
  readonly gateways: GatewayHost;
  readonly secretEnvs: SecretEnvs;
  readonly agents: AgentHost;
  /** The egress policy's resolver and name checks (inside a sandbox). */
  readonly egress?: EgressFilter;
  /** The credential broker (inside a sandbox). */
  readonly broker?: CredentialBroker;
}

/** ConfigureStatus: ports, urls and failure classes, never a value. */
function gatewayState(host: GatewayHost): GatewayState {
  return {
    routes: Object.fromEntries(
      [...host.status()].map(([name, s]) => [
        name,
        { port: s.port, url: s.url, lastErrorClass: s.lastErrorClass ?? null },
      ]),
    ),
  };
}

/** The configuration routes. */
export function configRoutes(options: ConfigRoutesOptions): DaemonRoutes {
  const { gateways, secretEnvs, agents } = options;
  const brokerOf = (): CredentialBroker => {
    if (options.broker === undefined) {
      throw new RequestError('invalid_argument', 'credentials are brokered inside a sandbox only');
    }
    return options.broker;
  };
  return {
    'POST /v1/gateways': async ({ req }) => {
      // The body holds header values: it goes to the gateway host and nowhere else.
      const { routes } = await readJson(req, configureSandboxSchema);
      const outcome = await gateways.apply(routes);
      if (!outcome.ok) {
        throw new RequestError(outcome.failure.code, outcome.failure.message, outcome.failure.errorClass);
      }
      return ok(gatewayState(gateways));
    },
    'GET /v1/gateways': () => ok(gatewayState(gateways)),
    // What a memory snapshot's copy takes over (protocol/snapshot-carry.ts): asked as it is taken.
    'GET /v1/snapshot-carry': () => {
      const gatewayPorts = Object.fromEntries([...gateways.status()].map(([name, s]) => [name, s.port]));
      const standby = agents.carried();
      return ok({ gatewayPorts, ...(standby === undefined ? {} : { standby }) } satisfies SnapshotCarry);
    },
    // The control plane's alone (CONTROL_ONLY): it changes the driver's tables in the same step.
    'PUT /v1/egress': async ({ req }) => {
      const policy = await readJson(req, egressPolicyWire);
      if (options.egress === undefined) throw new RequestError('not_found', 'no egress filter here');
      options.egress.update(policy);
      return ok(policy);
    },
    'PUT /v1/secrets': async ({ req }) => {
      // The body holds secret values: they go to `secretEnvs` and nowhere else.
      secretEnvs.replace((await readJson(req, putSecretsSchema)).envs);
      return ok({ names: secretEnvs.names });
    },
    'POST /v1/credentials': async ({ req }) => {
      // The body holds header values: they go to the broker and nowhere else.
      const { rules } = await readJson(req, configureCredentialsSchema);
      const started = brokerOf().state().proxy !== null;
      const state = await brokerOf().configure(rules);
      // A runtime prepared before the proxy existed would run the agent's tools without it.
      if (!started && state.proxy !== null) agents.environmentChanged();
      return ok(state);
    },
    'GET /v1/credentials': () => ok(brokerOf().state()),
  };
}
