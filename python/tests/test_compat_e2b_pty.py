"""The E2B shim's ``sbx.pty`` on the native terminals (as the TypeScript shim's, in
``test/unit/compat-e2b-pty.test.ts``), after E2B's Python SDK (``sandbox_sync/commands/pty.py``,
``sandbox_async/commands/pty.py``, the sync and async ``CommandHandle``), without a sandbox: every
argument checked before any call; what ``create`` asks sandboxd for (E2B's ``/bin/bash -i -l``, ``cols`` x
``rows`` of E2B's ``PtySize(rows, cols)``, E2B's ``TERM`` / ``LANG`` / ``LC_ALL`` under the program's
``envs``, the account's home, E2B's 60 s deadline); the terminal's bytes as ``(None, None, data)`` and to
``wait(on_pty=...)`` (sync) or ``on_data`` (async, plain or ``async``); ``wait()`` in E2B's shape
(``CommandExitException`` for a non-zero exit or a signal, ``TimeoutException`` past ``timeout``); the
calls by pid, each one request to sandboxd with no event stream; ``kill`` true, then false; the terminal
listed as E2B's ``/bin/bash -i -l``; a handle's ``disconnect()`` closing its stream (the native one's), its
``wait()`` then raising ``SandboxException`` while the terminal runs on. Against the fake control plane and sandboxd of ``test_pty.py``, with
the running terminals it lists."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterator

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from test_egress import DAEMON, PLANE, FakePlane
from test_pty import NOT_FOUND, PID, SHOWN, DaemonPlane, HeldStream, event_lines, hold_events

from sdk import AsyncSandbox as NativeAsyncSandbox
from sdk import Sandbox as NativeSandbox
from sdk.compat.e2b import (
    AsyncCommandHandle,
    AsyncPty,
    AsyncSandbox,
    CommandExitException,
    CommandHandle,
    CommandResult,
    InvalidArgumentException,
    NotFoundException,
    ProcessInfo,
    Pty,
    PtySize,
    Sandbox,
    SandboxException,
    TimeoutException,
)

#: What the shim asks sandboxd to run on a terminal (the TypeScript shim's PTY_SHELL).
BASH = "exec /bin/bash -i -l"
E2B_ENVS = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


class TerminalDaemon(DaemonPlane):
    """``test_pty.DaemonPlane`` with the terminals it runs: a start adds ``PID`` to ``running``, the list
    shows each running one as the shim's bash, a signal ends it; a call for a pid that does not run is
    ``process_not_found``. With ``gate`` set, a terminal's stream holds its end until the gate opens."""

    def __init__(self) -> None:
        super().__init__()
        self.end: dict[str, Any] | None = {"exitCode": 0, "signal": None}
        self.running: set[int] = set()
        self.gate: threading.Event | None = None

    def answer(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if not url.startswith(f"{DAEMON}/v1/processes"):
            return FakePlane.answer(self, request)
        path = url.removeprefix(DAEMON)
        raw = request.content
        body: Any = raw if path.endswith("/stdin") else (json.loads(raw) if raw else None)
        self.daemon.append((request.method, path, request.headers.get("authorization"), body))
        if (request.method, path) == ("POST", "/v1/processes"):
            self.running.add(PID)
            return httpx.Response(200, json={"pid": PID})
        if (request.method, path) == ("GET", "/v1/processes"):
            listed = [{"pid": pid, "cmd": BASH, "running": True, "pty": True} for pid in sorted(self.running)]
            return httpx.Response(200, json=[{"pid": 5, "cmd": "sleep 1", "running": False}, *listed])
        pid = int(path.split("/")[3])
        if pid not in self.running:
            return httpx.Response(404, json=NOT_FOUND)
        if path.endswith("/events"):
            return httpx.Response(200, content=self._events(pid))
        if path.endswith("/signal"):
            self.running.discard(pid)
        return httpx.Response(200, json={})

    def _events(self, pid: int) -> bytes | AsyncIterator[bytes]:
        gate = self.gate
        if gate is None:
            return event_lines(pid, SHOWN, self.end)

        async def held() -> AsyncIterator[bytes]:  # native handles, sync too, follow with the async client
            yield event_lines(pid, SHOWN, None)
            await asyncio.to_thread(gate.wait, 30)
            yield json.dumps({"type": "end", **(self.end or {}), "seq": len(SHOWN) + 2}).encode() + b"\n"

        return held()

    def calls(self) -> list[tuple[str, str, Any]]:
        """The daemon requests so far: method, path, body."""
        return [(method, path, body) for method, path, _, body in self.daemon]

    def forget(self) -> None:
        """Forgets the requests so far."""
        self.requests.clear()
        self.daemon.clear()


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> TerminalDaemon:
    """The fake control plane and sandboxd behind the sync and async clients."""
    fake = TerminalDaemon()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


@pytest.fixture
def sbx(plane: TerminalDaemon) -> Iterator[Sandbox]:
    """A shim handle on a native one of the fake, its requests so far forgotten."""
    with NativeSandbox.create(control_plane_url=PLANE) as native:
        plane.forget()
        yield Sandbox(native)


def started(plane: TerminalDaemon) -> list[Any]:
    """The bodies of the terminals started, forgetting the requests."""
    bodies = [body for method, path, body in plane.calls() if (method, path) == ("POST", "/v1/processes")]
    plane.forget()
    return bodies


def pty_output(handle: CommandHandle) -> list[bytes]:
    """Iterates a terminal's handle to its end: its bytes (nothing comes as stdout or stderr)."""
    shown: list[bytes] = []
    for stdout, stderr, data in handle:
        assert stdout is None and stderr is None and isinstance(data, bytes)
        shown.append(data)
    return shown


# --- arguments checked before any call ----------------------------------------------------------------

BAD_CREATE: list[tuple[dict[str, Any], str]] = [
    ({"size": None}, "size: must be a PtySize"),
    ({"size": (24, 80)}, "size: must be a PtySize"),
    ({"size": PtySize(rows=24, cols=0)}, "size.cols"),
    ({"size": PtySize(rows=1001, cols=80)}, "size.rows"),
    ({"size": PtySize(rows=24.5, cols=80)}, "size.rows"),  # type: ignore[arg-type]
    ({"size": PtySize(rows="24", cols=80)}, "size.rows"),  # type: ignore[arg-type]
    ({"size": PtySize(rows=True, cols=80)}, "size.rows"),
    ({"user": "nobody"}, "user"),
    ({"cwd": 5}, "cwd"),
    ({"envs": ["A=1"]}, "envs"),
    ({"envs": {"1BAD": "x"}}, "envs"),
    ({"envs": {"OK": 1}}, "envs.OK"),
    ({"timeout": -1}, "timeout"),
    ({"timeout": "60"}, "timeout"),
]


@pytest.mark.parametrize(("options", "named"), BAD_CREATE)
def test_malformed_create_arguments_are_refused_before_any_call(
    plane: TerminalDaemon, sbx: Sandbox, options: dict[str, Any], named: str
) -> None:
    with pytest.raises(InvalidArgumentException, match=f"^pty.create: {named}") as refused:
        sbx.pty.create(**{"size": PtySize(24, 80), **options})
    assert refused.value.code == "invalid_argument"
    assert plane.requests == [] and plane.daemon == []


def test_malformed_pids_data_sizes_and_timeouts_are_refused_before_any_call(
    plane: TerminalDaemon, sbx: Sandbox
) -> None:
    refusals: list[tuple[Callable[[], object], str]] = [
        (lambda: sbx.pty.connect(0), "pty.connect: pid"),
        (lambda: sbx.pty.connect("42"), "pty.connect: pid"),  # type: ignore[arg-type]
        (lambda: sbx.pty.connect(PID, timeout=-1), "pty.connect: timeout"),
        (lambda: sbx.pty.send_stdin(-1, b"x"), "pty.send_stdin: pid"),
        (lambda: sbx.pty.send_stdin(PID, 42), "pty.send_stdin: data"),  # type: ignore[arg-type]
        (lambda: sbx.pty.send_stdin(PID, None), "pty.send_stdin: data"),  # type: ignore[arg-type]
        (lambda: sbx.pty.resize(PID, PtySize(rows=24, cols=0)), "pty.resize: size.cols"),
        (lambda: sbx.pty.resize(PID, (24, 80)), "pty.resize: size"),  # type: ignore[arg-type]
        (lambda: sbx.pty.resize(1.5, PtySize(24, 80)), "pty.resize: pid"),  # type: ignore[arg-type]
        (lambda: sbx.pty.kill("42"), "pty.kill: pid"),  # type: ignore[arg-type]
        (lambda: sbx.pty.kill(True), "pty.kill: pid"),
    ]
    for attempt, named in refusals:
        with pytest.raises(InvalidArgumentException, match=f"^{named}"):
            attempt()
    assert plane.requests == [] and plane.daemon == []


# --- create, output, wait ------------------------------------------------------------------------------


def test_create_asks_for_e2bs_bash_on_a_terminal_with_e2bs_envs_in_the_home_for_60_s(
    plane: TerminalDaemon, sbx: Sandbox
) -> None:
    assert isinstance(sbx.pty, Pty) and sbx.pty is sbx.pty
    terminal = sbx.pty.create(PtySize(rows=30, cols=100), envs={"ABC": "123", "LANG": "en_US.UTF-8"})
    assert isinstance(terminal, CommandHandle) and terminal.pid == PID
    terminal.wait()
    assert started(plane) == [
        {
            "cmd": BASH, "pty": {"cols": 100, "rows": 30}, "killTree": True, "cwd": "/home/user", "timeoutMs": 60_000,
            "envs": {"TERM": "xterm-256color", "LANG": "en_US.UTF-8", "LC_ALL": "C.UTF-8", "ABC": "123"},
        }
    ]  # fmt: skip
    # E2B's PtySize is (rows, cols); user and cwd as commands.run; timeout 0 or None: no deadline.
    sbx.pty.create(PtySize(24, 80), user="root", timeout=0).wait()
    sbx.pty.create(PtySize(24, 80), cwd="app", timeout=None).wait()
    sbx.pty.create(PtySize(24, 80), user="root", cwd="/tmp", envs={"TERM": "vt100"}, timeout=2.5).wait()
    assert started(plane) == [
        {"cmd": BASH, "pty": {"cols": 80, "rows": 24}, "user": "root", "killTree": True, "cwd": "/root",
         "timeoutMs": 0, "envs": E2B_ENVS},
        {"cmd": BASH, "pty": {"cols": 80, "rows": 24}, "killTree": True, "cwd": "/home/user/app",
         "timeoutMs": 0, "envs": E2B_ENVS},
        {"cmd": BASH, "pty": {"cols": 80, "rows": 24}, "user": "root", "killTree": True, "cwd": "/tmp",
         "timeoutMs": 2500, "envs": {**E2B_ENVS, "TERM": "vt100"}},
    ]  # fmt: skip


def test_the_terminals_bytes_come_out_as_pty_output_and_wait_gives_e2bs_result(
    plane: TerminalDaemon, sbx: Sandbox
) -> None:
    terminal = sbx.pty.create(PtySize(24, 80))
    assert pty_output(terminal) == SHOWN  # bytes as shown: a split character, a byte that is not UTF-8
    assert terminal.wait() == CommandResult(stderr="", stdout="", exit_code=0, error=None)

    seen: list[bytes] = []
    assert sbx.pty.create(PtySize(24, 80)).wait(on_pty=seen.append).exit_code == 0
    assert seen == SHOWN  # what was not read yet goes to on_pty, as in E2B's wait

    plane.end = {"exitCode": 3, "signal": None}
    with pytest.raises(CommandExitException) as exited:
        sbx.pty.create(PtySize(24, 80)).wait()
    assert (exited.value.exit_code, exited.value.error, exited.value.stdout, exited.value.stderr) == (
        3, "exit status 3", "", "",
    )  # fmt: skip
    plane.end = {"exitCode": None, "signal": "SIGKILL"}
    with pytest.raises(CommandExitException) as killed:
        sbx.pty.create(PtySize(24, 80)).wait()
    assert (killed.value.exit_code, killed.value.error) == (-1, "signal: killed")


def test_a_terminal_handle_refuses_send_stdin_as_e2bs_does(plane: TerminalDaemon, sbx: Sandbox) -> None:
    terminal = sbx.pty.create(PtySize(24, 80))
    plane.forget()
    with pytest.raises(SandboxException, match=r"^Sending stdin is not supported for this command handle\.$"):
        terminal.send_stdin("x")
    with pytest.raises(SandboxException, match=r"^Closing stdin is not supported for this command handle\.$"):
        terminal.close_stdin()
    assert plane.daemon == []
    terminal.wait()


def test_past_its_timeout_a_terminal_is_a_timeout_exception(plane: TerminalDaemon, sbx: Sandbox) -> None:
    plane.gate = threading.Event()
    plane.end = {"exitCode": None, "signal": "SIGTERM"}  # how sandboxd ends it at its deadline
    before = time.monotonic()
    terminal = sbx.pty.create(PtySize(24, 80), timeout=0.001)
    assert started(plane)[0]["timeoutMs"] == 1
    while time.monotonic() - before < 0.002:  # the deadline passes before sandboxd ends it
        pass
    plane.gate.set()
    with pytest.raises(TimeoutException, match="pass timeout= .* to pty.create"):
        terminal.wait()


# --- calls by pid, connect, kill, list --------------------------------------------------------------


def test_input_and_resize_by_pid_are_one_request_each_with_no_stream(plane: TerminalDaemon, sbx: Sandbox) -> None:
    plane.running.add(7)  # a terminal another handle or process opened
    sbx.pty.send_stdin(7, b"echo hi\n")
    sbx.pty.send_stdin(7, "ls é\n")  # text as UTF-8, as the TypeScript shim takes it
    sbx.pty.send_stdin(7, bytearray(b"\x03"))  # type: ignore[arg-type]
    sbx.pty.resize(7, PtySize(rows=40, cols=120))
    assert plane.calls() == [
        ("POST", "/v1/processes/7/stdin", b"echo hi\n"),
        ("POST", "/v1/processes/7/stdin", "ls é\n".encode()),
        ("POST", "/v1/processes/7/stdin", b"\x03"),
        ("POST", "/v1/processes/7/resize", {"cols": 120, "rows": 40}),
    ]
    unknown: list[Callable[[], None]] = [
        lambda: sbx.pty.send_stdin(8, b"x"), lambda: sbx.pty.resize(8, PtySize(24, 80)),
    ]  # fmt: skip
    for attempt in unknown:
        with pytest.raises(NotFoundException) as missing:
            attempt()
        assert missing.value.code == "process_not_found"


def test_connect_follows_a_terminal_by_pid_with_the_kept_screen_first(plane: TerminalDaemon, sbx: Sandbox) -> None:
    plane.running.add(7)
    again = sbx.pty.connect(7, timeout=0)
    assert isinstance(again, CommandHandle) and again.pid == 7
    assert pty_output(again) == SHOWN
    assert again.wait().exit_code == 0
    assert plane.calls() == [("GET", "/v1/processes/7/events", None)]  # nothing started
    with pytest.raises(NotFoundException):
        sbx.pty.connect(8)


def test_kill_ends_a_running_terminal_and_is_false_otherwise(plane: TerminalDaemon, sbx: Sandbox) -> None:
    terminal = sbx.pty.create(PtySize(24, 80))
    terminal.wait()
    plane.forget()
    assert sbx.pty.kill(PID) is True
    assert plane.calls() == [
        ("GET", "/v1/processes", None),
        ("POST", f"/v1/processes/{PID}/signal", {"signal": "SIGKILL", "tree": True}),
    ]
    plane.forget()
    assert sbx.pty.kill(PID) is False  # it no longer runs
    assert terminal.kill() is False
    assert sbx.pty.kill(999_999) is False
    assert plane.calls() == [("GET", "/v1/processes", None)] * 3  # only the list was read


def test_disconnect_closes_the_terminals_stream_it_runs_on_and_wait_raises(
    plane: TerminalDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"$ "], None))  # the terminal goes on, quiet
    hold_events(monkeypatch, plane, held)
    with NativeSandbox.create(control_plane_url=PLANE) as native:
        sbx = Sandbox(native)
        terminal = sbx.pty.create(PtySize(24, 80), timeout=0)
        assert held.read.wait(10)
        plane.forget()
        terminal.disconnect()  # the native handle's: returns once its follower stopped
        assert held.cut.is_set() and held.closed.is_set()  # the stream is closed, as E2B's
        assert pty_output(terminal) == [b"$ "]  # what was read before it, then the iteration ends
        with pytest.raises(SandboxException, match="disconnected from its terminal") as caught:
            terminal.wait()
        assert type(caught.value) is SandboxException  # the sandbox runs: not a TimeoutException
        terminal.disconnect()  # again: nothing more
        assert plane.running == {PID}
        assert [call for call in plane.calls() if call[1].startswith("/v1/processes/")] == []  # nothing ended
        sbx.pty.send_stdin(PID, b"still there\n")  # reached by pid
        assert sbx.pty.kill(PID) is True  # it was still running
        assert plane.calls()[0] == ("POST", f"/v1/processes/{PID}/stdin", b"still there\n")


def test_commands_list_shows_a_terminal_as_e2bs_envd_runs_it(plane: TerminalDaemon, sbx: Sandbox) -> None:
    plane.running.add(PID)
    assert sbx.commands.list() == [ProcessInfo(PID, None, "/bin/bash", ["-i", "-l"], {}, None)]


# --- async --------------------------------------------------------------------------------------------


async def test_async_create_and_connect_hand_the_bytes_to_on_data_plain_or_async(plane: TerminalDaemon) -> None:
    async with await NativeAsyncSandbox.create(control_plane_url=PLANE) as native:
        sbx = AsyncSandbox(native)
        assert isinstance(sbx.pty, AsyncPty)
        plane.forget()
        plain: list[bytes] = []
        terminal = await sbx.pty.create(PtySize(rows=20, cols=90), on_data=plain.append, envs={"ABC": "123"})
        assert isinstance(terminal, AsyncCommandHandle) and terminal.pid == PID
        before = terminal.exit_code  # None until waited for
        assert await terminal.wait() == CommandResult(stderr="", stdout="", exit_code=0, error=None)
        assert before is None
        assert (terminal.exit_code, terminal.error, terminal.stdout, terminal.stderr) == (0, None, "", "")
        assert plain == SHOWN
        assert started(plane) == [
            {"cmd": BASH, "pty": {"cols": 90, "rows": 20}, "killTree": True, "cwd": "/home/user",
             "timeoutMs": 60_000, "envs": {**E2B_ENVS, "ABC": "123"}},
        ]  # fmt: skip
        with pytest.raises(SandboxException, match="^Sending stdin is not supported"):
            await terminal.send_stdin(b"x")
        with pytest.raises(SandboxException, match="^Closing stdin is not supported"):
            await terminal.close_stdin()

        awaited: list[bytes] = []

        async def on_data(data: bytes) -> None:
            await asyncio.sleep(0)
            awaited.append(data)

        plane.end = {"exitCode": 3, "signal": None}
        again = await sbx.pty.connect(PID, on_data=on_data)
        with pytest.raises(CommandExitException) as exited:
            await again.wait()
        assert (exited.value.exit_code, again.exit_code, again.error) == (3, 3, "exit status 3")
        assert awaited == SHOWN and again.pid == PID
        # E2B's on_data is required, but None is taken (no callback), as E2B's handle takes it.
        plane.end = {"exitCode": 0, "signal": None}
        quiet = await sbx.pty.create(PtySize(24, 80), on_data=None)  # type: ignore[arg-type]
        assert (await quiet.wait()).exit_code == 0
        with pytest.raises(NotFoundException):
            await sbx.pty.connect(8, on_data=on_data)

        def broken(data: bytes) -> None:
            raise RuntimeError("on_data failed")

        with pytest.raises(RuntimeError, match="on_data failed"):  # raised by wait(), as E2B's handle does
            await (await sbx.pty.create(PtySize(24, 80), on_data=broken)).wait()


async def test_async_calls_by_pid_kill_and_refusals(plane: TerminalDaemon) -> None:
    async with await NativeAsyncSandbox.create(control_plane_url=PLANE) as native:
        sbx = AsyncSandbox(native)
        plane.forget()
        refusals: list[tuple[Callable[[], Any], str]] = [
            (lambda: sbx.pty.create(PtySize(0, 80), on_data=print), "pty.create: size.rows"),
            (lambda: sbx.pty.create(PtySize(24, 80), on_data=42), "pty.create: on_data"),  # type: ignore[arg-type]
            (lambda: sbx.pty.connect(PID, on_data="print"), "pty.connect: on_data"),  # type: ignore[arg-type]
            (lambda: sbx.pty.connect(-1, on_data=print), "pty.connect: pid"),
            (lambda: sbx.pty.send_stdin(PID, 1), "pty.send_stdin: data"),  # type: ignore[arg-type]
            (lambda: sbx.pty.resize(PID, PtySize(24, 1001)), "pty.resize: size.cols"),
            (lambda: sbx.pty.kill(0), "pty.kill: pid"),
        ]
        for attempt, named in refusals:
            with pytest.raises(InvalidArgumentException, match=f"^{named}"):
                await attempt()
        assert plane.requests == [] and plane.daemon == []

        plane.running.add(7)
        await sbx.pty.send_stdin(7, b"exit\n")
        await sbx.pty.resize(7, PtySize(rows=30, cols=100))
        assert await sbx.pty.kill(7) is True
        assert await sbx.pty.kill(7) is False
        assert plane.calls() == [
            ("POST", "/v1/processes/7/stdin", b"exit\n"),
            ("POST", "/v1/processes/7/resize", {"cols": 100, "rows": 30}),
            ("GET", "/v1/processes", None),
            ("POST", "/v1/processes/7/signal", {"signal": "SIGKILL", "tree": True}),
            ("GET", "/v1/processes", None),
        ]
        with pytest.raises(NotFoundException):
            await sbx.pty.send_stdin(7, b"x")
        assert await sbx.commands.list() == []


async def test_async_disconnect_closes_the_terminals_stream_and_wait_raises(
    plane: TerminalDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"$ "], None))
    hold_events(monkeypatch, plane, held)
    async with await NativeAsyncSandbox.create(control_plane_url=PLANE) as native:
        sbx = AsyncSandbox(native)
        seen: list[bytes] = []
        terminal = await sbx.pty.create(PtySize(24, 80), on_data=seen.append, timeout=0)
        assert await asyncio.to_thread(held.read.wait, 10)
        waiting = asyncio.create_task(terminal.wait())
        await asyncio.sleep(0)
        await terminal.disconnect()
        assert held.cut.is_set() and held.closed.is_set() and seen == [b"$ "]
        with pytest.raises(SandboxException, match="disconnected from its terminal") as caught:
            await waiting  # a wait already pending: the disconnect's error, not a cancellation
        assert type(caught.value) is SandboxException
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            await terminal.wait()
        assert terminal.exit_code is None
        await terminal.disconnect()  # again: nothing more
        assert plane.running == {PID}  # the terminal runs on
        assert await sbx.pty.kill(PID) is True
