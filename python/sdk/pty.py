"""``sbx.pty`` (issue 28; TypeScript's ``sdk/pty.ts``): terminals in the sandbox. A terminal is a command
sandboxd runs on a pseudo-terminal of the sandbox's own (a login shell by default): it outlives the client
that opened it (and a pause and resume), so ``connect(pid)`` from this or another process (with the
sandbox's token) reattaches, the screen's recent output replayed first (sandboxd keeps the last 8 MiB).

The wire is the commands' (``daemon/daemon-server.ts``): ``POST /v1/processes`` with ``pty: {cols,
rows}``, then the command's event stream (``GET /v1/processes/:pid/events``, output as ``data`` events);
input through ``POST /v1/processes/:pid/stdin`` (raw bytes: sandboxd frames them for the terminal
helper), ``POST /v1/processes/:pid/resize`` with ``{cols, rows}``, and kill as SIGKILL to the whole tree:
one request each, made the same way by a handle and by ``sbx.pty.send_input(pid, ...)`` and the other
by-pid calls, which follow nothing. A handle's ``disconnect()`` stops following (its stream closes; the
terminal runs on); its ``wait()`` then raises, unless the terminal's end was already seen.

The sync handle follows on a thread of its own with its own event loop and connection, as the sync
directory watch does (``_files_watch``): cancelling a task is what reliably ends a read that is waiting for
bytes (closing a blocking socket from another thread does not wake the reader), so ``disconnect()`` is
prompt however quiet the terminal is.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Mapping

from ._accounts import Account
from ._command_output import afollow
from ._http import AsyncTransport, Transport, drive
from ._sandbox_core import SandboxCore
from ._command_options import DEFAULT_PTY_CMD, DataCallback, pid_of, resolve_pty_connect, resolve_pty_options
from ._wire import ProcessEvent
from .errors import InvalidArgumentException, SandboxException
from ._pty_core import (
    PtyResult,
    _Screen,
    _input_op,
    _resize_op,
    _kill_op,
    _outcome,
)


class PtyHandle:
    """A terminal of a :class:`~sdk.sandbox.Sandbox`. What it shows goes to ``on_data``, as bytes, as it
    comes, until it ends or :meth:`disconnect`: its events are followed from the start on a thread of its
    own (with its own event loop and connection; ``on_data`` is called there), so nothing is missed
    before :meth:`wait`."""

    def __init__(self, core: SandboxCore, transport: Transport, pid: int, on_data: DataCallback) -> None:
        #: The terminal's pid in sandboxd: what :meth:`Pty.connect` takes.
        self.pid = pid
        self._core = core
        self._transport = transport
        self._screen = _Screen(on_data)
        self._first = threading.Event()
        self._done = threading.Event()
        self._disconnected = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._result: PtyResult | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=f"sdk-pty-{pid}", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"PtyHandle(pid={self.pid})"

    def _main(self) -> None:
        try:
            asyncio.run(self._follow())
        except BaseException as error:  # kept for wait(); a thread must not raise
            if not (isinstance(error, asyncio.CancelledError) and self._disconnected.is_set()):
                self._error = error
        finally:
            self._first.set()
            self._done.set()

    async def _follow(self) -> None:
        transport = AsyncTransport(self._transport.request_timeout)
        try:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            if self._disconnected.is_set():  # disconnect() came before this loop could be cancelled
                return
            await afollow(transport, self._core, self._core.events_call(self.pid), self._feed, self._screen)
            self._result = self._screen.result()
        except asyncio.CancelledError:
            if not self._disconnected.is_set():
                raise
        finally:
            await transport.aclose()

    async def _feed(self, event: ProcessEvent) -> None:
        if self._disconnected.is_set():  # events read with the last chunk: no on_data after disconnect()
            return
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
        UTF-8. :meth:`Pty.send_input` by pid.

        :raises InvalidArgumentException: for ``data`` that is neither text nor bytes, before any call
        """
        drive(_input_op(self._core, self.pid, data), self._transport)

    def resize(self, *, cols: int, rows: int) -> None:
        """Resizes the terminal (its program gets SIGWINCH). :meth:`Pty.resize` by pid.

        :raises InvalidArgumentException: for a size out of 1-1000 (``field`` ``cols`` or ``rows``),
            before any call
        """
        drive(_resize_op(self._core, self.pid, cols, rows), self._transport)

    def kill(self) -> None:
        """Ends the terminal's program and everything it started (SIGKILL to its tree). :meth:`Pty.kill`
        by pid."""
        drive(_kill_op(self._core, self.pid), self._transport)

    def disconnect(self) -> None:
        """Stops following the terminal: no more ``on_data``, and its stream to sandboxd is closed (so a
        program may exit). The terminal runs on: :meth:`Pty.connect` follows it again, and the by-pid
        calls reach it. :meth:`wait` then raises, unless the terminal's end was already seen. Returns once
        the follower has stopped (called from ``on_data``, at once; it stops when ``on_data`` returns).
        """
        if self._disconnected.is_set():
            return
        self._disconnected.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not self._done.is_set():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass  # the loop already closed: the follower ended by itself
        if threading.current_thread() is not self._thread:  # from on_data itself: no self-join
            self._thread.join()

    def wait(self) -> PtyResult:
        """Blocks until the terminal's program ends; how it ended.

        :raises SandboxException: when the event stream broke or the sandbox ended, or after
            :meth:`disconnect` (unless the end was seen before it)
        """
        self._done.wait()
        return _outcome(self._screen, self._result, self._error, self._disconnected.is_set())


class Pty:
    """The terminals of one :class:`~sdk.sandbox.Sandbox` (each call goes straight to sandboxd through the
    control plane, which resumes a suspended sandbox with auto-resume where the call reaches it)."""

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
        checked, callback = resolve_pty_connect(pid, on_data)
        return PtyHandle(self._core, self._transport, checked, callback)._started()

    def send_input(self, pid: int, data: str | bytes) -> None:
        """Types into terminal ``pid`` without following it (one request; from any process with the
        sandbox's token): what :meth:`PtyHandle.send_input` does.

        :raises InvalidArgumentException: for a malformed pid or ``data``, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        drive(_input_op(self._core, pid_of("pty.send_input", pid), data), self._transport)

    def resize(self, pid: int, *, cols: int, rows: int) -> None:
        """Resizes terminal ``pid`` without following it (one request; its program gets SIGWINCH).

        :raises InvalidArgumentException: for a malformed pid, or a size out of 1-1000, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        drive(_resize_op(self._core, pid_of("pty.resize", pid), cols, rows), self._transport)

    def kill(self, pid: int) -> None:
        """Ends terminal ``pid``'s program and everything it started (SIGKILL to its tree), without
        following it (one request).

        :raises InvalidArgumentException: for a malformed pid, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        drive(_kill_op(self._core, pid_of("pty.kill", pid)), self._transport)

    def __repr__(self) -> str:
        return f"Pty(sandbox_id={self._core.sandbox_id!r})"
