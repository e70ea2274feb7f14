/**
 * SPEC "AgentPermissions" for runtime_b, as LangChain agent middleware.
 *
 * Tools are named by the spec (`read`, `edit`, `list`, `glob`, `grep`, `bash`, `task`, `todowrite`);
 * `TOOL_NAMES` maps deepagents' tool names to them (`write_file`, `edit_file` and `delete` are all
 * `edit`). A tool's action is its `tools` entry, else `tools['*']` when that is an action, else
 * `default`. Only `bash` takes patterns: `{ pattern: action, ... }` is matched against the whole
 * command string in the order written and the **last** matching pattern wins; when none matches, the
 * default applies. Patterns: `*` matches any run of characters (none, spaces, `/` and newlines
 * included), `?` exactly one character, everything else itself; the pattern must match the whole
 * command; a pattern ending in ` *` also matches the command without that tail (`git *` matches `git`
 * and `git status`). These are opencode's rules, with one difference: the command is not split into its
 * sub-commands (`git status && rm -rf x` matches `git *`). Permissions are not a security boundary.
 *
 * The middleware removes a denied tool from what the model is offered and refuses a call to it (or a
 * bash command the patterns deny) with an error tool message, reported to the runner as a
 * `sdk_tool_denied` custom event so it becomes a `tool_call` event with status `error`.
 */
import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch';
import { ToolMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';
import { DENIED_EVENT, TOOL_NAMES, specToolName } from './names.mjs';

export { DENIED_EVENT, TOOL_NAMES, specToolName };

const isAction = (value) => value === 'allow' || value === 'deny';

/**
 * A pattern as an anchored regular expression (see the module comment for the rules).
 *
 * @param {string} pattern
 */
export function patternRegExp(pattern) {
  let source = '';
  for (const char of pattern) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // `git *` also matches a bare `git`.
  if (source.endsWith(' .*')) source = `${source.slice(0, -3)}(?: .*)?`;
  return new RegExp(`^${source}$`, 's');
}

/**
 * Resolves the permissions of the configuration into a checker.
 *
 * @param {{ default?: 'allow'|'deny', tools?: Record<string, unknown> } | undefined} permissions
 */
export function compilePermissions(permissions) {
  const tools = permissions?.tools ?? {};
  const wildcard = tools['*'];
  const base = isAction(wildcard) ? wildcard : permissions?.default === 'deny' ? 'deny' : 'allow';
  const bash = tools.bash;
  const bashPatterns =
    typeof bash === 'object' && bash !== null
      ? Object.entries(bash)
          .filter(([, action]) => isAction(action))
          .map(([pattern, action]) => ({ pattern, regex: patternRegExp(pattern), action }))
      : undefined;

  /** The action for a spec tool name, patterns aside (a bash with patterns is offered). */
  const toolAction = (specName) => {
    if (specName === 'bash' && bashPatterns !== undefined) return 'allow';
    const entry = tools[specName];
    return isAction(entry) ? entry : base;
  };

  /** The action for one bash command. */
  const commandAction = (command) => {
    if (bashPatterns === undefined) return toolAction('bash');
    let action = base;
    for (const rule of bashPatterns) if (rule.regex.test(command)) action = rule.action;
    return action;
  };

  /** Why a call is refused, or undefined when it may run. */
  const refusal = (toolName, args) => {
    const specName = specToolName(toolName);
    if (toolAction(specName) === 'deny') return `permission denied: the ${specName} tool is not allowed`;
    if (specName === 'bash') {
      const command = typeof args?.command === 'string' ? args.command : '';
      if (commandAction(command) === 'deny') return 'permission denied: this bash command is not allowed';
    }
    return undefined;
  };

  return { toolAction, commandAction, refusal, allows: (specName) => toolAction(specName) === 'allow' };
}

/**
 * The permission middleware for one set of permissions.
 *
 * @param {Parameters<typeof compilePermissions>[0]} permissions
 * @param {string} [name] - the middleware's name (each must be unique in one agent)
 */
export function createPermissionMiddleware(permissions, name = 'SdkPermissions') {
  const checker = compilePermissions(permissions);
  return createMiddleware({
    name,
    wrapModelCall: (request, handler) =>
      handler({
        ...request,
        tools: (request.tools ?? []).filter(
          (tool) => typeof tool?.name !== 'string' || checker.allows(specToolName(tool.name)),
        ),
      }),
    wrapToolCall: async (request, handler) => {
      const { name: toolName, args, id } = request.toolCall;
      const reason = checker.refusal(toolName, args);
      if (reason === undefined) return handler(request);
      await dispatchCustomEvent(DENIED_EVENT, { name: toolName, input: args ?? {}, output: reason });
      return new ToolMessage({ content: reason, tool_call_id: id ?? '', name: toolName, status: 'error' });
    },
  });
}
