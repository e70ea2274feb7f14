/**
 * The checks of an agent call against the sandbox handle's gateways (SPEC "Errors", preset rules 1 and
 * 4), before any call: every gateway the spec needs is one of the handle's routes, and where the handle
 * knows a route's preset (the creating handle; a connected one has state only) the model fits it.
 */
import { InvalidArgumentError } from '../rules/errors.js';
import type { AgentSpec } from './agent-spec.js';
import { McpRemote } from './mcp-servers.js';
import type { SandboxGateways } from './sandbox-gateways.js';

function fail(operation: string, field: string, rule: string): never {
  throw new InvalidArgumentError(`${operation}: ${field}: ${rule}`, { field });
}

/** Each gateway the spec needs with the field that names it. */
function neededGateways(spec: AgentSpec): [field: string, gateway: string][] {
  return [
    ['spec.model.gateway', spec.model.gateway],
    ...Object.entries(spec.mcp).flatMap(([name, server]): [string, string][] =>
      server instanceof McpRemote ? [[`spec.mcp.${name}.gateway`, server.gateway]] : [],
    ),
  ];
}

/**
 * Checks `spec` (and the `model` call option) against the handle's gateways:
 * - the model's gateway and every `McpRemote` gateway is a route of the handle (with a listener);
 * - with a preset route: vendor_a and vendor_d serve the model (the `model` option when given, else
 *   `spec.model.id`) only when it is in the preset's `models`, and so every subagent's model; vendor_d
 *   also the small model; a `compatible` model's base path equals the preset's.
 *
 * @throws InvalidArgumentError naming the field and the rule, never a value
 */
export function checkAgentGateways(
  operation: string,
  spec: AgentSpec,
  modelOption: string | undefined,
  gateways: SandboxGateways,
): void {
  for (const [field, name] of neededGateways(spec)) {
    if (gateways.get(name) === undefined) {
      fail(operation, field, 'names no gateway route of this sandbox (give it in gateways at create)');
    }
  }
  const binding = gateways.definition(spec.model.gateway)?.preset;
  if (binding === undefined) return;
  const { provider } = spec.model;
  const models = binding.models;
  if ((provider === 'vendor_a' || provider === 'vendor_d') && models !== undefined) {
    const [field, id] = modelOption === undefined ? ['spec.model.id', spec.model.id] : ['model', modelOption];
    if (!models.includes(id)) fail(operation, field, "is not in the models of the gateway's preset");
    if (provider === 'vendor_d' && !models.includes(spec.smallModel)) {
      fail(operation, 'spec.smallModel', "is not in the models of the gateway's preset (preset rule 1)");
    }
    // A subagent's model goes through the same route: the gateway would refuse any other (403).
    for (const [name, sub] of Object.entries(spec.agents)) {
      if (sub.model !== undefined && !models.includes(sub.model)) {
        fail(operation, `spec.agents.${name}.model`, "is not in the models of the gateway's preset");
      }
    }
  }
  if (
    provider === 'compatible' &&
    binding.provider === 'compatible' &&
    spec.model.basePath !== binding.basePath
  ) {
    fail(operation, 'spec.model.basePath', "must equal the base path of the gateway's preset");
  }
}
