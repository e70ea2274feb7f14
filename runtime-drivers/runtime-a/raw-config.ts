/** Merging SPEC's `rawConfig` into runtime_a's configuration without letting it take over what we own. */
import { RESERVED_RAW_CONFIG_KEYS as RESERVED_KEYS } from '../../rules/raw-config-keys.js';

/** Keys SPEC "AgentSpec" reserves in `rawConfig` (the SDK refuses them too). */
export const RESERVED_RAW_CONFIG_KEYS: readonly string[] = RESERVED_KEYS;

/**
 * Top-level keys the driver keeps besides the reserved ones: `auth` (SPEC "Authentication" 5), and
 * `lsp`/`formatter`, which download servers and tools over the network (runtimes.md §1.2, §1.3).
 */
export const PINNED_KEYS: readonly string[] = ['auth', 'lsp', 'formatter'];

/** Sets an own property, also for `__proto__` (plain assignment would change the prototype). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const CREDENTIAL_SUFFIXES = [
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'credential',
  'credentials',
  'authorization',
  'cookie',
  'accesskey',
  'accesskeyid',
  'privatekey',
];

/** A key that names a credential field (`apiKey`, `api_key`, `x-api-key`, `sessionToken`, `auth`, `headers`). */
export function isCredentialKey(key: string): boolean {
  const folded = key.toLowerCase().replace(/[-_.\s]/g, '');
  return (
    folded === 'auth' || folded === 'headers' || CREDENTIAL_SUFFIXES.some((suffix) => folded.endsWith(suffix))
  );
}

function scrub(value: unknown, at: string, dropped: string[]): unknown {
  if (Array.isArray(value)) return value.map((item, index) => scrub(item, `${at}[${index}]`, dropped));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (isCredentialKey(key)) {
      dropped.push(`${at}.${key}`);
      continue;
    }
    put(out, key, scrub(inner, `${at}.${key}`, dropped));
  }
  return out;
}

/** What is left of `rawConfig`, and the paths that were left out (for a warning, never the values). */
export interface RawConfigMerge {
  /** Keys the driver may merge. */
  readonly kept: Record<string, unknown>;
  /** `rawConfig.<path>` of every dropped entry. */
  readonly dropped: readonly string[];
}

/**
 * Drops reserved and pinned top-level keys and, at any depth, keys naming a credential field.
 *
 * @example
 * ```ts
 * filterRawConfig({ model: 'x', tui: { scroll_speed: 2 } }); // { kept: { tui: … }, dropped: ['rawConfig.model'] }
 * ```
 */
export function filterRawConfig(raw: Readonly<Record<string, unknown>> | undefined): RawConfigMerge {
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (RESERVED_RAW_CONFIG_KEYS.includes(key) || PINNED_KEYS.includes(key) || isCredentialKey(key)) {
      dropped.push(`rawConfig.${key}`);
      continue;
    }
    put(kept, key, scrub(value, `rawConfig.${key}`, dropped));
  }
  return { kept, dropped };
}
