/**
 * How the shim runs an E2B command and how it reads one back, byte for byte as the Python shim
 * (`python/sdk/compat/e2b/command_result.py`) does: E2B's envd runs `/bin/bash -l -c <cmd>`, so the shim
 * asks sandboxd (which runs `/bin/sh -c <line>`) for `exec /bin/bash -l -c '<cmd>'`, stdin from
 * `/dev/null` unless `stdin: true`; `commands.list()` shows such a command as E2B's `ProcessInfo`
 * (`cmd: '/bin/bash'`, `args: ['-l', '-c', cmd]`), whichever of the two shims started it. A terminal
 * (`sbx.pty`) runs E2B's `/bin/bash -i -l` and is listed so.
 */

/** What the shim runs an E2B command with (the line then has the quoted command). */
export const BASH_PREFIX = 'exec /bin/bash -l -c ';
/** What the shim runs on a terminal: E2B's envd starts `/bin/bash -i -l` there. */
export const PTY_SHELL = 'exec /bin/bash -i -l';
/** Appended unless `stdin: true`: E2B starts a command with its stdin closed. */
export const NO_STDIN = ' </dev/null';

/** How Go (so E2B's envd) names each signal in `signal: <name>` (Linux's list). */
export const GO_SIGNAL_NAMES: Readonly<Record<string, string>> = {
  SIGHUP: 'hangup',
  SIGINT: 'interrupt',
  SIGQUIT: 'quit',
  SIGILL: 'illegal instruction',
  SIGTRAP: 'trace/breakpoint trap',
  SIGABRT: 'aborted',
  SIGBUS: 'bus error',
  SIGFPE: 'floating point exception',
  SIGKILL: 'killed',
  SIGUSR1: 'user defined signal 1',
  SIGSEGV: 'segmentation fault',
  SIGUSR2: 'user defined signal 2',
  SIGPIPE: 'broken pipe',
  SIGALRM: 'alarm clock',
  SIGTERM: 'terminated',
  SIGSTKFLT: 'stack fault',
  SIGCHLD: 'child exited',
  SIGCONT: 'continued',
  SIGSTOP: 'stopped (signal)',
  SIGTSTP: 'stopped',
  SIGTTIN: 'stopped (tty input)',
  SIGTTOU: 'stopped (tty output)',
  SIGURG: 'urgent I/O condition',
  SIGXCPU: 'CPU time limit exceeded',
  SIGXFSZ: 'file size limit exceeded',
  SIGVTALRM: 'virtual timer expired',
  SIGPROF: 'profiling timer expired',
  SIGWINCH: 'window changed',
  SIGIO: 'I/O possible',
  SIGPWR: 'power failure',
  SIGSYS: 'bad system call',
};

/** E2B's `error` of a command a signal ended: Go's name, else the signal as sandboxd named it. */
export function signalError(signal: string | null): string {
  const name = signal ?? 'unknown';
  return `signal: ${GO_SIGNAL_NAMES[name] ?? name}`;
}

/** A word quoted for `sh` as Python's `shlex.quote` does (the two shims build the same line). */
export function shellQuote(word: string): string {
  if (word === '') return "''";
  if (!/[^\w@%+=:,./-]/.test(word)) return word;
  return `'${word.replaceAll("'", `'"'"'`)}'`;
}

/** The words of a POSIX shell line (quotes and backslashes; no expansions), or undefined when malformed. */
export function shellSplit(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = '';
      for (i++; i < line.length && line.charAt(i) !== '"'; i++) {
        if (line.charAt(i) === '\\' && '"\\$`'.includes(line.charAt(i + 1))) i++;
        text += line.charAt(i);
      }
      if (i >= line.length) return undefined;
      word = (word ?? '') + text;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return undefined;
      word = (word ?? '') + line.charAt(++i);
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The line sandboxd runs for an E2B command. */
export function bashCommand(cmd: string, stdin: boolean): string {
  return BASH_PREFIX + shellQuote(cmd) + (stdin ? '' : NO_STDIN);
}

/** A command of the sandbox (E2B's `ProcessInfo`). */
export interface ProcessInfo {
  readonly pid: number;
  /** Not recorded: always absent. */
  readonly tag?: string;
  /** `/bin/bash` for a command or terminal the shim started (E2B's), else `/bin/sh`. */
  readonly cmd: string;
  /**
   * `['-l', '-c', cmd]` for a command the shim started, `['-i', '-l']` for its terminal, else
   * `['-c', line]`.
   */
  readonly args: string[];
  /** Not recorded by sandboxd: always empty. */
  readonly envs: Record<string, string>;
  /** Not recorded: always absent. */
  readonly cwd?: string;
}

/**
 * E2B's view of a listed command: one the shim started is bash with its `-c` text, its terminal bash
 * `-i -l`.
 */
export function processInfoOf(pid: number, line: string): ProcessInfo {
  if (line === PTY_SHELL) return { pid, cmd: '/bin/bash', args: ['-i', '-l'], envs: {} };
  if (line.startsWith(BASH_PREFIX)) {
    const quoted = line.slice(BASH_PREFIX.length);
    const words = shellSplit(quoted.endsWith(NO_STDIN) ? quoted.slice(0, -NO_STDIN.length) : quoted);
    if (words?.length === 1) return { pid, cmd: '/bin/bash', args: ['-l', '-c', words[0] ?? ''], envs: {} };
  }
  return { pid, cmd: '/bin/sh', args: ['-c', line], envs: {} };
}
