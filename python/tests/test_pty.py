"""Terminals through the Python SDK (issue 28 item 2; ``sdk/pty.ts``), against a fake control plane and
sandboxd (``_httpx_fake.py``): ``sbx.pty.create`` as ``POST /v1/processes`` with ``pty: {cols, rows}``
and the start fields of TypeScript's body (defaults 80 x 24, the login shell, ``killTree``, ``cwd``,
``envs``, ``user``, ``timeoutMs`` from seconds), then the command's event stream, its output handed to
``on_data`` as bytes (not decoded: a split character and a non-UTF-8 byte arrive as they were sent);
``send_input`` as raw bytes to ``…/stdin``, ``resize`` as ``{cols, rows}`` to ``…/resize``, ``kill`` as
SIGKILL to the tree, ``wait`` the exit status or signal; ``connect(pid)`` reading the kept output, an
unknown pid as ``process_not_found``; ``sbx.pty.send_input(pid, ...)``, ``resize(pid, ...)`` and
``kill(pid)`` as the same one request each as a handle's, following nothing; ``disconnect()`` closing the
handle's stream (from ``on_data`` too: the events read with it are dropped), ``wait`` then raising unless
the end was seen; every option checked before any call; ``ProcessInfo`` taking the list's ``pty: true``;
the async twin (``on_data`` plain or ``async``) and its close."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from typing import Any, AsyncIterator, Awaitable, Callable

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from test_egress import DAEMON, PLANE, SBX, TOKEN, FakePlane

from sdk import (
    AsyncPty,
    AsyncPtyHandle,
    AsyncSandbox,
    InvalidArgumentException,
    ProcessInfo,
    Pty,
    PtyHandle,
    PtyResult,
    Sandbox,
    SandboxException,
)
from sdk._command_options import DEFAULT_PTY_CMD
from sdk._wire import ProcessInfo as WireProcessInfo

PID = 321
#: What the terminal shows: a character split over two chunks, and a byte that is not UTF-8.
SHOWN = [b"hello \xe2\x82", b"\xac \xff\r\n"]
NOT_FOUND = {"code": "process_not_found", "message": "no process 999", "context": {}}


def event_lines(pid: int, shown: list[bytes], end: dict[str, Any] | None) -> bytes:
    """A command's NDJSON event stream: start, each chunk as a ``data`` event, then ``end``."""
    events: list[dict[str, Any]] = [{"type": "start", "pid": pid, "seq": 1}]
    for i, chunk in enumerate(shown):
        events.append({"type": "data", "stream": "stdout", "data": base64.b64encode(chunk).decode(), "seq": i + 2})
    if end is not None:
        events.append({"type": "end", **end, "seq": len(events) + 1})
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


class DaemonPlane(FakePlane):
    """``test_egress.FakePlane`` with sandboxd's command routes: a start answering ``PID``, its events
    (``shown`` then ``end``), stdin, resize, signal and the list (a terminal with ``pty: true``); an
    unknown pid's events refused with ``process_not_found``; once the sandbox ended, refused as the
    control plane's proxy refuses them (``sandbox_ended``). Daemon requests are kept in ``daemon``."""

    def __init__(self) -> None:
        super().__init__()
        self.daemon: list[tuple[str, str, str | None, Any]] = []
        self.end: dict[str, Any] | None = {"exitCode": 7, "signal": None}

    def answer(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if not url.startswith(f"{DAEMON}/v1/processes"):
            return super().answer(request)
        path = url.removeprefix(DAEMON)
        raw = request.content
        body: Any = raw if path.endswith("/stdin") else (json.loads(raw) if raw else None)
        self.daemon.append((request.method, path, request.headers.get("authorization"), body))
        refused = self.proxy_refusal(request)
        if refused is not None:
            return refused
        if (request.method, path) == ("POST", "/v1/processes"):
            return httpx.Response(200, json={"pid": PID})
        if (request.method, path) == ("GET", "/v1/processes"):
            listed = [
                {"pid": 5, "cmd": "sleep 1", "running": False},
                {"pid": PID, "cmd": "bash", "running": True, "pty": True},
            ]
            return httpx.Response(200, json=listed)
        if path == f"/v1/processes/{PID}/events":
            return httpx.Response(200, content=event_lines(PID, SHOWN, self.end))
        if path.endswith("/events"):
            return httpx.Response(404, json=NOT_FOUND)
        return httpx.Response(200, json={})

    def sent(self, method: str, suffix: str) -> list[Any]:
        """The bodies of the daemon requests ``method`` to a path ending with ``suffix``."""
        return [body for m, path, _, body in self.daemon if m == method and path.endswith(suffix)]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> DaemonPlane:
    """The fake control plane and sandboxd behind the sync and async clients."""
    fake = DaemonPlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


class HeldStream(httpx.AsyncByteStream):
    """A terminal's event stream that stays open: ``first`` (NDJSON lines), then nothing until it is cut.
    ``read`` is set once the reader asked for more (every event of ``first`` taken), ``cut`` when the wait
    for more was cancelled, ``closed`` when the answer was closed."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.read = threading.Event()
        self.cut = threading.Event()
        self.closed = threading.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        self.read.set()
        try:
            await asyncio.sleep(3600)  # the terminal goes on, quiet
        finally:
            self.cut.set()

    async def aclose(self) -> None:
        self.closed.set()


def hold_events(monkeypatch: pytest.MonkeyPatch, plane: DaemonPlane, held: HeldStream) -> None:
    """Answers the terminal's event stream with ``held`` (the sync and the async handle both follow with
    the async client), everything else with ``plane``."""

    def answer(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith(f"/v1/processes/{PID}/events"):
            return httpx.Response(200, stream=held)
        return plane.answer(request)

    answer_httpx_with(monkeypatch, answer)


def eventually(check: Callable[[], bool]) -> None:
    """Waits (polling) until ``check()`` holds; pytest's timeout (pyproject.toml) ends a test it never does,
    so no clock of its own decides how slow a machine may be."""
    while not check():
        time.sleep(0.01)


class Screen:
    """``on_data``: the chunks as they came."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        assert isinstance(data, bytes)
        self.chunks.append(data)


# --- create, input, resize, kill, wait --------------------------------------------------------------


def test_create_starts_a_terminal_with_typescripts_body_and_defaults(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert isinstance(sbx.pty, Pty)
        screen = Screen()
        term = sbx.pty.create(on_data=screen)
        assert isinstance(term, PtyHandle) and term.pid == PID
        assert plane.sent("POST", "/v1/processes") == [
            {"cmd": DEFAULT_PTY_CMD, "pty": {"cols": 80, "rows": 24}, "envs": {}, "killTree": True}
        ]
        assert DEFAULT_PTY_CMD == "command -v bash >/dev/null && exec bash -l; exec sh -l"
        assert term.wait() == PtyResult(exit_code=7, signal=None)
        assert screen.chunks == SHOWN  # bytes as sent: nothing decoded, nothing joined
        started = [(m, p, auth) for m, p, auth, _ in plane.daemon]
        assert started == [
            ("POST", "/v1/processes", f"Bearer {TOKEN}"),
            ("GET", f"/v1/processes/{PID}/events", f"Bearer {TOKEN}"),
        ]


def test_create_sends_every_option(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        sbx.pty.create(
            cols=132, rows=43, cwd="/tmp", envs={"TERM": "vt100", "A_B": "c"}, user="root", cmd="top",
            timeout=2.5, on_data=Screen(),
        )  # fmt: skip
        sbx.pty.create(cols=1.0, rows=1000, timeout=0, on_data=Screen())  # type: ignore[arg-type]
        assert plane.sent("POST", "/v1/processes") == [
            {
                "cmd": "top", "pty": {"cols": 132, "rows": 43}, "user": "root",
                "envs": {"TERM": "vt100", "A_B": "c"}, "killTree": True, "cwd": "/tmp", "timeoutMs": 2500,
            },
            {"cmd": DEFAULT_PTY_CMD, "pty": {"cols": 1, "rows": 1000}, "envs": {}, "killTree": True, "timeoutMs": 0},
        ]  # fmt: skip


def test_input_resize_and_kill_are_sandboxds_calls(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        term.send_input("ls -la\n")
        term.send_input(b"\x03")
        term.send_input("é")
        term.send_input(bytearray(b"\x1b[A"))  # type: ignore[arg-type]
        term.resize(cols=100, rows=30)
        term.kill()
        assert plane.sent("POST", "/stdin") == [b"ls -la\n", b"\x03", "é".encode(), b"\x1b[A"]
        assert plane.sent("POST", "/resize") == [{"cols": 100, "rows": 30}]
        assert plane.sent("POST", "/signal") == [{"signal": "SIGKILL", "tree": True}]
        paths = {p for _, p, _, _ in plane.daemon if not p.endswith("/events") and p != "/v1/processes"}
        assert paths == {f"/v1/processes/{PID}/stdin", f"/v1/processes/{PID}/resize", f"/v1/processes/{PID}/signal"}


def test_wait_gives_the_signal_that_ended_it(plane: DaemonPlane) -> None:
    plane.end = {"exitCode": None, "signal": "SIGKILL"}
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert sbx.pty.create(on_data=Screen()).wait() == PtyResult(exit_code=None, signal="SIGKILL")


def test_a_stream_that_ends_before_the_terminal_is_an_error_of_wait(plane: DaemonPlane) -> None:
    plane.end = None
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        with pytest.raises(SandboxException, match="ended before the terminal did"):
            term.wait()


def test_an_exception_of_on_data_is_raised_by_wait(plane: DaemonPlane) -> None:
    def broken(data: bytes) -> None:
        raise RuntimeError("on_data failed")

    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=broken)
        with pytest.raises(RuntimeError, match="on_data failed"):
            term.wait()


# --- connect ----------------------------------------------------------------------------------------


def test_connect_reads_the_kept_output_and_an_unknown_pid_is_process_not_found(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        screen = Screen()
        again = sbx.pty.connect(PID, on_data=screen)
        assert again.pid == PID and again.wait().exit_code == 7
        assert screen.chunks == SHOWN
        assert plane.sent("POST", "/v1/processes") == []  # nothing started
        with pytest.raises(SandboxException) as caught:
            sbx.pty.connect(999, on_data=Screen())
        assert caught.value.code == "process_not_found"


# --- checks before any call -------------------------------------------------------------------------

BAD_CREATE: list[tuple[dict[str, Any], str]] = [
    ({"cols": 0}, "cols"),
    ({"cols": 1001}, "cols"),
    ({"cols": 80.5}, "cols"),
    ({"cols": "80"}, "cols"),
    ({"cols": True}, "cols"),
    ({"rows": 0}, "rows"),
    ({"rows": 5000}, "rows"),
    ({"rows": None}, "rows"),
    ({"cwd": "relative"}, "cwd"),
    ({"envs": {"1BAD": "x"}}, "envs.1BAD"),
    ({"envs": {"OK": 1}}, "envs.OK"),
    ({"envs": ["A=1"]}, "envs"),
    ({"user": "admin"}, "user"),
    ({"cmd": ""}, "cmd"),
    ({"cmd": 5}, "cmd"),
    ({"timeout": -1}, "timeout"),
    ({"timeout": "1"}, "timeout"),
    ({"on_data": None}, "on_data"),
    ({"on_data": "print"}, "on_data"),
    ({"cols": 0, "cwd": "x", "on_data": None}, "cols"),  # several: the first in TypeScript's order
]


@pytest.mark.parametrize(("options", "field"), BAD_CREATE)
def test_bad_create_options_are_refused_before_any_call(
    plane: DaemonPlane, options: dict[str, Any], field: str
) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        with pytest.raises(InvalidArgumentException) as caught:
            sbx.pty.create(**{"on_data": Screen(), **options})
        assert caught.value.field == field and caught.value.message.startswith("pty.create: ")
        assert plane.requests == [] and plane.daemon == []


def test_on_data_is_required(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        with pytest.raises(TypeError):
            sbx.pty.create()  # type: ignore[call-arg]


def test_bad_resize_connect_and_input_are_refused_before_any_call(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        term.wait()
        plane.requests.clear()
        plane.daemon.clear()
        sizes: list[tuple[object, object, str]] = [
            (0, 10, "cols"), (1001, 10, "cols"), (10, 0, "rows"), (10, 1001, "rows"), (10.5, 10, "cols"),
            ("10", 10, "cols"), (10, None, "rows"), (False, 10, "cols"),
        ]  # fmt: skip
        for cols, rows, field in sizes:
            with pytest.raises(InvalidArgumentException) as caught:
                term.resize(cols=cols, rows=rows)  # type: ignore[arg-type]
            assert caught.value.field == field and caught.value.message.startswith("pty.resize: ")
        for pid in (0, -1, 1.5, "321", True, None):
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.pty.connect(pid, on_data=Screen())  # type: ignore[arg-type]
            assert caught.value.field == "pid" and caught.value.message.startswith("pty.connect: ")
        with pytest.raises(InvalidArgumentException) as caught:
            sbx.pty.connect(PID, on_data=42)  # type: ignore[arg-type]
        assert caught.value.field == "on_data"
        for data in (None, 5, ["ls"]):
            with pytest.raises(InvalidArgumentException) as caught:
                term.send_input(data)  # type: ignore[arg-type]
            assert caught.value.field == "data"
        assert plane.requests == [] and plane.daemon == []


def test_an_ended_sandbox_refuses_terminals_before_any_call(plane: DaemonPlane) -> None:
    sbx = Sandbox.create(control_plane_url=PLANE)
    try:
        term = sbx.pty.create(on_data=Screen())
        term.wait()
        sbx.kill()
        plane.requests.clear()
        plane.daemon.clear()
        attempts: list[Callable[[], object]] = [
            lambda: sbx.pty.create(on_data=Screen()), lambda: term.send_input("x"),
            lambda: term.resize(cols=10, rows=10), term.kill, lambda: sbx.pty.send_input(PID, "x"),
            lambda: sbx.pty.resize(PID, cols=10, rows=10), lambda: sbx.pty.kill(PID),
        ]  # fmt: skip
        for attempt in attempts:
            with pytest.raises(SandboxException) as caught:
                attempt()
            assert caught.value.code == "sandbox_ended"
        assert plane.requests == [] and plane.daemon == []
    finally:
        sbx.close()


#: How a handle refuses a call once it knows its sandbox ended (no request sent).
KNOWN_ENDED = ("sandbox_ended", f"sandbox {SBX} has ended (ended)")


@pytest.mark.parametrize("first", ["stdin", "stream"])
def test_a_sandbox_ended_elsewhere_is_learnt_from_a_refusal_then_refused_before_any_call(
    plane: DaemonPlane, first: str
) -> None:
    """Killed by another process: the handle's next daemon call (a plain call, or a stream: a command run
    and followed in one call) reaches the control plane's proxy, which refuses it with ``sandbox_ended``;
    the handle remembers it, and every call after is refused before any traffic."""
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        term.wait()
        plane.ended = True
        plane.requests.clear()
        plane.daemon.clear()
        with pytest.raises(SandboxException) as refused:
            term.send_input("x") if first == "stdin" else sbx.commands.run("echo")
        assert (refused.value.code, refused.value.message) == ("sandbox_ended", f"sandbox {SBX} has ended")
        sent = ("POST", f"/v1/processes/{PID}/stdin" if first == "stdin" else "/v1/processes?stream=true")
        assert [(m, path) for m, path, _, _ in plane.daemon] == [sent] and plane.requests == []
        plane.daemon.clear()
        attempts: list[Callable[[], object]] = [
            lambda: term.send_input("x"), term.kill, lambda: sbx.pty.create(on_data=Screen()),
            lambda: sbx.commands.run("echo"), lambda: sbx.commands.run("sleep 1", background=True),
            sbx.commands.list, lambda: sbx.files.read("/home/user/a"), sbx.pause,
        ]  # fmt: skip
        for attempt in attempts:
            with pytest.raises(SandboxException) as caught:
                attempt()
            assert (caught.value.code, caught.value.message) == KNOWN_ENDED
        assert plane.requests == [] and plane.daemon == []


async def test_async_a_sandbox_ended_elsewhere_is_learnt_from_a_refusal_then_refused_before_any_call(
    plane: DaemonPlane,
) -> None:
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        term = await sbx.pty.create(on_data=Screen())
        await term.wait()
        plane.ended = True
        plane.requests.clear()
        plane.daemon.clear()
        with pytest.raises(SandboxException) as refused:
            await sbx.commands.run("echo")  # a stream: refused where it opens
        assert refused.value.code == "sandbox_ended"
        assert [(m, path) for m, path, _, _ in plane.daemon] == [("POST", "/v1/processes?stream=true")]
        plane.daemon.clear()
        attempts: list[Callable[[], Awaitable[object]]] = [
            lambda: term.send_input("x"), term.kill, lambda: sbx.pty.create(on_data=Screen()),
            lambda: sbx.commands.run("echo"), sbx.commands.list, lambda: sbx.files.read("/home/user/a"),
            sbx.pause,
        ]  # fmt: skip
        for attempt in attempts:
            with pytest.raises(SandboxException) as caught:
                await attempt()
            assert (caught.value.code, caught.value.message) == KNOWN_ENDED
        assert plane.requests == [] and plane.daemon == []


# --- by pid, and disconnect ------------------------------------------------------------------------


def test_by_pid_calls_are_the_handles_requests_and_follow_nothing(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        term.wait()
        plane.requests.clear()
        plane.daemon.clear()
        term.send_input("ls\n")
        term.send_input(b"\x03")
        term.resize(cols=100, rows=30)
        term.kill()
        by_handle = list(plane.daemon)
        assert plane.requests == []  # nothing but sandboxd's calls: no call precedes them
        plane.daemon.clear()

        sbx.pty.send_input(PID, "ls\n")
        sbx.pty.send_input(PID, b"\x03")
        sbx.pty.resize(PID, cols=100, rows=30)
        sbx.pty.kill(PID)
        assert plane.daemon == by_handle == [
            ("POST", f"/v1/processes/{PID}/stdin", f"Bearer {TOKEN}", b"ls\n"),
            ("POST", f"/v1/processes/{PID}/stdin", f"Bearer {TOKEN}", b"\x03"),
            ("POST", f"/v1/processes/{PID}/resize", f"Bearer {TOKEN}", {"cols": 100, "rows": 30}),
            ("POST", f"/v1/processes/{PID}/signal", f"Bearer {TOKEN}", {"signal": "SIGKILL", "tree": True}),
        ]  # one request each, no event stream opened
        assert plane.requests == []


def test_by_pid_calls_refuse_a_bad_pid_size_or_data_before_any_call(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        for pid in (0, -1, 1.5, "321", True, None):
            calls: list[tuple[str, Callable[[], object]]] = [
                ("pty.send_input", lambda: sbx.pty.send_input(pid, "x")),  # type: ignore[arg-type]
                ("pty.resize", lambda: sbx.pty.resize(pid, cols=10, rows=10)),  # type: ignore[arg-type]
                ("pty.kill", lambda: sbx.pty.kill(pid)),  # type: ignore[arg-type]
                ("pty.resize", lambda: sbx.pty.resize(pid, cols=0, rows=10)),  # type: ignore[arg-type]
                ("pty.send_input", lambda: sbx.pty.send_input(pid, None)),  # type: ignore[arg-type]
            ]  # a bad pid is named first, as TypeScript checks it first
            for name, call in calls:
                with pytest.raises(InvalidArgumentException) as caught:
                    call()
                assert caught.value.field == "pid" and caught.value.message.startswith(f"{name}: pid: ")
        for cols, rows, field in [(0, 10, "cols"), (10, 1001, "rows"), (10.5, 10, "cols"), (None, 10, "cols")]:
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.pty.resize(PID, cols=cols, rows=rows)  # type: ignore[arg-type]
            assert caught.value.field == field and caught.value.message.startswith("pty.resize: ")
        for data in (None, 5, ["ls"]):
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.pty.send_input(PID, data)  # type: ignore[arg-type]
            assert caught.value.field == "data" and caught.value.message.startswith("pty.send_input: ")
        assert plane.requests == [] and plane.daemon == []


def test_an_unknown_pid_by_pid_is_sandboxds_refusal(plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if str(request.url).startswith(f"{DAEMON}/v1/processes/999/"):
            return httpx.Response(404, json=NOT_FOUND)
        return plane.answer(request)

    answer_httpx_with(monkeypatch, answer)
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        calls: list[Callable[[], object]] = [
            lambda: sbx.pty.send_input(999, "x"), lambda: sbx.pty.resize(999, cols=10, rows=10),
            lambda: sbx.pty.kill(999),
        ]  # fmt: skip
        for call in calls:
            with pytest.raises(SandboxException) as caught:
                call()
            assert caught.value.code == "process_not_found"


def test_disconnect_closes_the_stream_the_terminal_runs_on_and_wait_raises(
    plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"$ "], None))
    hold_events(monkeypatch, plane, held)
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        screen = Screen()
        term = sbx.pty.create(on_data=screen)
        held.read.wait(10)
        waited: list[BaseException | object] = []

        def wait_elsewhere() -> None:
            try:
                waited.append(term.wait())
            except BaseException as error:
                waited.append(error)

        waiter = threading.Thread(target=wait_elsewhere)
        waiter.start()
        term.disconnect()  # returns once the follower stopped
        assert held.cut.is_set() and held.closed.is_set()
        assert screen.chunks == [b"$ "]
        waiter.join(10)
        assert len(waited) == 1 and isinstance(waited[0], SandboxException)
        with pytest.raises(SandboxException) as caught:
            term.wait()
        assert caught.value.message == "this handle was disconnected from its terminal: pty.connect follows it again"
        term.disconnect()  # again: nothing more
        assert plane.sent("POST", "/signal") == []  # nothing ended: the terminal runs on
        sbx.pty.send_input(term.pid, "still there\n")  # and is reached by pid
        assert plane.sent("POST", "/stdin") == [b"still there\n"]


def test_disconnect_from_on_data_drops_the_events_read_with_it(
    plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"one", b"two", b"three"], None))  # one chunk of the stream
    hold_events(monkeypatch, plane, held)
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        chunks: list[bytes] = []
        handles: list[PtyHandle] = []

        def on_data(data: bytes) -> None:
            chunks.append(data)
            eventually(lambda: bool(handles))
            handles[0].disconnect()  # on the follower's own thread: no self-join

        handles.append(sbx.pty.create(on_data=on_data))
        held.closed.wait()
        assert held.cut.is_set()  # the follower was waiting for more: cancelled
        assert chunks == [b"one"]
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            handles[0].wait()


def test_wait_after_disconnect_gives_an_end_already_seen(plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldStream(event_lines(PID, [b"bye"], {"exitCode": 0, "signal": None}))  # the end, stream open
    hold_events(monkeypatch, plane, held)
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        term = sbx.pty.create(on_data=Screen())
        held.read.wait(10)
        term.disconnect()
        assert held.closed.is_set()
        assert term.wait() == PtyResult(exit_code=0, signal=None)
    answer_httpx_with(monkeypatch, plane.answer)
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        ended = sbx.pty.create(on_data=Screen())
        assert ended.wait() == PtyResult(exit_code=7, signal=None)
        ended.disconnect()  # after the end: wait still gives it
        assert ended.wait() == PtyResult(exit_code=7, signal=None)


# --- the process list -------------------------------------------------------------------------------


def test_the_process_list_takes_a_terminal(plane: DaemonPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        listed = sbx.commands.list()
        assert listed == [
            ProcessInfo(pid=5, cmd="sleep 1", running=False),
            ProcessInfo(pid=PID, cmd="bash", running=True, pty=True),
        ]
        assert [p.pty for p in listed] == [False, True]


def test_process_info_takes_pty_as_zod_takes_it() -> None:
    def parse(payload: object) -> WireProcessInfo:
        return WireProcessInfo.model_validate(payload, strict=True)

    assert parse({"pid": 1, "cmd": "x", "running": True}).pty is False
    assert parse({"pid": 1, "cmd": "x", "running": True, "pty": True}).pty is True
    assert parse({"pid": 1, "cmd": "x", "running": True, "pty": False}).pty is False
    for bad in (None, "true", 1):
        with pytest.raises(ValueError):
            parse({"pid": 1, "cmd": "x", "running": True, "pty": bad})
    with pytest.raises(ValueError):
        parse({"pid": 1, "cmd": "x", "running": True, "tty": True})  # still strict


# --- async ------------------------------------------------------------------------------------------


async def test_async_terminal_calls_with_plain_and_async_on_data(plane: DaemonPlane) -> None:
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        assert isinstance(sbx.pty, AsyncPty)
        plain = Screen()
        term = await sbx.pty.create(cols=90, rows=20, on_data=plain)
        assert isinstance(term, AsyncPtyHandle) and term.pid == PID
        await term.send_input("echo hi\n")
        await term.resize(cols=91, rows=21)
        await term.kill()
        assert await term.wait() == PtyResult(exit_code=7, signal=None)
        assert plain.chunks == SHOWN

        chunks: list[bytes] = []

        async def on_data(data: bytes) -> None:
            await asyncio.sleep(0)
            chunks.append(data)

        again = await sbx.pty.connect(PID, on_data=on_data)
        assert (await again.wait()).exit_code == 7 and chunks == SHOWN
        with pytest.raises(SandboxException) as caught:
            await sbx.pty.connect(999, on_data=on_data)
        assert caught.value.code == "process_not_found"
        assert plane.sent("POST", "/v1/processes") == [
            {"cmd": DEFAULT_PTY_CMD, "pty": {"cols": 90, "rows": 20}, "envs": {}, "killTree": True}
        ]
        assert plane.sent("POST", "/stdin") == [b"echo hi\n"]
        assert plane.sent("POST", "/resize") == [{"cols": 91, "rows": 21}]
        assert plane.sent("POST", "/signal") == [{"signal": "SIGKILL", "tree": True}]
        assert [p.pty for p in await sbx.commands.list()] == [False, True]


async def test_async_refusals_before_any_call(plane: DaemonPlane) -> None:
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        term = await sbx.pty.create(on_data=Screen())
        await term.wait()
        plane.requests.clear()
        plane.daemon.clear()
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.pty.create(rows=0, on_data=Screen())
        assert caught.value.field == "rows"
        with pytest.raises(InvalidArgumentException) as caught:
            await term.resize(cols=1001, rows=1)
        assert caught.value.field == "cols"
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.pty.connect(0, on_data=Screen())
        assert caught.value.field == "pid"
        assert plane.requests == [] and plane.daemon == []


async def test_async_close_stops_following_terminals(plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal still running when its handle closes: its follower is cancelled, its ``wait`` too."""
    gate = asyncio.Event()
    lines = event_lines(PID, [b"$ "], None)

    async def stream() -> Any:
        yield lines
        await gate.wait()  # never set: the terminal goes on

    def answer(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith(f"/v1/processes/{PID}/events"):
            return httpx.Response(200, content=stream())
        return plane.answer(request)

    answer_httpx_with(monkeypatch, answer)
    sbx = await AsyncSandbox.create(control_plane_url=PLANE)
    screen = Screen()
    term = await sbx.pty.create(on_data=screen)
    await sbx.close()
    assert screen.chunks == [b"$ "]
    with pytest.raises(asyncio.CancelledError):
        await term.wait()


async def test_async_by_pid_calls_and_refusals(plane: DaemonPlane) -> None:
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        calls: list[Callable[[], Awaitable[None]]] = [
            lambda: sbx.pty.send_input(0, "x"),
            lambda: sbx.pty.resize(True, cols=1, rows=1),
            lambda: sbx.pty.kill("321"),  # type: ignore[arg-type]
        ]
        for call in calls:
            with pytest.raises(InvalidArgumentException) as caught:
                await call()
            assert caught.value.field == "pid"
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.pty.resize(PID, cols=1, rows=1001)
        assert caught.value.field == "rows" and caught.value.message.startswith("pty.resize: ")
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.pty.send_input(PID, 5)  # type: ignore[arg-type]
        assert caught.value.field == "data"
        assert plane.requests == [] and plane.daemon == []

        await sbx.pty.send_input(PID, "ls\n")
        await sbx.pty.resize(PID, cols=100, rows=30)
        await sbx.pty.kill(PID)
        assert plane.daemon == [
            ("POST", f"/v1/processes/{PID}/stdin", f"Bearer {TOKEN}", b"ls\n"),
            ("POST", f"/v1/processes/{PID}/resize", f"Bearer {TOKEN}", {"cols": 100, "rows": 30}),
            ("POST", f"/v1/processes/{PID}/signal", f"Bearer {TOKEN}", {"signal": "SIGKILL", "tree": True}),
        ]


async def test_async_disconnect_closes_the_stream_and_wait_raises(
    plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"$ "], None))
    hold_events(monkeypatch, plane, held)
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        screen = Screen()
        term = await sbx.pty.create(on_data=screen)
        await asyncio.to_thread(held.read.wait, 10)
        waiting = asyncio.create_task(term.wait())
        await asyncio.sleep(0)
        await term.disconnect()
        assert held.cut.is_set() and held.closed.is_set() and screen.chunks == [b"$ "]
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            await waiting  # a wait already pending: the disconnect's error, not a cancellation
        with pytest.raises(SandboxException) as caught:
            await term.wait()
        assert caught.value.message == "this handle was disconnected from its terminal: pty.connect follows it again"
        await term.disconnect()
        assert plane.sent("POST", "/signal") == []


async def test_async_disconnect_from_on_data_and_after_the_end(
    plane: DaemonPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldStream(event_lines(PID, [b"one", b"two"], None))
    hold_events(monkeypatch, plane, held)
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        chunks: list[bytes] = []
        handles: list[AsyncPtyHandle] = []

        async def on_data(data: bytes) -> None:
            chunks.append(data)
            while not handles:
                await asyncio.sleep(0.01)
            await handles[0].disconnect()  # in the follower task itself: no self-wait

        handles.append(await sbx.pty.create(on_data=on_data))
        with pytest.raises(SandboxException, match="disconnected from its terminal"):
            await handles[0].wait()
        assert held.closed.is_set() and chunks == [b"one"]

    ended = HeldStream(event_lines(PID, [b"bye"], {"exitCode": None, "signal": "SIGKILL"}))
    hold_events(monkeypatch, plane, ended)
    async with await AsyncSandbox.create(control_plane_url=PLANE) as sbx:
        term = await sbx.pty.create(on_data=Screen())
        await asyncio.to_thread(ended.read.wait, 10)
        await term.disconnect()
        assert ended.closed.is_set()
        assert await term.wait() == PtyResult(exit_code=None, signal="SIGKILL")  # the end was seen
