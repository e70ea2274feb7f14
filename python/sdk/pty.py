"""``sbx.pty`` (issue 28; TypeScript's ``sdk/pty.ts``): terminals in the sandbox. A terminal is a command
sandboxd runs on a pseudo-terminal of the sandbox's own (a login shell by default): it outlives the client
that opened it (and a pause and resume), so ``connect(pid)`` from this or another process (with the
sandbox's token) reattaches, the screen's recent output replayed first (sandboxd keeps the last 8 MiB).

The wire is the commands' (``daemon/daemon-server.ts``): ``POST /v1/processes`` with ``pty: {cols,
rows}``, then the command's event stream (``GET /v1/processes/:pid/events``, output as ``data`` events);
input through ``POST /v1/processes/:pid/stdin`` (raw bytes: sandboxd frames them for the terminal
helper), ``POST /v1/processes/:pid/resize`` with ``{cols, rows}``, and kill as SIGKILL to the whole tree.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from dataclasses import dataclass
from typing import Mapping

from ._accounts import Account
from ._check import Checker
from ._command_output import EventTracker, afollow, follow
from ._http import AsyncTransport, Transport, adrive, drive
from ._sandbox_core import SandboxCore
from ._sandbox_options import (
    DEFAULT_PTY_CMD,
    DataCallback,
    check_on_data,
    check_pty_size,
    resolve_pty_options,
)
from ._wire import DataEvent, ProcessEvent
from .errors import InvalidArgumentException, SandboxException

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


def _input(data: object) -> bytes:
    """What ``send_input`` types: text as UTF-8, or bytes (a bytearray or memoryview too)."""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise InvalidArgumentException("pty.send_input: data: must be str or bytes", "data")


def _size(cols: object, rows: object) -> tuple[int, int]:
    """``resize``'s size, checked before any call."""
    check = Checker("pty.resize")
    size = check_pty_size(check, cols, rows)
    check.done()
    return size


def _connect_args(pid: object, on_data: object) -> tuple[int, DataCallback]:
    """``connect``'s pid (a positive whole number) and ``on_data``, checked before any call."""
    check = Checker("pty.connect")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        check.add(("pid",), "must be a positive whole number")
    callback = check_on_data(check, on_data)
    check.done()
    assert isinstance(pid, int) and callback is not None
    return pid, callback


class PtyHandle:
    """A terminal of a :class:`~sdk.sandbox.Sandbox`. What it shows goes to ``on_data``, as bytes, as it
    comes: its events are followed on a thread of its own from the start (``on_data`` is called there),
    so nothing is missed before :meth:`wait`."""

    def __init__(self, core: SandboxCore, transport: Transport, pid: int, on_data: DataCallback) -> None:
        #: The terminal's pid in sandboxd: what :meth:`Pty.connect` takes.
        self.pid = pid
        self._core = core
        self._transport = transport
        self._screen = _Screen(on_data)
        self._first = threading.Event()
        self._done = threading.Event()
        self._result: PtyResult | None = None
        self._error: BaseException | None = None
        thread = threading.Thread(target=self._follow, name=f"sdk-pty-{pid}", daemon=True)
        thread.start()

    def __repr__(self) -> str:
        return f"PtyHandle(pid={self.pid})"

    def _follow(self) -> None:
        try:
            drive(self._core.activity_op(), self._transport)
            follow(self._transport, self._core, self._core.events_call(self.pid), self._feed, self._screen)
            self._result = self._screen.result()
        except BaseException as error:  # kept for wait(); a thread must not raise
            self._error = error
        finally:
            self._first.set()
            self._done.set()

    def _feed(self, event: ProcessEvent) -> None:
        self._first.set()
        self._screen.feed(event)

    def _started(self) -> PtyHandle:
        """Returns once the first event (the terminal's start) arrived; raises what stopped the stream."""
        self._first.wait()
        if self._screen.pid is None and self._error is not None:
            raise self._error
        return self

    def send_input(self, data: str | bytes) -> None:
        """Types into the terminal: keys, pasted text, control characters (``"\\x03"`` is Ctrl-C); text as
        UTF-8.

        :raises InvalidArgumentException: for ``data`` that is neither text nor bytes, before any call
        """
        drive(self._core.stdin_op(self.pid, _input(data)), self._transport)

    def resize(self, *, cols: int, rows: int) -> None:
        """Resizes the terminal (its program gets SIGWINCH).

        :raises InvalidArgumentException: for a size out of 1-1000 (``field`` ``cols`` or ``rows``),
            before any call
        """
        width, height = _size(cols, rows)
        drive(self._core.resize_op(self.pid, width, height), self._transport)

    def kill(self) -> None:
        """Ends the terminal's program and everything it started (SIGKILL to its tree)."""
        drive(self._core.signal_op(self.pid, True), self._transport)

    def wait(self) -> PtyResult:
        """Blocks until the terminal's program ends; how it ended.

        :raises SandboxException: when the event stream broke or the sandbox ended
        """
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


class Pty:
    """The terminals of one :class:`~sdk.sandbox.Sandbox` (each call first reports activity, resuming a
    suspended sandbox)."""

    def __init__(self, core: SandboxCore, transport: Transport) -> None:
        self._core = core
        self._transport = transport

    def create(
        self,
        *,
        cols: int = 80,
        rows: int = 24,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        user: Account = "user",
        cmd: str = DEFAULT_PTY_CMD,
        timeout: float | None = None,
        on_data: DataCallback,
    ) -> PtyHandle:
        """Opens a terminal, ``cols`` x ``rows`` characters (80 x 24 by default, each 1 to 1000), running
        ``cmd`` through ``/bin/sh -c`` (a login shell by default: ``bash -l``, else ``sh -l``) as the
        sandbox user (or its root, ``user="root"``), with ``TERM=xterm-256color`` unless ``envs`` sets it;
        ``cwd`` (absolute) as the commands' (the account's home by default); ``timeout`` ends it after that
        many seconds (0 or None: never). Returns once it runs; ``on_data`` gets what it shows, as bytes.

        Example::

            term = sbx.pty.create(cols=120, rows=40, on_data=lambda d: sys.stdout.buffer.write(d))
            term.send_input("ls -la\\n")
            term.resize(cols=100, rows=30)
            term.send_input("exit\\n")
            print(term.wait().exit_code)

        :raises InvalidArgumentException: for a malformed option (``on_data`` is required), before any call
        """
        o = resolve_pty_options(
            cols=cols, rows=rows, cwd=cwd, envs=envs, user=user, cmd=cmd, timeout=timeout, on_data=on_data
        )
        pid = drive(self._core.start_op(o.start), self._transport).pid
        return PtyHandle(self._core, self._transport, pid, o.on_data)._started()

    def connect(self, pid: int, *, on_data: DataCallback) -> PtyHandle:
        """Reattaches to a terminal by pid, from this or another process (a handle connected with the
        sandbox's token), also after a pause and resume: ``on_data`` gets the screen's recent output first
        (what sandboxd kept), then the rest as it comes.

        :raises InvalidArgumentException: for a malformed pid or ``on_data``, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        checked, callback = _connect_args(pid, on_data)
        return PtyHandle(self._core, self._transport, checked, callback)._started()

    def __repr__(self) -> str:
        return f"Pty(sandbox_id={self._core.sandbox_id!r})"


class AsyncPtyHandle:
    """A terminal of an :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`PtyHandle` awaited. Its events
    are followed by a task from the start; ``on_data`` may be a plain function or a coroutine function."""

    def __init__(
        self,
        core: SandboxCore,
        transport: AsyncTransport,
        pid: int,
        on_data: DataCallback,
        followers: set[asyncio.Task[None]],
    ) -> None:
        #: The terminal's pid in sandboxd: what :meth:`AsyncPty.connect` takes.
        self.pid = pid
        self._core = core
        self._transport = transport
        self._screen = _Screen(on_data)
        self._first = asyncio.Event()
        self._result: PtyResult | None = None
        self._error: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._follow(), name=f"sdk-pty-{pid}")
        followers.add(self._task)
        self._task.add_done_callback(followers.discard)

    def __repr__(self) -> str:
        return f"AsyncPtyHandle(pid={self.pid})"

    async def _follow(self) -> None:
        try:
            await adrive(self._core.activity_op(), self._transport)
            call = self._core.events_call(self.pid)
            await afollow(self._transport, self._core, call, self._feed, self._screen)
            self._result = self._screen.result()
        except Exception as error:  # kept for wait(); the task itself never fails
            self._error = error
        finally:
            self._first.set()

    async def _feed(self, event: ProcessEvent) -> None:
        self._first.set()
        returned = self._screen.feed(event)
        if inspect.isawaitable(returned):
            await returned

    async def _started(self) -> AsyncPtyHandle:
        """Returns once the first event (the terminal's start) arrived; raises what stopped the stream."""
        await self._first.wait()
        if self._screen.pid is None and self._error is not None:
            raise self._error
        return self

    async def send_input(self, data: str | bytes) -> None:
        """As :meth:`PtyHandle.send_input`, awaited.

        :raises InvalidArgumentException: for ``data`` that is neither text nor bytes, before any call
        """
        await adrive(self._core.stdin_op(self.pid, _input(data)), self._transport)

    async def resize(self, *, cols: int, rows: int) -> None:
        """As :meth:`PtyHandle.resize`, awaited.

        :raises InvalidArgumentException: for a size out of 1-1000, before any call
        """
        width, height = _size(cols, rows)
        await adrive(self._core.resize_op(self.pid, width, height), self._transport)

    async def kill(self) -> None:
        """Ends the terminal's program and everything it started (SIGKILL to its tree)."""
        await adrive(self._core.signal_op(self.pid, True), self._transport)

    async def wait(self) -> PtyResult:
        """Waits until the terminal's program ends; how it ended. Cancelling the wait leaves it running.

        :raises SandboxException: when the event stream broke or the sandbox ended
        """
        await asyncio.shield(self._task)
        if self._error is not None:
            raise self._error
        if self._result is None:  # the task was cancelled (its sandbox handle closed)
            raise asyncio.CancelledError()
        return self._result


class AsyncPty:
    """The terminals of one :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`Pty` awaited."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        self._core = core
        self._transport = transport
        #: The tasks following this handle's terminals.
        self._followers: set[asyncio.Task[None]] = set()

    async def stop_following(self) -> None:
        """Stops following terminals (they go on running; their ``wait`` is cancelled). The sandbox handle
        calls this when it closes."""
        tasks = set(self._followers)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def create(
        self,
        *,
        cols: int = 80,
        rows: int = 24,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        user: Account = "user",
        cmd: str = DEFAULT_PTY_CMD,
        timeout: float | None = None,
        on_data: DataCallback,
    ) -> AsyncPtyHandle:
        """As :meth:`Pty.create`, awaited; ``on_data`` plain or ``async``.

        Example::

            term = await sbx.pty.create(on_data=screen.append)
            await term.send_input("echo hello\\n")

        :raises InvalidArgumentException: for a malformed option, before any call
        """
        o = resolve_pty_options(
            cols=cols, rows=rows, cwd=cwd, envs=envs, user=user, cmd=cmd, timeout=timeout, on_data=on_data
        )
        pid = (await adrive(self._core.start_op(o.start), self._transport)).pid
        return await AsyncPtyHandle(self._core, self._transport, pid, o.on_data, self._followers)._started()

    async def connect(self, pid: int, *, on_data: DataCallback) -> AsyncPtyHandle:
        """As :meth:`Pty.connect`, awaited: the screen's recent output first, then the rest.

        :raises InvalidArgumentException: for a malformed pid or ``on_data``, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        checked, callback = _connect_args(pid, on_data)
        return await AsyncPtyHandle(self._core, self._transport, checked, callback, self._followers)._started()

    def __repr__(self) -> str:
        return f"AsyncPty(sandbox_id={self._core.sandbox_id!r})"
