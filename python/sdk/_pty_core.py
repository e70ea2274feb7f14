"""What the sync and the async terminals (``pty.py``, ``async_pty.py``) share: a terminal's result and
screen, and the requests a handle and the by-pid calls make alike (the checks of their arguments are
``sdk._command_options``', beside the commands' they share rules with)."""

from __future__ import annotations

from dataclasses import dataclass

from ._command_output import EventTracker
from ._http import Op
from ._sandbox_core import SandboxCore
from ._command_options import DataCallback, pty_input, pty_size
from ._wire import DataEvent, EmptyAnswer, ProcessEvent
from .errors import SandboxException


@dataclass(frozen=True)
class PtyResult:
    """How a terminal's program ended."""

    #: Exit status, or ``None`` when a signal ended it.
    exit_code: int | None
    #: The signal that ended it (``SIGKILL``), or ``None``.
    signal: str | None


class _Screen(EventTracker):
    """A terminal's events: each output chunk handed to ``on_data`` as bytes (nothing kept here, so a
    long session holds no history in the client), the end kept for :meth:`result`."""

    def __init__(self, on_data: DataCallback) -> None:
        super().__init__()
        self._on_data = on_data

    def feed(self, event: ProcessEvent) -> object:
        """Takes one event; returns what ``on_data`` returned for an output chunk, else ``None``."""
        self.track(event)
        if isinstance(event, DataEvent):
            return self._on_data(event.data)
        return None

    def result(self) -> PtyResult:
        """How the program ended, once the stream has."""
        end = self.end
        if end is None:
            raise SandboxException("the event stream of the sandbox daemon ended before the terminal did")
        return PtyResult(exit_code=end.exit_code, signal=end.signal)


#: What ``wait()`` raises once ``disconnect()`` stopped following a terminal whose end was not seen
#: (TypeScript's words).
DISCONNECTED = "this handle was disconnected from its terminal: pty.connect follows it again"


def _input_op(core: SandboxCore, pid: int, data: object) -> Op[object]:
    """Typing ``data`` into terminal ``pid``: one request (``data`` checked before it)."""
    return core.stdin_op(pid, pty_input(data))


def _resize_op(core: SandboxCore, pid: int, cols: object, rows: object) -> Op[EmptyAnswer]:
    """Resizing terminal ``pid``: one request (the size checked before it)."""
    width, height = pty_size(cols, rows)
    return core.resize_op(pid, width, height)


def _kill_op(core: SandboxCore, pid: int) -> Op[EmptyAnswer]:
    """SIGKILL to terminal ``pid``'s whole tree: one request."""
    return core.signal_op(pid, True)


def _outcome(screen: _Screen, result: PtyResult | None, error: BaseException | None, disconnected: bool) -> PtyResult:
    """What ``wait()`` gives once a handle's follower stopped: what broke it, else how the terminal ended
    (also when its end was seen before a disconnect), else the disconnect's error."""
    if error is not None:
        raise error
    if result is not None:
        return result
    end = screen.end
    if end is not None:  # seen, then disconnected before the stream closed
        return PtyResult(exit_code=end.exit_code, signal=end.signal)
    if disconnected:
        raise SandboxException(DISCONNECTED)
    return screen.result()
