"""Terminals through the Python SDK (issue 28 item 2; ``sdk/pty.ts``), against a fake control plane and
sandboxd (``_httpx_fake.py``): ``sbx.pty.create`` as ``POST /v1/processes`` with ``pty: {cols, rows}``
and the start fields of TypeScript's body (defaults 80 x 24, the login shell, ``killTree``, ``cwd``,
``envs``, ``user``, ``timeoutMs`` from seconds), then the command's event stream, its output handed to
``on_data`` as bytes (not decoded: a split character and a non-UTF-8 byte arrive as they were sent);
``send_input`` as raw bytes to ``…/stdin``, ``resize`` as ``{cols, rows}`` to ``…/resize``, ``kill`` as
SIGKILL to the tree, ``wait`` the exit status or signal; ``connect(pid)`` reading the kept output, an
unknown pid as ``process_not_found``; every option checked before any call; ``ProcessInfo`` taking the
list's ``pty: true``; the async twin (``on_data`` plain or ``async``) and its close."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any, Callable

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from test_egress import DAEMON, PLANE, TOKEN, FakePlane

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
from sdk._sandbox_options import DEFAULT_PTY_CMD
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
    unknown pid's events refused with ``process_not_found``. Daemon requests are kept in ``daemon``."""

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
        # Each daemon call first reports activity, as the commands' calls do.
        activity = [url for m, url, _, _ in plane.requests if url.endswith("/activity")]
        assert len(activity) >= 6


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
            lambda: term.resize(cols=10, rows=10), term.kill,
        ]  # fmt: skip
        for attempt in attempts:
            with pytest.raises(SandboxException) as caught:
                attempt()
            assert caught.value.code == "sandbox_ended"
        assert plane.requests == [] and plane.daemon == []
    finally:
        sbx.close()


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
