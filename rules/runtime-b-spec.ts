/**
 * SPEC "Runtimes": what a spec may hold with runtime_b. The SDKs check it before any call; sandboxd's
 * runtime_b driver checks the request again.
 */

/** Tools runtime_b has; only `bash` takes patterns there. */
export const RUNTIME_B_TOOLS = ['read', 'edit', 'list', 'glob', 'grep', 'bash', 'task', 'todowrite'] as const;

/** `RuntimeB`'s `entrypoint`: `package.module:function`. */
export const RUNTIME_B_ENTRYPOINT =
  /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The parts of a spec the rule reads. */
export interface RuntimeBSpecView {
  readonly mcp: Readonly<Record<string, unknown>>;
  readonly rawConfig?: unknown;
  readonly permissions: { readonly tools: Readonly<Record<string, unknown>> };
  readonly agents: Readonly<
    Record<
      string,
      { readonly permissions?: { readonly tools: Readonly<Record<string, unknown>> } | undefined }
    >
  >;
}

function permissionProblems(tools: Readonly<Record<string, unknown>>, at: string): string[] {
  return Object.entries(tools).flatMap(([tool, rule]) => {
    if (!(RUNTIME_B_TOOLS as readonly string[]).includes(tool)) {
      return [`${at}.tools.${tool}: runtime_b has no such tool (it has ${RUNTIME_B_TOOLS.join(', ')})`];
    }
    if (typeof rule !== 'string' && tool !== 'bash')
      return [`${at}.tools.${tool}: only bash accepts patterns with runtime_b`];
    return [];
  });
}

/**
 * What runtime_b cannot run in `spec`, each `field: rule`: no `mcp` or `rawConfig`, only its eight
 * tools, patterns only for `bash`.
 */
export function runtimeBProblems(spec: RuntimeBSpecView): string[] {
  const problems: string[] = [];
  if (Object.keys(spec.mcp).length > 0) problems.push('mcp: is not supported by runtime_b');
  if (spec.rawConfig !== undefined) problems.push('rawConfig: is not supported by runtime_b');
  problems.push(...permissionProblems(spec.permissions.tools, 'permissions'));
  for (const [agent, sub] of Object.entries(spec.agents)) {
    if (sub.permissions !== undefined)
      problems.push(...permissionProblems(sub.permissions.tools, `agents.${agent}.permissions`));
  }
  return problems;
}
