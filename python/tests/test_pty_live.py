"""Terminals through the Python SDK against the session's control plane, in a real sandbox (TypeScript's
``test/integration/sandbox/terminals.test.ts`` tests both isolations, SIGWINCH traps and pauses): a login
shell on a pseudo-terminal of the sandbox's own (``tty`` names it, ``stty size`` reads the size given at
create and again after ``resize``), ``TERM``, input typed and echoed, Ctrl-C interrupting the foreground
program, the exit status; a second handle connected with the token (as another process would) reattaching
by pid with the screen's recent output replayed, seeing and typing into the same terminal, the list
marking it ``pty`` (and not a plain command), and kill ending it; ``sbx.pty.resize`` / ``send_input`` /
``kill`` by pid from another handle (``stty size`` on the first handle's screen) and a disconnected handle
(no more output, its ``wait`` raising, the terminal running on); a command as root in a directory with an
environment variable, on a terminal; the async twin. The tests end the sandboxes they created."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Iterator

import pytest

from conftest import ControlPlane
from sdk import AsyncSandbox, Sandbox, SandboxException

#: How long a test waits for text on a screen, seconds.
SHOWS_WITHIN = 60.0


class Screen:
    """``on_data``: the bytes a terminal showed (as text), and a way to wait for a pattern on them."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._changed = threading.Condition()

    def __call__(self, data: bytes) -> None:
        with self._changed:
            self._data += data
            self._changed.notify_all()

    @property
    def text(self) -> str:
        with self._changed:
            return self._data.decode("utf-8", "replace")

    def shows(self, pattern: str, start: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` after character ``start``, once the screen shows it."""
        deadline = time.monotonic() + SHOWS_WITHIN
        with self._changed:
            while True:
                found = re.compile(pattern).search(self._data.decode("utf-8", "replace"), start)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the screen never showed {pattern!r}: {self._data[-400:]!r}")
                self._changed.wait(left)


@pytest.fixture(scope="module")
def sbx(control_plane: ControlPlane) -> Iterator[Sandbox]:
    """One sandbox for the module's terminals."""
    sandbox = Sandbox.create(template="sdk-base")
    try:
        yield sandbox
    finally:
        sandbox.kill()
        sandbox.close()


def test_a_shell_on_a_terminal_of_its_own_input_size_resize_ctrl_c_and_exit_status(sbx: Sandbox) -> None:
    screen = Screen()
    term = sbx.pty.create(cols=100, rows=30, on_data=screen)
    term.send_input('tty; stty size; echo "[$TERM]"\n')
    screen.shows(r"/dev/pts/\d+")
    screen.shows(r"30 100")
    screen.shows(r"\[xterm-256color\]")

    # The program in the foreground gets SIGWINCH: its trap prints the new size; stty reads it after.
    term.send_input("sh -c 'trap \"stty size; exit 0\" WINCH; echo waiting; while :; do sleep 0.1; done'\n")
    screen.shows(r"waiting\r?\n")
    mark = len(screen.text)
    term.resize(cols=132, rows=43)
    screen.shows(r"43 132", mark)
    mark = len(screen.text)
    term.send_input('echo "size [$(stty size)]"\n')
    screen.shows(r"size \[43 132\]", mark)

    # Ctrl-C interrupts the foreground command; the shell goes on. Each step waits for the screen: a
    # Ctrl-C flushes the terminal's unread input, so nothing is typed ahead of it or before the prompt.
    # "started" comes from the foreground job itself: a Ctrl-C before the shell hands the terminal over
    # reached the shell, and sleep ran on.
    mark = len(screen.text)
    term.send_input("sh -c 'echo started; exec sleep 600'\n")
    screen.shows(r"started\r?\n", mark)  # the output, not the typed line ("started;")
    mark = len(screen.text)
    term.send_input(b"\x03")
    screen.shows(r"\$ ", mark)  # the prompt again
    term.send_input('echo "after [$?]"\n')
    screen.shows(r"after \[130\]")
    term.send_input("exit 7\n")
    result = term.wait()
    assert (result.exit_code, result.signal) == (7, None)


def test_a_second_handle_reattaches_with_the_screen_replayed(sbx: Sandbox) -> None:
    first = Screen()
    term = sbx.pty.create(on_data=first)
    term.send_input('echo "marker-$((6*7))"; stty size\n')
    first.shows(r"marker-42")
    first.shows(r"24 80")  # the default size

    # Another client, as another process would: a handle connected with the token, and the pid.
    other = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        second = Screen()
        again = other.pty.connect(term.pid, on_data=second)
        second.shows(r"marker-42")  # replayed
        plain = other.commands.run("echo plain", background=True)
        plain.wait()
        listed = {p.pid: p for p in other.commands.list()}
        assert listed[term.pid].running and listed[term.pid].pty
        assert not listed[plain.pid].pty  # a command that is not a terminal

        again.send_input('echo "still-$((2+3))"\n')
        second.shows(r"still-5")
        first.shows(r"still-5")  # the first client sees it too
        again.kill()
        ended = again.wait()
        assert ended.exit_code != 0
        assert term.wait() == ended
    finally:
        other.close()


def test_by_pid_from_another_handle_resize_disconnect_and_kill(sbx: Sandbox) -> None:
    first = Screen()
    term = sbx.pty.create(on_data=first)
    term.send_input('echo "ready-$((1+1))"\n')
    first.shows(r"ready-2")
    other = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        # By pid, following nothing: the first handle's screen shows what it did.
        other.pty.resize(term.pid, cols=77, rows=21)
        other.pty.send_input(term.pid, 'echo "by-pid [$(stty size)]"\n')
        first.shows(r"by-pid \[21 77\]")

        # A disconnected handle reads no more and its wait raises; the terminal runs on.
        second = Screen()
        again = other.pty.connect(term.pid, on_data=second)
        second.shows(r"by-pid \[21 77\]")  # replayed
        again.disconnect()
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            again.wait()
        mark = len(second.text)
        other.pty.send_input(term.pid, 'echo "after-$((3+4))"\n')
        first.shows(r"after-7")
        assert "after-7" not in second.text[mark:]

        other.pty.kill(term.pid)
        ended = term.wait()
        assert ended.exit_code != 0
        assert not {p.pid: p for p in other.commands.list()}[term.pid].running
    finally:
        other.close()


def test_a_command_and_the_root_account_on_a_terminal(sbx: Sandbox) -> None:
    screen = Screen()
    term = sbx.pty.create(
        cmd='test -t 0 && test -t 1 && echo "on a tty as $(id -u) in $(pwd) with [$X]"; exit 3',
        user="root", cwd="/tmp", envs={"X": "y"}, on_data=screen,
    )  # fmt: skip
    assert term.wait().exit_code == 3
    screen.shows(r"on a tty as 0 in /tmp with \[y\]")


async def test_async_terminal(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(template="sdk-base") as sbx:
        screen = Screen()
        chunks: list[bytes] = []

        async def on_data(data: bytes) -> None:
            chunks.append(data)
            screen(data)

        term = await sbx.pty.create(cols=50, rows=10, on_data=on_data)
        await term.send_input("stty size; tty\n")
        await asyncio.to_thread(screen.shows, r"10 50")
        await term.resize(cols=60, rows=12)
        mark = len(screen.text)
        await term.send_input('echo "now [$(stty size)]"\n')
        await asyncio.to_thread(screen.shows, r"now \[12 60\]", mark)
        replay = Screen()
        again = await sbx.pty.connect(term.pid, on_data=replay)
        await asyncio.to_thread(replay.shows, r"/dev/pts/\d+")
        await term.send_input("exit 5\n")
        assert (await term.wait()).exit_code == 5
        assert (await again.wait()).exit_code == 5
        assert all(isinstance(chunk, bytes) for chunk in chunks)
