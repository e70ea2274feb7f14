"""The operations of the shim's ``sbx.commands`` beyond one native call, written once as operations
(``sdk._http.Op``) that the sync shim drives and the async one awaits: E2B's ``list`` (running commands
only), ``kill`` (False when no such command runs; ``pty.kill`` too), ``send_stdin`` and ``close_stdin``;
and whether a command's broken stream means its sandbox is gone (E2B's ``TimeoutException``)."""

from __future__ import annotations

from ..._http import Op
from ..._sandbox_core import SandboxCore
from ..._wire import EmptyAnswer
from ...errors import SandboxException as NativeSandboxException
from ...errors import SdkException as NativeSdkException
from ._command_options import check_pid
from .command_result import ProcessInfo, to_process_info
from .exceptions import LIKELY_TIMEOUT, SandboxException, TimeoutException



def list_op(core: SandboxCore) -> Op[list[ProcessInfo]]:
    """The commands running now, with E2B's names."""
    listed = yield from core.list_op()
    return [to_process_info(info) for info in listed if info.running]


def kill_op(core: SandboxCore, pid: object, call: str = "commands.kill") -> Op[bool]:
    """Ends the command's (or terminal's: ``call`` ``pty.kill``) process tree; False when no such command
    runs (E2B's answer)."""
    checked = check_pid(pid, call)
    if not any(info.pid == checked for info in (yield from list_op(core))):
        return False
    try:
        yield from core.signal_op(checked, True)
    except NativeSandboxException as error:
        if error.code == "process_not_found":  # it ended between the listing and the signal
            return False
        raise
    return True


def send_stdin_op(core: SandboxCore, pid: object, data: str | bytes) -> Op[object]:
    """Writes to a command's stdin (the pid checked first)."""
    return (yield from core.stdin_op(check_pid(pid, "commands.send_stdin"), data))


def close_stdin_op(core: SandboxCore, pid: object) -> Op[EmptyAnswer]:
    """Closes a command's stdin (the pid checked first)."""
    return (yield from core.close_stdin_op(check_pid(pid, "commands.close_stdin")))


def gone_op(core: SandboxCore) -> Op[bool]:
    """True when the sandbox has ended or no longer exists: why a command's output stream broke."""
    try:
        info = yield from core.info_op()
    except NativeSdkException as error:
        return error.code in ("sandbox_not_found", "sandbox_ended")
    return info.state == "ended"


def broken_by_end(error: SandboxException) -> bool:
    """A plain ``SandboxException`` (a broken stream, not a typed answer) may mean the sandbox ended."""
    return type(error) is SandboxException


def sandbox_gone(error: SandboxException) -> TimeoutException:
    """E2B's ``TimeoutException`` for a command whose sandbox was killed or timed out under it."""
    gone = TimeoutException(f"{error}: {LIKELY_TIMEOUT}", "sandbox_ended")
    gone.__cause__ = error
    return gone
