/**
 * The spec's tool names, and the custom event a refused tool call dispatches: what both the permission
 * middleware and the event mapper need, without loading LangChain (the `session` line goes out first).
 */

/** deepagents' (and langchain's todo list) tool names → the spec's. */
export const TOOL_NAMES = Object.freeze({
  read_file: 'read',
  write_file: 'edit',
  edit_file: 'edit',
  delete: 'edit',
  ls: 'list',
  glob: 'glob',
  grep: 'grep',
  execute: 'bash',
  task: 'task',
  write_todos: 'todowrite',
});

/** The spec's name of a tool (a tool the table does not know keeps its own name). */
export function specToolName(name) {
  return Object.hasOwn(TOOL_NAMES, name) ? TOOL_NAMES[name] : name;
}

/** The custom event a refused call dispatches. */
export const DENIED_EVENT = 'sdk_tool_denied';
