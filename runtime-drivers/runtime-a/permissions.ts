/**
 * SPEC "AgentPermissions" as opencode's `permission` block (runtimes.md §1.2, §1.7): every permission
 * opencode knows is written out, so none falls back to opencode's own defaults (`external_directory`
 * and `doom_loop` default to `ask`, which `opencode run` auto-rejects); `ask` is never produced.
 */

/** A permission action; `ask` does not exist here. */
export type PermissionAction = 'allow' | 'deny';

/** One tool's rule: an action, or patterns to actions where the last matching pattern wins. */
export type ToolRule = PermissionAction | Readonly<Record<string, PermissionAction>>;

/** Permissions as already validated by the SDK. */
export interface PermissionsInput {
  /** Action for every permission without an entry. */
  readonly default: PermissionAction;
  /** Per-tool rules, in the caller's order. */
  readonly tools: Readonly<Record<string, ToolRule>>;
}

/** The permission keys of opencode 1.18.33 (runtimes.md §1.2). */
export const OPENCODE_PERMISSION_KEYS = [
  'read',
  'edit',
  'glob',
  'grep',
  'list',
  'bash',
  'task',
  'external_directory',
  'todowrite',
  'question',
  'webfetch',
  'websearch',
  'lsp',
  'doom_loop',
  'skill',
] as const;

/** Denied unless a tools entry names them (SPEC "AgentPermissions"). */
export const DENIED_BY_DEFAULT: readonly string[] = ['question', 'webfetch', 'websearch'];

/** A permission block or pattern map that cannot be written so opencode reads it as meant. */
export class PermissionOrderError extends Error {
  override readonly name = 'PermissionOrderError';
}

/**
 * Keys JavaScript (ours and opencode's JSON parser alike) moves ahead of all others in an object, which
 * would silently reorder last-match rules.
 */
const INTEGER_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

function isReordered(key: string): boolean {
  return INTEGER_KEY.test(key) && Number(key) < 2 ** 32 - 1;
}

function patternMap(tool: string, rule: ToolRule): ToolRule {
  if (typeof rule === 'string') return rule;
  const out: Record<string, PermissionAction> = {};
  for (const [pattern, action] of Object.entries(rule)) {
    if (isReordered(pattern)) {
      throw new PermissionOrderError(
        `permissions.tools.${tool}: a pattern that is a whole number would lose its place (last match wins)`,
      );
    }
    out[pattern] = action;
  }
  return out;
}

/**
 * opencode's `permission` object. Order is meaning (last match wins): `*` first, then every known key
 * with its default, then the caller's entries in their order, each replacing the default it names.
 *
 * @example
 * ```ts
 * opencodePermissions({ default: 'deny', tools: { bash: { '*': 'deny', 'git *': 'allow' } } });
 * // { '*': 'deny', read: 'deny', …, question: 'deny', …, bash: { '*': 'deny', 'git *': 'allow' } }
 * ```
 * @throws PermissionOrderError for a tool name or pattern that is a whole number
 */
export function opencodePermissions(input: PermissionsInput): Record<string, ToolRule> {
  const wildcard = input.tools['*'];
  const base: PermissionAction = typeof wildcard === 'string' ? wildcard : input.default;
  const out: Record<string, ToolRule> = {
    '*': wildcard === undefined ? base : patternMap('*', wildcard),
  };
  for (const key of OPENCODE_PERMISSION_KEYS) {
    out[key] = DENIED_BY_DEFAULT.includes(key) ? 'deny' : base;
  }
  for (const [tool, rule] of Object.entries(input.tools)) {
    if (tool === '*') continue;
    if (isReordered(tool)) {
      throw new PermissionOrderError(`permissions.tools.${tool}: a tool name that is a whole number`);
    }
    // Deleting first puts the caller's entry after every default, where last-match gives it the say.
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- keys are the caller's tool names
    delete out[tool];
    out[tool] = patternMap(tool, rule);
  }
  return out;
}
