"""The options of ``commands.run`` and ``pty.create`` (and the callbacks of ``commands.connect`` and
``pty.connect``), checked before any call with the rules of ``sdk/commands.ts`` and ``sdk/pty.ts``: each
becomes the wire body of the command a process starts with.

Python takes durations in seconds; the wire carries milliseconds. A failure is an
``InvalidArgumentException`` whose message names the call, each failed field (snake_case) and its rule,
and whose ``field`` is the first failed one; never a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Final, Mapping, TypeGuard, cast

from ._accounts import ACCOUNT_RULE, account_field, check_account, is_account
from ._check import Checker, check_bool, check_int, fail, matches, whole
from ._option_checks import check_seconds
from ._rules import ENV_NAME, ENV_NAME_RULE
from .errors import InvalidArgumentException

#: A callback of command output: each chunk as text.
OutputCallback = Callable[[str], object]

#: The rule a ``pid`` argument breaks.
PID_RULE: Final = "must be a positive whole number"


def is_pid(value: object) -> TypeGuard[int]:
    """True for what can be a pid sandboxd gave: a positive whole number (never a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def pid_of(call: str, pid: object) -> int:
    """The ``pid`` of ``call`` (``commands.connect``, a terminal's by-pid calls), checked before any call.

    :raises InvalidArgumentException: (``field`` ``pid``) for anything but a positive whole number
    """
    if not is_pid(pid):
        fail(call, ("pid",), PID_RULE)
    return pid


@dataclass(frozen=True)
class RunOptions:
    """``commands.run``'s options, checked: ``start`` is the wire body of the command."""

    start: dict[str, Any] = field(repr=False)
    on_stdout: OutputCallback | None
    on_stderr: OutputCallback | None
    background: bool


def check_output_callbacks(
    check: Checker, on_stdout: object, on_stderr: object
) -> tuple[OutputCallback | None, OutputCallback | None]:
    """``on_stdout`` and ``on_stderr`` of ``commands.run`` and ``commands.connect``: each None or
    callable (a problem is added to ``check``)."""
    callbacks: list[OutputCallback | None] = []
    for name, callback in (("on_stdout", on_stdout), ("on_stderr", on_stderr)):
        if callback is not None and not callable(callback):
            check.add((name,), "must be callable")
        callbacks.append(callback if callable(callback) else None)
    return callbacks[0], callbacks[1]


def resolve_command_connect(
    pid: object, on_stdout: object, on_stderr: object
) -> tuple[int, OutputCallback | None, OutputCallback | None]:
    """Checks ``commands.connect``'s arguments (the pid first, alone); raises ``InvalidArgumentException``
    before any call."""
    checked = pid_of("commands.connect", pid)
    check = Checker("commands.connect")
    stdout_callback, stderr_callback = check_output_callbacks(check, on_stdout, on_stderr)
    check.done()
    return checked, stdout_callback, stderr_callback


def _envs(check: Checker, envs: object) -> dict[str, str]:
    """``envs`` of a command: None or a mapping of variable names to strings (a copy)."""
    env: dict[str, str] = {}
    if envs is not None and not isinstance(envs, Mapping):
        check.add(("envs",), "must be a mapping of names to strings")
    for name, value in envs.items() if isinstance(envs, Mapping) else []:
        if not isinstance(name, str):
            check.add(("envs",), ENV_NAME_RULE)
        elif not matches(ENV_NAME, name):
            check.add(("envs", name), ENV_NAME_RULE)
        elif not isinstance(value, str):
            check.add(("envs", name), "must be a string")
        else:
            env[name] = value
    return env


def _cwd(check: Checker, cwd: object) -> None:
    """``cwd`` of a command: None or an absolute path."""
    if cwd is not None and (not isinstance(cwd, str) or not cwd.startswith("/")):
        check.add(("cwd",), "must be an absolute path")


def _cmd(check: Checker, cmd: object) -> None:
    """``cmd`` of a command: a string, not empty."""
    if not isinstance(cmd, str):
        check.add(("cmd",), "must be a string")
    elif cmd == "":
        check.add(("cmd",), "must not be empty")


def _user(check: Checker, user: object) -> None:
    """``user`` of a command: the account it runs as."""
    if not is_account(user):
        check.add(("user",), ACCOUNT_RULE)


def _timeout_ms(check: Checker, timeout: object) -> int | None:
    """``timeout`` of a command: None (none) or seconds, 0 or more (0: none), as milliseconds."""
    return None if timeout is None else check_seconds(check, "timeout", timeout, 0)


def _start_body(
    call: str,
    first: Mapping[str, Any],
    user: object,
    then: Mapping[str, Any],
    cwd: object,
    timeout_ms: int | None,
) -> dict[str, Any]:
    """The wire body of a command's start, once its options passed: ``first``, the account (root only),
    ``then``, and ``cwd`` and ``timeoutMs`` when given (the order of TypeScript's body)."""
    start: dict[str, Any] = {**first, **account_field(check_account(user, call)), **then}
    if cwd is not None:
        start["cwd"] = cwd
    if timeout_ms is not None:
        start["timeoutMs"] = timeout_ms
    return start


def resolve_run_options(
    cmd: object,
    *,
    envs: object,
    cwd: object,
    timeout: object,
    kill_tree: object,
    on_stdout: object,
    on_stderr: object,
    background: object,
    user: object = "user",
) -> RunOptions:
    """Checks ``commands.run``'s arguments; raises ``InvalidArgumentException`` before any call."""
    check = Checker("commands.run")
    _cmd(check, cmd)
    _user(check, user)
    env = _envs(check, envs)
    _cwd(check, cwd)
    timeout_ms = _timeout_ms(check, timeout)
    check_bool(check, ("kill_tree",), kill_tree)
    check_bool(check, ("background",), background)
    stdout_callback, stderr_callback = check_output_callbacks(check, on_stdout, on_stderr)
    check.done()
    first = {"cmd": cmd, "envs": env, "killTree": kill_tree}
    start = _start_body("commands.run", first, user, {}, cwd, timeout_ms)
    return RunOptions(start, stdout_callback, stderr_callback, bool(background))


#: A terminal's program by default (``sdk/pty.ts``): a login shell, bash when the template has it.
DEFAULT_PTY_CMD: Final = "command -v bash >/dev/null && exec bash -l; exec sh -l"
#: A terminal's largest width and height, characters (``terminalSizeSchema``).
MAX_PTY_SIZE: Final = 1000

#: A terminal's output callback: each chunk as the bytes the terminal showed.
DataCallback = Callable[[bytes], object]


def check_pty_size(check: Checker, cols: object, rows: object) -> tuple[int, int]:
    """``cols`` and ``rows`` of a terminal: whole numbers from 1 to 1000 (a problem is added to
    ``check``; the pair is then meaningless)."""
    wide = check_int(check, ("cols",), cols, 1, MAX_PTY_SIZE)
    high = check_int(check, ("rows",), rows, 1, MAX_PTY_SIZE)
    return (whole(cols) if wide else 0), (whole(rows) if high else 0)


def check_on_data(check: Checker, on_data: object) -> DataCallback | None:
    """``on_data`` of ``pty.create`` and ``pty.connect``: required, callable."""
    if not callable(on_data):
        check.add(("on_data",), "must be callable")
        return None
    return cast(DataCallback, on_data)


@dataclass(frozen=True)
class PtyOptions:
    """``pty.create``'s options, checked: ``start`` is the wire body of the terminal's command."""

    start: dict[str, Any] = field(repr=False)
    on_data: DataCallback


def resolve_pty_options(
    *,
    cols: object,
    rows: object,
    cwd: object,
    envs: object,
    user: object,
    cmd: object,
    timeout: object,
    on_data: object,
) -> PtyOptions:
    """Checks ``pty.create``'s arguments in ``sdk/pty.ts``'s order; raises ``InvalidArgumentException``
    before any call. The body is a background command's with ``pty: {cols, rows}`` and ``killTree``."""
    check = Checker("pty.create")
    size = check_pty_size(check, cols, rows)
    _cwd(check, cwd)
    env = _envs(check, envs)
    _user(check, user)
    _cmd(check, cmd)
    timeout_ms = _timeout_ms(check, timeout)
    callback = check_on_data(check, on_data)
    check.done()
    assert callback is not None
    first = {"cmd": cmd, "pty": {"cols": size[0], "rows": size[1]}}
    start = _start_body("pty.create", first, user, {"envs": env, "killTree": True}, cwd, timeout_ms)
    return PtyOptions(start, callback)


def resolve_pty_connect(pid: object, on_data: object) -> tuple[int, DataCallback]:
    """``pty.connect``'s pid (a positive whole number) and ``on_data``, checked before any call."""
    check = Checker("pty.connect")
    if not is_pid(pid):
        check.add(("pid",), PID_RULE)
    callback = check_on_data(check, on_data)
    check.done()
    assert is_pid(pid) and callback is not None
    return pid, callback


def pty_size(cols: object, rows: object) -> tuple[int, int]:
    """``pty.resize``'s size, checked before any call."""
    check = Checker("pty.resize")
    size = check_pty_size(check, cols, rows)
    check.done()
    return size


def pty_input(data: object) -> bytes:
    """What ``pty.send_input`` types: text as UTF-8, or bytes (a bytearray or memoryview too), checked
    before any call."""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise InvalidArgumentException("pty.send_input: data: must be str or bytes", "data")
