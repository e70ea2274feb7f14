"""What the sync and the async shim's ``sbx.pty`` share (E2B's ``sandbox_sync/commands/pty.py`` and
``sandbox_async/commands/pty.py`` on the native terminals, ``sdk.pty``; the TypeScript shim's ``pty.ts``):
``create``'s and ``connect``'s arguments checked before any call and turned into the native ``pty.create``
keywords (E2B's ``/bin/bash -i -l``, its ``TERM`` / ``LANG`` / ``LC_ALL`` under the program's ``envs``, the
account's home, E2B's 60 s deadline), and the calls by pid (``send_stdin``, ``resize``) as operations the
sync shim drives and the async one awaits. ``kill`` is the commands' ``kill_op`` (False when no such
terminal runs)."""

from __future__ import annotations

from typing import Final

from ..._accounts import ACCOUNT_HOMES
from ..._http import Op
from ..._sandbox_core import SandboxCore
from ..._command_options import MAX_PTY_SIZE
from ._command_options import RunPlan, check_pid, command_timeout
from ._options import check_envs, check_user, sandbox_path
from .command_result import PTY_SHELL
from .exceptions import InvalidArgumentException

#: What E2B's ``pty.create`` puts in a terminal's environment unless ``envs`` names them.
TERMINAL_ENVS: Final = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def check_size(size: object, call: str) -> tuple[int, int]:
    """``cols`` and ``rows`` of a ``PtySize`` (anything with both attributes): whole numbers from 1 to
    1000, checked before any call."""
    if not hasattr(size, "rows") or not hasattr(size, "cols"):
        raise InvalidArgumentException(f"{call}: size: must be a PtySize(rows, cols)")
    checked: list[int] = []
    for name in ("cols", "rows"):
        value = getattr(size, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PTY_SIZE:
            raise InvalidArgumentException(f"{call}: size.{name}: must be a whole number from 1 to {MAX_PTY_SIZE}")
        checked.append(value)
    return checked[0], checked[1]


def plan_pty(size: object, *, user: object, cwd: object, envs: object, timeout: object) -> RunPlan:
    """Checks ``pty.create``'s arguments; the native ``pty.create`` keywords (without ``on_data``) run
    E2B's ``/bin/bash -i -l`` as ``user`` (``"user"`` or ``"root"``, as ``commands.run``) in ``cwd`` (the
    account's home by default, a relative one under it), E2B's variables under ``envs``, ``timeout``
    seconds (E2B's 60 by default; 0 or None: none).

    :raises InvalidArgumentException: before any call
    """
    cols, rows = check_size(size, "pty.create")
    account = check_user(user, "pty.create")
    where = sandbox_path(ACCOUNT_HOMES[account] if cwd is None else cwd, "pty.create: cwd", account)
    env = check_envs(envs, "pty.create: envs")
    seconds = command_timeout(timeout, "pty.create")
    native = {
        "cols": cols,
        "rows": rows,
        "cmd": PTY_SHELL,
        "envs": {**TERMINAL_ENVS, **env},
        "cwd": where,
        "user": account,
        "timeout": seconds,
    }
    return RunPlan(native, seconds)


def check_connect(pid: object, timeout: object) -> int:
    """``pty.connect``'s pid and ``timeout`` (checked; the terminal keeps the deadline it was opened
    with), before any call."""
    checked = check_pid(pid, "pty.connect")
    command_timeout(timeout, "pty.connect")
    return checked


def check_on_data(on_data: object, call: str) -> None:
    """``on_data`` of the async ``create`` and ``connect``: a function (plain or ``async``), or None."""
    if on_data is not None and not callable(on_data):
        raise InvalidArgumentException(f"{call}: on_data: must be a function")


def send_stdin_op(core: SandboxCore, pid: object, data: object) -> Op[object]:
    """Types ``data`` (bytes; text as UTF-8) into terminal ``pid``: one request to sandboxd, no stream."""
    checked = check_pid(pid, "pty.send_stdin")
    if isinstance(data, str):
        raw = data.encode()
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    else:
        raise InvalidArgumentException("pty.send_stdin: data: must be bytes")
    return (yield from core.stdin_op(checked, raw))


def resize_op(core: SandboxCore, pid: object, size: object) -> Op[object]:
    """Resizes terminal ``pid`` (its program gets SIGWINCH); pid and size checked first."""
    checked = check_pid(pid, "pty.resize")
    cols, rows = check_size(size, "pty.resize")
    return (yield from core.resize_op(checked, cols, rows))
