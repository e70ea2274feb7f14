"""Programs as E2B's Python SDK's own terminal tests write them (``tests/sync/sandbox_sync/pty/*.py`` and
``tests/async/sandbox_async/pty/*.py``: create, ``send_stdin`` by pid, output through ``wait(on_pty=...)``
or ``on_data``, resize, connect after a disconnect (whose handle's ``wait`` then raises
``SandboxException`` while the terminal runs on), kill, exit 0), run through the E2B shim's ``sbx.pty``
against the real control plane with only the import changed (E2B's ``PtySize`` imported from the shim),
and what the TypeScript shim's live terminal tests check beside them: E2B's ``TERM`` / ``LANG`` /
``LC_ALL``, ``stty size`` before and after a resize, the terminal listed as E2B's ``/bin/bash -i -l``, a
handle connected from another shim handle seeing the kept screen and typing into it, root, ``exit 3``,
``timeout``. Output is waited for as it comes (the handle's bytes, or ``on_data``), never for a fixed
time. Every test ends the terminals it opened; the module's sandbox is killed at its end."""

from __future__ import annotations

import asyncio
import re

import pytest

from conftest import ControlPlane
from sdk.compat.e2b import (
    AsyncSandbox,
    CommandExitException,
    CommandHandle,
    CommandResult,
    NotFoundException,
    ProcessInfo,
    PtySize,
    Sandbox,
    SandboxException,
    TimeoutException,
)

from _e2b_fixtures import sandbox  # noqa: F401  (a fixture)

#: How long an async test waits for text on a screen, seconds.
SHOWS_WITHIN = 60.0


class Reader:
    """A sync terminal handle read as it comes (its ``(None, None, data)`` items), as text."""

    def __init__(self, handle: CommandHandle) -> None:
        self._handle = handle
        self._data = bytearray()

    @property
    def text(self) -> str:
        return self._data.decode("utf-8", "replace")

    def shows(self, pattern: str, start: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` after character ``start``, reading the handle until it shows
        (the rest stays unread for the next call, or for ``wait``)."""
        wanted = re.compile(pattern)
        found = wanted.search(self.text, start)
        if found is not None:
            return found
        for _, _, data in self._handle:
            assert data is not None
            self._data += data
            found = wanted.search(self.text, start)
            if found is not None:
                return found
        raise AssertionError(f"the terminal ended without showing {pattern!r}: {self.text[-400:]!r}")


class Screen:
    """An async ``on_data``: the bytes a terminal showed (as text), and a way to wait for a pattern."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._changed = asyncio.Event()

    def __call__(self, data: bytes) -> None:
        assert isinstance(data, bytes)
        self._data += data
        self._changed.set()

    @property
    def text(self) -> str:
        return self._data.decode("utf-8", "replace")

    async def shows(self, pattern: str, start: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` after character ``start``, once the screen shows it."""
        wanted = re.compile(pattern)

        async def seen() -> re.Match[str]:
            while True:
                found = wanted.search(self.text, start)
                if found is not None:
                    return found
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(seen(), SHOWS_WITHIN)
        except TimeoutError:
            raise AssertionError(f"the screen never showed {pattern!r}: {self.text[-400:]!r}") from None


# --- sync (E2B's tests/sync/sandbox_sync/pty) -----------------------------------------------------------


def test_pty_create_envs_cwd_and_wait_on_pty(sandbox: Sandbox) -> None:
    # E2B's test_pty, as written there: PtySize(80, 24) is rows=80, cols=24 (E2B's field order).
    terminal = sandbox.pty.create(PtySize(80, 24), envs={"ABC": "123"}, cwd="/")
    sandbox.pty.send_stdin(terminal.pid, b'echo "[$ABC] [$TERM] [$LANG] [$LC_ALL] $((6*7)) $PWD"; stty size\nexit\n')
    output: list[str] = []
    result = terminal.wait(on_pty=lambda x: output.append(x.decode("utf-8", "replace")))
    assert result.exit_code == 0
    assert result == CommandResult(stderr="", stdout="", exit_code=0, error=None)
    shown = "".join(output)
    # The typed line shows `$((6*7))`; only the output shows 42.
    assert "[123] [xterm-256color] [C.UTF-8] [C.UTF-8] 42 /" in shown
    assert re.search(r"[\r\n]80 24\r?\n", shown), shown  # stty size: rows, then columns


def test_send_input_then_exit(sandbox: Sandbox) -> None:
    # E2B's test_send_input.
    terminal = sandbox.pty.create(PtySize(cols=80, rows=24))
    sandbox.pty.send_stdin(terminal.pid, b"exit\n")
    result = terminal.wait()
    assert result.exit_code == 0


def test_stty_size_resize_and_the_listed_terminal(sandbox: Sandbox) -> None:
    # E2B's test_resize (tput cols), with stty size and the list beside it (the TypeScript shim's test).
    terminal = sandbox.pty.create(PtySize(rows=24, cols=80), timeout=0)
    screen = Reader(terminal)
    assert ProcessInfo(terminal.pid, None, "/bin/bash", ["-i", "-l"], {}, None) in sandbox.commands.list()
    sandbox.pty.send_stdin(terminal.pid, b"stty size; tput cols\n")
    # bash ends bracketed paste (ESC[?2004l, then CR) before a command's output: a CR, not a newline.
    screen.shows(r"[\r\n]24 80\r?\n80\r?\n")
    sandbox.pty.resize(terminal.pid, PtySize(cols=100, rows=30))
    mark = len(screen.text)
    sandbox.pty.send_stdin(terminal.pid, b"stty size; tput cols\n")
    screen.shows(r"[\r\n]30 100\r?\n100\r?\n", mark)
    with pytest.raises(SandboxException, match="^Sending stdin is not supported for this command handle"):
        terminal.send_stdin("x")  # E2B's terminal handle has no stdin of its own
    sandbox.pty.send_stdin(terminal.pid, b"exit 0\n")
    assert terminal.wait() == CommandResult(stderr="", stdout="", exit_code=0, error=None)


def test_connect_after_disconnect_and_from_another_handle(sandbox: Sandbox) -> None:
    # E2B's test_connect_to_pty: the output after the reconnect reaches the new handle.
    terminal = sandbox.pty.create(PtySize(rows=24, cols=80), envs={"FOO": "bar"})
    first = Reader(terminal)
    sandbox.pty.send_stdin(terminal.pid, b"echo $FOO-$((1+1))\n")
    first.shows(r"bar-2")
    terminal.disconnect()  # its stream closes, as E2B's; the terminal runs on
    with pytest.raises(SandboxException, match="disconnected from its terminal") as disconnected:
        terminal.wait()
    assert type(disconnected.value) is SandboxException
    assert terminal.pid in [process.pid for process in sandbox.commands.list()]

    # As another process would: another shim handle on the sandbox, the terminal's pid.
    other = Sandbox.connect(sandbox.sandbox_id)
    try:
        reconnect_handle = other.pty.connect(terminal.pid)
        assert reconnect_handle.pid == terminal.pid
        again = Reader(reconnect_handle)
        again.shows(r"bar-2")  # what sandboxd kept of the screen, first
        mark = len(again.text)
        other.pty.send_stdin(terminal.pid, b"echo again-$((2+3))\n")
        again.shows(r"again-5", mark)
        sandbox.pty.send_stdin(terminal.pid, b"echo $FOO-$((1+2))\nexit\n")
        output: list[str] = []
        result = reconnect_handle.wait(on_pty=lambda x: output.append(x.decode("utf-8", "replace")))
        assert result.exit_code == 0
        assert "bar-3" in "".join(output)
        assert "again-5" not in first.text  # disconnected: read no more
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            terminal.wait()  # still: that handle follows nothing
    finally:
        other.close()


def test_kill_pty_then_false_and_unknown_pids(sandbox: Sandbox) -> None:
    # E2B's test_kill_pty and test_kill_non_existing_pty.
    terminal = sandbox.pty.create(PtySize(80, 24))
    assert sandbox.pty.kill(terminal.pid)
    # The PTY process should no longer be running.
    with pytest.raises(CommandExitException):
        sandbox.commands.run(f"kill -0 {terminal.pid}")
    with pytest.raises(CommandExitException) as killed:
        terminal.wait()
    assert killed.value.exit_code == -1 and killed.value.stdout == ""
    assert re.fullmatch(r"signal: (killed|terminated)", killed.value.error or ""), killed.value.error
    assert not sandbox.pty.kill(terminal.pid)
    assert not terminal.kill()
    non_existing_pid = 999999
    assert not sandbox.pty.kill(non_existing_pid)
    with pytest.raises(NotFoundException):
        sandbox.pty.send_stdin(non_existing_pid, b"x")
    with pytest.raises(NotFoundException):
        sandbox.pty.connect(non_existing_pid)


def test_root_exit_status_and_timeout(sandbox: Sandbox) -> None:
    root = sandbox.pty.create(PtySize(rows=24, cols=80), user="root", timeout=0)
    sandbox.pty.send_stdin(root.pid, b'echo "uid-$(id -u) $PWD"\nexit 3\n')
    output: list[bytes] = []
    with pytest.raises(CommandExitException) as exited:
        root.wait(on_pty=output.append)
    assert (exited.value.exit_code, exited.value.error) == (3, "exit status 3")
    assert "uid-0 /root" in b"".join(output).decode("utf-8", "replace")
    # E2B's deadline (60 s unless given) ends a terminal with TimeoutException.
    short = sandbox.pty.create(PtySize(rows=24, cols=80), timeout=1)
    with pytest.raises(TimeoutException):
        short.wait()


# --- async (E2B's tests/async/sandbox_async/pty) ---------------------------------------------------------


async def test_async_create_connect_resize_and_kill(control_plane: ControlPlane) -> None:
    async_sandbox = await AsyncSandbox.create()
    try:
        # E2B's test_pty_create.
        output: list[str] = []
        terminal = await async_sandbox.pty.create(
            PtySize(80, 24), on_data=lambda x: output.append(x.decode("utf-8", "replace")), envs={"ABC": "123"}
        )
        await async_sandbox.pty.send_stdin(terminal.pid, b"echo $ABC-$((100+23))\n")
        await async_sandbox.pty.send_stdin(terminal.pid, b"exit\n")
        await terminal.wait()
        assert terminal.exit_code == 0 and terminal.stdout == ""
        assert "123-123" in "".join(output)

        # E2B's test_connect_to_pty, waiting for the output rather than a fixed 0.3 s.
        first = Screen()
        terminal = await async_sandbox.pty.create(PtySize(rows=24, cols=80), on_data=first, envs={"FOO": "bar"})
        await async_sandbox.pty.send_stdin(terminal.pid, b"echo $FOO-$((1+1))\n")
        await first.shows(r"bar-2")
        await terminal.disconnect()  # its stream closes, as E2B's; the terminal runs on
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            await terminal.wait()
        assert terminal.exit_code is None
        second = Screen()

        async def on_data(data: bytes) -> None:  # a coroutine function, awaited in turn
            second(data)

        reconnect_handle = await async_sandbox.pty.connect(terminal.pid, on_data=on_data)
        await second.shows(r"bar-2")  # the kept screen first
        mark = len(second.text)
        await async_sandbox.pty.send_stdin(terminal.pid, b"echo $FOO-$((1+2))\n")
        await second.shows(r"bar-3", mark)
        # E2B's test_resize, with stty size.
        await async_sandbox.pty.resize(terminal.pid, PtySize(cols=100, rows=30))
        mark = len(second.text)
        await async_sandbox.pty.send_stdin(terminal.pid, b"stty size\nexit\n")
        await reconnect_handle.wait()
        assert terminal.pid == reconnect_handle.pid
        assert reconnect_handle.exit_code == 0
        assert re.search(r"[\r\n]30 100\r?\n", second.text[mark:]), second.text[mark:]
        assert "bar-3" not in first.text  # disconnected: on_data no longer called

        # E2B's test_kill_pty and test_kill_non_existing_pty.
        killed = await async_sandbox.pty.create(PtySize(80, 24), on_data=lambda _: None)
        assert await async_sandbox.pty.kill(killed.pid)
        with pytest.raises(CommandExitException):
            await async_sandbox.commands.run(f"kill -0 {killed.pid}")
        with pytest.raises(CommandExitException):
            await killed.wait()
        assert killed.exit_code == -1
        assert not await async_sandbox.pty.kill(999999)
    finally:
        await async_sandbox.kill()
        await async_sandbox.close()
