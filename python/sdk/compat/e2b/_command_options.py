"""``commands.run``'s E2B options as the native ones, checked before any call (shared by the sync and
the async shim)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ._options import check_envs, check_user, sandbox_path
from .command_result import bash_command
from .exceptions import InvalidArgumentException


@dataclass(frozen=True)
class RunPlan:
    """A command to start: the native ``run`` keyword arguments (without callbacks), and its deadline."""

    native: dict[str, Any] = field(repr=False)
    #: Seconds it may run (0: no limit), E2B's ``timeout``.
    timeout: float

    def timer(self) -> Callable[[], bool]:
        """Started now: tells, once the command ended, whether it outlived its timeout."""
        started = time.monotonic()
        return lambda: self.timeout > 0 and time.monotonic() - started >= self.timeout


def plan_run(
    cmd: object, *, envs: object, user: object, cwd: object, stdin: object, timeout: object
) -> RunPlan:
    """Checks ``commands.run``'s arguments; the command runs as E2B runs it (``bash -l -c``).

    :raises InvalidArgumentException: before any call
    """
    if not isinstance(cmd, str) or cmd == "":
        raise InvalidArgumentException("commands.run: cmd: must be a non-empty string")
    account = check_user(user, "commands.run")
    if stdin is not None and not isinstance(stdin, bool):
        raise InvalidArgumentException("commands.run: stdin: must be a bool")
    seconds = command_timeout(timeout, "commands.run")
    native: dict[str, Any] = {
        "cmd": bash_command(cmd, bool(stdin)),
        "envs": check_envs(envs, "commands.run: envs"),
        "timeout": seconds,
        "user": account,
    }
    # Without one, sandboxd starts it in its account's home, as E2B's envd does.
    if cwd is not None:
        native["cwd"] = sandbox_path(cwd, "commands.run: cwd", account)
    return RunPlan(native, seconds)


def command_timeout(timeout: object, call: str) -> float:
    """E2B's command ``timeout`` in seconds (None or 0: no limit)."""
    if timeout is None:
        return 0.0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise InvalidArgumentException(f"{call}: timeout: must be a number of seconds (0: none)")
    return float(timeout)


def check_pid(pid: object, call: str) -> int:
    """A pid, checked before any call."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        raise InvalidArgumentException(f"{call}: pid: must be a positive whole number")
    return pid


def check_connect(pid: object, timeout: object) -> int:
    """``commands.connect``'s pid and ``timeout``, checked before any call."""
    checked = check_pid(pid, "commands.connect")
    command_timeout(timeout, "commands.connect")
    return checked
