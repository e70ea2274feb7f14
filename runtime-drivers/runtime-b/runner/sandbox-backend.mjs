/**
 * The file tools' backend: the sandbox's real filesystem, the one `execute` (bash) sees. An absolute
 * path names the sandbox's real path; a relative one resolves against the working directory (SPEC: the
 * agent sees the same filesystem as any other sandbox code). deepagents' `virtualMode` would show the
 * working directory as `/`, so `/home/user/a.txt` written by a tool would be `<workdir>/home/user/a.txt`
 * to bash; its non-virtual mode keeps real paths for reads and writes but still reads `/` as the working
 * directory in `glob` and lists relative names, which this class puts right.
 *
 * A tool call without a path (ls, glob, grep) searches the working directory: `workdirDefaults` fills it
 * in before deepagents' schemas default it to `/`.
 */
import { readdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

import { createMiddleware } from 'langchain';
import { applyGrepMaxCount, FilesystemBackend, LocalShellBackend } from 'deepagents';
import fg from 'fast-glob';

/** Kernel views a search of `/` skips: they are not files anyone wrote, and reading some never ends. */
const PSEUDO_ROOTS = new Set(['proc', 'sys', 'dev']);

/**
 * Where deepagents itself writes, at fixed paths under `/` (a large tool result, an evicted prompt): the
 * sandbox user cannot write `/`, so these live under the working directory, as they did in virtual mode.
 */
const DEEPAGENTS_ROOTS = ['/large_tool_results/', '/conversation_history/'];

/** The tools whose `path` is optional, and so default to the working directory. */
const PATH_TOOLS = new Set(['ls', 'glob', 'grep']);

/** LocalShellBackend with real paths throughout. */
export class SandboxBackend extends LocalShellBackend {
  /** @param {{ workdir: string }} options */
  static async open({ workdir }) {
    const backend = new SandboxBackend({ rootDir: workdir, virtualMode: false, inheritEnv: true });
    await backend.initialize();
    return backend;
  }

  /** Real paths; deepagents' own files (see DEEPAGENTS_ROOTS) go under the working directory. */
  resolvePath(key) {
    if (DEEPAGENTS_ROOTS.some((root) => key.startsWith(root))) return join(this.cwd, key);
    return super.resolvePath(key);
  }

  /** Entries with their absolute paths (LocalShellBackend shortens them to the working directory's). */
  async ls(dirPath) {
    return FilesystemBackend.prototype.ls.call(this, dirPath || this.cwd);
  }

  /** Matches under `searchPath` (real; relative to the working directory), or `/` for an absolute pattern. */
  async glob(pattern, searchPath) {
    let base = searchPath ? this.resolvePath(searchPath) : this.cwd;
    let relativePattern = pattern;
    if (isAbsolute(pattern)) {
      base = '/';
      relativePattern = pattern.slice(1);
    }
    let matches;
    try {
      matches = await fg(relativePattern, {
        cwd: base,
        absolute: true,
        dot: true,
        onlyFiles: false,
        followSymbolicLinks: false,
        suppressErrors: true,
        ignore: base === '/' ? [...PSEUDO_ROOTS].map((name) => `${name}/**`) : [],
        stats: true,
      });
    } catch {
      return { files: [] };
    }
    const files = matches
      .filter((entry) => entry.stats !== undefined && (entry.stats.isFile() || entry.stats.isDirectory()))
      .map((entry) => ({
        path: entry.path,
        is_dir: entry.stats.isDirectory(),
        size: entry.stats.isFile() ? entry.stats.size : 0,
        modified_at: entry.stats.mtime.toISOString(),
      }))
      .sort((a, b) => a.path.localeCompare(b.path));
    return { files };
  }

  /** A literal search; one of `/` searches every top-level folder but the kernel's views. */
  async grep(pattern, dirPath, glob = null, maxCount = null) {
    const base = this.resolvePath(dirPath || this.cwd);
    if (base !== '/') return super.grep(pattern, base, glob, maxCount);
    let names;
    try {
      names = (await readdir('/')).filter((name) => !PSEUDO_ROOTS.has(name)).sort();
    } catch {
      return { matches: [] };
    }
    const matches = [];
    for (const name of names) {
      const found = await super.grep(pattern, join('/', name), glob, null);
      matches.push(...(found.matches ?? []));
    }
    return applyGrepMaxCount({ result: { matches }, maxCount });
  }
}

/**
 * A middleware that gives the path-taking tools the working directory when the model names no path
 * (their schemas would otherwise default it to `/`, the real root).
 *
 * @param {string} workdir
 * @param {string} [name] - the middleware's name (each must be unique in one agent)
 */
export function workdirDefaults(workdir, name = 'SdkWorkdirDefaults') {
  const home = resolve(workdir);
  return createMiddleware({
    name,
    wrapToolCall: (request, handler) => {
      const { name: toolName, args } = request.toolCall;
      if (!PATH_TOOLS.has(toolName) || (typeof args?.path === 'string' && args.path !== '')) {
        return handler(request);
      }
      return handler({ ...request, toolCall: { ...request.toolCall, args: { ...args, path: home } } });
    },
  });
}
