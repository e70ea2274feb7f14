/**
 * The cross-language parity corpus (test/parity/corpus.json, recorded from the built SDK by
 * test/parity/generate-corpus.mjs): the TypeScript SDK must still give every recorded outcome, and
 * build every recorded gateway alike. python/tests/test_parity.py holds the Python SDK to the same.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../sdk/index.js';

type Outcome = 'ok' | { error: string; field: string | null; code: string };
interface Case {
  type: string;
  options: Record<string, unknown>;
  outcome: Outcome;
  built?: unknown;
}

const corpus = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'parity', 'corpus.json'), 'utf8')) as {
  version: number;
  cases: Case[];
};

type Make = (options: never) => unknown;
const MARKERS: Record<string, Make> = {
  $SecretRef: (o) => new sdk.SecretRef(o),
  $AgentModel: (o) => new sdk.AgentModel(o),
  $AgentPermissions: (o) => new sdk.AgentPermissions(o),
  $SubAgent: (o) => new sdk.SubAgent(o),
  $McpLocal: (o) => new sdk.McpLocal(o),
  $McpRemote: (o) => new sdk.McpRemote(o),
  $RuntimeB: (o) => new sdk.RuntimeB(o),
  $AgentSpec: (o) => new sdk.AgentSpec(o),
  $agentPoolWarmup: (runtime) => sdk.agentPoolWarmup(runtime),
};

/** Builds the SDK instances the markers (`{ "$AgentModel": {...} }`) stand for. */
function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const [only] = entries;
  const make = entries.length === 1 && only !== undefined ? MARKERS[only[0]] : undefined;
  if (make !== undefined && only !== undefined) return make(decode(only[1]) as never);
  return Object.fromEntries(entries.map(([k, v]) => [k, decode(v)]));
}

function run(type: string, options: Record<string, unknown>): unknown {
  const o = decode(options) as Record<string, unknown>;
  const api = sdk as unknown as Record<string, unknown>;
  if (/^(vendor[A-K]|compatible)Gateway$/.test(type)) {
    const { secret, ...rest } = o;
    return (api[type] as (s: unknown, r: unknown) => unknown)(secret, rest);
  }
  if (type === 'agentPoolWarmup') return sdk.agentPoolWarmup(o['runtime'] as never);
  if (type === 'checkSpecForRuntime') {
    sdk.checkSpecForRuntime(o['spec'] as sdk.AgentSpec, o['runtime'] as never);
    return undefined;
  }
  return new (api[type] as new (options: unknown) => unknown)(o);
}

function builtOf(gateway: sdk.SecretGateway): unknown {
  const source = (s: string | sdk.SecretRef) =>
    typeof s === 'string' ? s : { $SecretRef: { name: s.name, region: s.region ?? null } };
  return {
    upstream: gateway.upstream,
    headers: Object.fromEntries(Object.entries(gateway.headers).map(([k, v]) => [k, source(v)])),
    allow: gateway.allow.map(([m, p]) => [m, p]),
    ratePerMinute: gateway.ratePerMinute,
    preset:
      gateway.preset === undefined ? null : { ...gateway.preset, models: gateway.preset.models ?? null },
  };
}

function outcomeOf(c: Case): { outcome: Outcome; built?: unknown } {
  try {
    const value = run(c.type, c.options);
    return value instanceof sdk.SecretGateway ? { outcome: 'ok', built: builtOf(value) } : { outcome: 'ok' };
  } catch (error) {
    if (!(error instanceof sdk.InvalidArgumentError)) throw error;
    return { outcome: { error: error.constructor.name, field: error.field ?? null, code: error.code } };
  }
}

describe('the parity corpus', () => {
  it('is large, with accepted and rejected cases of every type', () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(500);
    const types = new Set(corpus.cases.map((c) => c.type));
    for (const type of types) {
      const outcomes = corpus.cases.filter((c) => c.type === type).map((c) => c.outcome === 'ok');
      expect(outcomes, type).toContain(true);
      expect(outcomes, type).toContain(false);
    }
  });

  it.each(corpus.cases.map((c, i) => [i, c.type, c] as const))(
    'case %i (%s) gives its recorded outcome',
    (_, __, c) => {
      const expected =
        c.built === undefined ? { outcome: c.outcome } : { outcome: c.outcome, built: c.built };
      expect(outcomeOf(c)).toEqual(expected);
    },
  );
});
