"""E2B's command results: ``CommandResult``, ``CommandExitException`` (a non-zero exit), ``ProcessInfo``,
``PtySize`` (a terminal's size), and the native result translated into them."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Final

from ..._command_output import CommandResult as NativeCommandResult
from ..._wire import ProcessInfo as NativeProcessInfo
from .exceptions import SandboxException, TimeoutException

Stdout = str
Stderr = str
#: A terminal's output (E2B's): the bytes it showed, as they came.
PtyOutput = bytes

#: How Go (so E2B's envd) names each signal in ``signal: <name>`` (Linux's list; the same table as the
#: TypeScript shim's ``GO_SIGNAL_NAMES``).
_SIGNAL_WORDS: Final = {
    "SIGHUP": "hangup",
    "SIGINT": "interrupt",
    "SIGQUIT": "quit",
    "SIGILL": "illegal instruction",
    "SIGTRAP": "trace/breakpoint trap",
    "SIGABRT": "aborted",
    "SIGBUS": "bus error",
    "SIGFPE": "floating point exception",
    "SIGKILL": "killed",
    "SIGUSR1": "user defined signal 1",
    "SIGSEGV": "segmentation fault",
    "SIGUSR2": "user defined signal 2",
    "SIGPIPE": "broken pipe",
    "SIGALRM": "alarm clock",
    "SIGTERM": "terminated",
    "SIGSTKFLT": "stack fault",
    "SIGCHLD": "child exited",
    "SIGCONT": "continued",
    "SIGSTOP": "stopped (signal)",
    "SIGTSTP": "stopped",
    "SIGTTIN": "stopped (tty input)",
    "SIGTTOU": "stopped (tty output)",
    "SIGURG": "urgent I/O condition",
    "SIGXCPU": "CPU time limit exceeded",
    "SIGXFSZ": "file size limit exceeded",
    "SIGVTALRM": "virtual timer expired",
    "SIGPROF": "profiling timer expired",
    "SIGWINCH": "window changed",
    "SIGIO": "I/O possible",
    "SIGPWR": "power failure",
    "SIGSYS": "bad system call",
}
#: What the shim runs for an E2B command: E2B runs ``/bin/bash -l -c cmd``, its stdin closed unless
#: ``stdin=True``.
BASH_PREFIX: Final = "exec /bin/bash -l -c "
NO_STDIN: Final = " </dev/null"
#: What the shim runs on a terminal (``sbx.pty.create``): E2B's envd starts ``/bin/bash -i -l`` there (the
#: TypeScript shim's ``PTY_SHELL``, so either lists the other's terminals as E2B's).
PTY_SHELL: Final = "exec /bin/bash -i -l"


@dataclass
class PtySize:
    """A terminal's size (E2B's; note the order: ``PtySize(rows, cols)``), each 1 to 1000 here."""

    #: Number of rows.
    rows: int
    #: Number of columns.
    cols: int


@dataclass
class CommandResult:
    """A finished command (E2B's fields)."""

    stderr: str
    stdout: str
    #: Exit status; -1 when a signal ended the command (as in E2B).
    exit_code: int
    #: ``exit status N`` for a non-zero exit, ``signal: killed`` for a signal, else None.
    error: str | None


@dataclass
class CommandExitException(SandboxException, CommandResult):
    """A command exited with a non-zero code; it carries the result's fields."""

    def __post_init__(self) -> None:
        Exception.__init__(self, str(self))
        self.code = "command_exit"

    def __str__(self) -> str:
        return f"Command exited with code {self.exit_code} and error:\n{self.stderr}"


@dataclass
class ProcessInfo:
    """A command sandboxd runs (E2B's fields: the shim starts each as ``/bin/bash -l -c cmd``, and a
    terminal as ``/bin/bash -i -l``)."""

    pid: int
    tag: str | None
    cmd: str
    args: list[str]
    envs: dict[str, str]
    cwd: str | None


def bash_command(cmd: str, stdin: bool) -> str:
    """The native command line that runs ``cmd`` as E2B does."""
    return BASH_PREFIX + shlex.quote(cmd) + ("" if stdin else NO_STDIN)


def to_process_info(info: NativeProcessInfo) -> ProcessInfo:
    """E2B's view of a listed command; a command the shim started shows as bash with its ``-c`` text, a
    terminal it opened as bash ``-i -l``."""
    if info.cmd == PTY_SHELL:
        return ProcessInfo(info.pid, None, "/bin/bash", ["-i", "-l"], {}, None)
    if info.cmd.startswith(BASH_PREFIX):
        quoted = info.cmd[len(BASH_PREFIX) :].removesuffix(NO_STDIN)
        words = shlex.split(quoted)
        if len(words) == 1:
            return ProcessInfo(info.pid, None, "/bin/bash", ["-l", "-c", words[0]], {}, None)
    return ProcessInfo(info.pid, None, "/bin/sh", ["-c", info.cmd], {}, None)


def signal_error(signal: str | None) -> str:
    """E2B's ``error`` of a command a signal ended: Go's name, else the signal as sandboxd named it."""
    name = signal or "unknown"
    return f"signal: {_SIGNAL_WORDS.get(name, name)}"


def to_result(native: NativeCommandResult) -> CommandResult:
    """E2B's result of a finished command."""
    if native.exit_code is None:
        return CommandResult(native.stderr, native.stdout, -1, signal_error(native.signal))
    error = None if native.exit_code == 0 else f"exit status {native.exit_code}"
    return CommandResult(native.stderr, native.stdout, native.exit_code, error)


def checked_result(native: NativeCommandResult, timed_out: bool, call: str = "commands.run") -> CommandResult:
    """The result, or E2B's exception: ``TimeoutException`` when the command (or terminal: ``call``
    ``pty.create``) outlived its ``timeout``, ``CommandExitException`` for a non-zero exit."""
    if timed_out and native.exit_code is None:
        what = "terminal" if call.startswith("pty.") else "command"
        raise TimeoutException(
            f"the {what} ran longer than its timeout; pass timeout= (seconds, 0 for none) to {call}",
            "timeout",
        )
    result = to_result(native)
    if result.exit_code != 0:
        raise CommandExitException(result.stderr, result.stdout, result.exit_code, result.error)
    return result
