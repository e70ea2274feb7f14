"""Issue 16: background commands of the sync ``Sandbox`` and ``AsyncSandbox`` against the real control
plane: callbacks, cwd, envs, timeout and the sandbox user; ``list()`` running then ended; ``kill()`` and
``send_stdin()``; ``connect(pid)`` with the output from the start after a pause and resume and from another
Python process; every call activity for the idle policy; the command in the inspector's record feed.
Every test ends the sandboxes it created."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from _cut_proxy import CutProxy
from conftest import ControlPlane, refuse_traffic
from sdk import (
    AsyncSandbox,
    CommandHandle,
    CommandResult,
    InvalidArgumentException,
    Sandbox,
    SandboxException,
)
from sdk._daemon import daemon

PYTHON_DIR = Path(__file__).resolve().parents[1]
RULE = "must be 'user' or 'root'"


def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Waits until ``condition()`` holds; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


async def async_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


class Chunks:
    """Output chunks a callback received (from the handle's thread or task)."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            self._chunks.append(text)

    def text(self) -> str:
        with self._lock:
            return "".join(self._chunks)


def paused_after_first_output(
    sbx: Sandbox, script: str, first: str, cwd: str | None = None
) -> tuple[CommandHandle, Chunks]:
    """Starts ``script`` in the background, waits for its output ``first``, then pauses the sandbox: the
    handle and the stdout it has followed."""
    out = Chunks()
    handle = sbx.commands.run(script, background=True, cwd=cwd, on_stdout=out)
    until(lambda: out.text() == first)
    sbx.pause()
    return handle, out


def in_another_process(script: str, *args: str, token: str) -> Any:
    """Runs ``script`` with a new Python interpreter importing this SDK; its stdout's JSON."""
    env = {**os.environ, "SDK_ACCESS_TOKEN": token, "PYTHONPATH": str(PYTHON_DIR)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def last_activity_at(plane: ControlPlane, sandbox_id: str) -> float:
    """The control plane's last activity time of the sandbox (the inspector's table, operator key)."""
    table = plane._call("GET", "/v1/inspector/sandboxes")
    assert isinstance(table, dict)
    row = next(s for s in table["sandboxes"] if s["sandboxId"] == sandbox_id)
    return float(row["lastActivityAt"])


def inspector_record(plane: ControlPlane, sandbox_id: str, matches: Callable[[dict[str, Any]], bool]) -> Any:
    """The first record of the inspector's feed of the sandbox that ``matches`` (the feed stays open)."""
    request = urllib.request.Request(
        f"{plane.url}/v1/sandboxes/{sandbox_id}/records",
        headers={"authorization": f"Bearer {plane.operator_key}"},
    )
    with urllib.request.urlopen(request, timeout=15) as feed:
        for line in feed:
            record = json.loads(line)
            if matches(record):
                return record
    raise AssertionError("the record feed ended without the record")


@pytest.fixture(scope="module")
def shared(control_plane: ControlPlane) -> Iterator[Sandbox]:
    """One sandbox for the tests of this module that neither pause nor kill it."""
    with Sandbox.create(template="sdk-base", timeout=600) as sbx:
        yield sbx


# --- sync ---------------------------------------------------------------------------------------


def test_a_background_command_takes_callbacks_cwd_envs_and_the_user_and_is_listed(shared: Sandbox) -> None:
    out, err = Chunks(), Chunks()
    cmd = 'echo "$GREETING from $(pwd) as $(id -u)"; echo warning >&2; read line; echo "got $line"'
    handle = shared.commands.run(
        cmd,
        background=True,
        cwd="/tmp",
        envs={"GREETING": "hello"},
        user="user",
        on_stdout=out,
        on_stderr=err,
    )
    assert handle.pid > 0
    until(lambda: out.text() == "hello from /tmp as 1000\n")
    assert any(p.pid == handle.pid and p.cmd == cmd and p.running for p in shared.commands.list())
    handle.send_stdin("the input\n")
    result = handle.wait()
    assert result == CommandResult("hello from /tmp as 1000\ngot the input\n", "warning\n", 0, None)
    assert (out.text(), err.text()) == (result.stdout, result.stderr)
    assert any(p.pid == handle.pid and not p.running for p in shared.commands.list())


def test_a_background_command_ends_at_its_timeout_and_by_kill(shared: Sandbox) -> None:
    timed = shared.commands.run("echo started; sleep 30", background=True, timeout=0.8)
    assert timed.wait() == CommandResult("started\n", "", None, "SIGTERM")
    up = Chunks()
    tree = shared.commands.run("echo up; sleep 300 & sleep 300", background=True, on_stdout=up)
    until(lambda: up.text() == "up\n")  # the tree is up: killed from here on
    tree.kill()
    killed = tree.wait()
    assert (killed.stdout, killed.exit_code) == ("up\n", None) and killed.signal in ("SIGTERM", "SIGKILL")
    assert "sleep" not in shared.commands.run("cat /proc/[0-9]*/comm").stdout
    assert shared.commands.connect(tree.pid).wait() == killed


@pytest.mark.parametrize("user", ["nobody", "", "ROOT", None, 0])
def test_any_user_but_user_or_root_is_refused_before_any_call(
    shared: Sandbox, no_traffic: None, user: object
) -> None:
    options: dict[str, Any] = {"user": user}
    for background in (True, False):
        with pytest.raises(InvalidArgumentException) as raised:
            shared.commands.run("id -u", background=background, **options)
        assert raised.value.field == "user" and raised.value.message == f"commands.run: user: {RULE}"


def test_connect_checks_its_arguments_before_any_call(shared: Sandbox, no_traffic: None) -> None:
    options: dict[str, Any] = {"on_stdout": "print"}
    with pytest.raises(InvalidArgumentException) as raised:
        shared.commands.connect(5, **options)
    assert raised.value.field == "on_stdout"
    with pytest.raises(InvalidArgumentException):
        shared.commands.connect(0)


def test_connect_to_an_unknown_pid_is_process_not_found(shared: Sandbox) -> None:
    with pytest.raises(SandboxException) as raised:
        shared.commands.connect(999_999)
    assert raised.value.code == "process_not_found"


def test_connect_after_pause_and_resume_gives_the_output_from_the_start(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        script = 'echo before; read line; echo "after $line"; for i in 1 2 3; do echo tick $i; sleep 0.2; done'
        handle, first = paused_after_first_output(sbx, script, "before\n")
        assert sbx.get_info().state == "suspended"
        sbx.connect()
        seen = Chunks()
        attached = sbx.commands.connect(handle.pid, on_stdout=seen)
        until(lambda: seen.text() == "before\n")
        assert any(p.pid == handle.pid and p.running for p in sbx.commands.list())
        attached.send_stdin("resume\n")
        expected = "before\nafter resume\ntick 1\ntick 2\ntick 3\n"
        assert attached.wait() == CommandResult(expected, "", 0, None)
        assert seen.text() == expected
        # The handle that started it followed it across the pause too.
        assert handle.wait().stdout == expected and first.text() == expected


SYNC_OTHER_PROCESS = """
    import json, sys
    from sdk import Sandbox

    sandbox_id, pid = sys.argv[1], int(sys.argv[2])
    sbx = Sandbox.connect(sandbox_id)
    out, err = [], []
    handle = sbx.commands.connect(pid, on_stdout=out.append, on_stderr=err.append)
    listed = [p.running for p in sbx.commands.list() if p.pid == pid]
    handle.send_stdin("from the other process\\n")
    result = handle.wait()
    sbx.close()
    print(json.dumps({"stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code,
                      "out": "".join(out), "err": "".join(err), "listed": listed}))
"""


def test_another_process_connects_to_a_background_command_after_a_pause(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        script = 'echo "first in $PWD"; echo early >&2; read line; echo "second $line"'
        # The other process's connect resumes it.
        handle, out = paused_after_first_output(sbx, script, "first in /tmp\n", cwd="/tmp")
        seen = in_another_process(SYNC_OTHER_PROCESS, sbx.sandbox_id, str(handle.pid), token=sbx.access_token)
        expected = "first in /tmp\nsecond from the other process\n"
        assert seen == {
            "stdout": expected,
            "stderr": "early\n",
            "exit_code": 0,
            "out": expected,
            "err": "early\n",
            "listed": [True],
        }
        assert handle.wait().stdout == expected


def test_calls_on_a_background_command_are_activity(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        reader = sbx.commands.run("cat > /dev/null", background=True)
        for call in (lambda: reader.send_stdin("x"), lambda: sbx.commands.connect(reader.pid)):
            before = last_activity_at(control_plane, sbx.sandbox_id)
            time.sleep(1.2)
            called_at = time.time() * 1000
            call()
            # sandboxd reports the call on its event stream, which the control plane follows: the idle
            # policy hears of it just after (pytest's timeout ends a wait that never ends).
            while last_activity_at(control_plane, sbx.sandbox_id) < called_at - 50:
                time.sleep(0.01)
            assert last_activity_at(control_plane, sbx.sandbox_id) > before
        reader.kill()


def test_a_background_command_is_in_the_inspector_record_feed(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        cmd = "echo listed; sleep 300"
        handle = sbx.commands.run(cmd, background=True)

        def ours(event: str) -> Callable[[dict[str, Any]], bool]:
            return lambda r: (r.get("type"), r.get("pid"), r.get("event")) == ("process", handle.pid, event)

        assert inspector_record(control_plane, sbx.sandbox_id, ours("start"))["command"] == cmd
        handle.kill()
        handle.wait()
        end = inspector_record(control_plane, sbx.sandbox_id, ours("end"))
        assert end["exitCode"] is None and end["signal"] in ("SIGTERM", "SIGKILL")
        assert "listed" not in json.dumps(end)


# --- async --------------------------------------------------------------------------------------


async def test_async_background_command_with_callbacks_user_and_list(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        out: list[str] = []
        err: list[str] = []

        async def on_stderr(text: str) -> None:
            await asyncio.sleep(0)
            err.append(text)

        cmd = 'echo "$GREETING from $(pwd) as $(id -u)"; echo warning >&2; read line; echo "got $line"'
        handle = await sbx.commands.run(
            cmd,
            background=True,
            cwd="/tmp",
            envs={"GREETING": "hello"},
            user="user",
            on_stdout=out.append,
            on_stderr=on_stderr,
        )
        await async_until(lambda: "".join(out) == "hello from /tmp as 1000\n")
        assert any(p.pid == handle.pid and p.running for p in await sbx.commands.list())
        await handle.send_stdin("the input\n")
        result = await handle.wait()
        assert result == CommandResult("hello from /tmp as 1000\ngot the input\n", "warning\n", 0, None)
        assert ("".join(out), "".join(err)) == (result.stdout, result.stderr)
        assert any(p.pid == handle.pid and not p.running for p in await sbx.commands.list())
        timed = await sbx.commands.run("echo started; sleep 30", background=True, timeout=0.8)
        assert await timed.wait() == CommandResult("started\n", "", None, "SIGTERM")


async def test_async_runs_as_root_and_refuses_any_other_user_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with await AsyncSandbox.create() as sbx:
        with monkeypatch.context() as patched:
            patched.setattr(httpx.AsyncClient, "send", refuse_traffic)
            options: dict[str, Any] = {"user": "nobody"}
            for background in (True, False):
                with pytest.raises(InvalidArgumentException) as raised:
                    await sbx.commands.run("id -u", background=background, **options)
                assert raised.value.field == "user" and raised.value.message == f"commands.run: user: {RULE}"
        assert await sbx.commands.list() == []
        root = await sbx.commands.run("id -u; echo $HOME; pwd", user="root")
        assert (root.stdout, root.exit_code) == ("0\n/root\n/root\n", 0)
        handle = await sbx.commands.run("id -u", user="root", background=True)
        assert (await handle.wait()).stdout == "0\n"


async def test_async_connect_after_pause_and_resume_gives_the_output_from_the_start(
    control_plane: ControlPlane,
) -> None:
    async with await AsyncSandbox.create() as sbx:
        first: list[str] = []
        handle = await sbx.commands.run(
            'echo before; read line; echo "after $line"; for i in 1 2 3; do echo tick $i; sleep 0.2; done',
            background=True,
            on_stdout=first.append,
        )
        await async_until(lambda: "".join(first) == "before\n")
        await sbx.pause()
        assert (await sbx.get_info()).state == "suspended"
        await sbx.connect()
        seen: list[str] = []

        async def on_stdout(text: str) -> None:
            seen.append(text)

        attached = await sbx.commands.connect(handle.pid, on_stdout=on_stdout)
        await async_until(lambda: "".join(seen) == "before\n")
        await attached.send_stdin("resume\n")
        expected = "before\nafter resume\ntick 1\ntick 2\ntick 3\n"
        assert await attached.wait() == CommandResult(expected, "", 0, None)
        assert "".join(seen) == expected
        assert (await handle.wait()).stdout == expected and "".join(first) == expected


ASYNC_OTHER_PROCESS = """
    import asyncio, json, sys
    from sdk import AsyncSandbox

    async def main() -> None:
        sandbox_id, pid = sys.argv[1], int(sys.argv[2])
        sbx = await AsyncSandbox.connect(sandbox_id)
        out = []
        handle = await sbx.commands.connect(pid, on_stdout=out.append)
        await handle.send_stdin("from the other process\\n")
        result = await handle.wait()
        await sbx.close()
        print(json.dumps({"stdout": result.stdout, "exit_code": result.exit_code, "out": "".join(out)}))

    asyncio.run(main())
"""


async def test_async_another_process_connects_after_a_pause(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        out: list[str] = []
        handle = await sbx.commands.run(
            'echo first; read line; echo "second $line"', background=True, on_stdout=out.append
        )
        await async_until(lambda: "".join(out) == "first\n")
        await sbx.pause()
        seen = await asyncio.to_thread(
            in_another_process, ASYNC_OTHER_PROCESS, sbx.sandbox_id, str(handle.pid), token=sbx.access_token
        )
        expected = "first\nsecond from the other process\n"
        assert seen == {"stdout": expected, "exit_code": 0, "out": expected}
        assert (await handle.wait()).stdout == expected


# --- under load (issue 24) ----------------------------------------------------------------------


def test_a_flood_of_output_arrives_whole_at_the_sdk_pace_and_the_sandbox_serves_on(shared: Sandbox) -> None:
    received = 0

    def count(text: str) -> None:
        nonlocal received
        received += len(text)

    result = shared.commands.run("head -c 50000000 /dev/zero; echo", on_stdout=count)
    assert (result.exit_code, received, len(result.stdout)) == (0, 50_000_001, 50_000_001)
    assert shared.get_info().state == "running"
    assert shared.commands.run("echo still here").stdout == "still here\n"


def test_a_command_stream_cut_off_is_opened_again_after_its_last_event(
    shared: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = "".join(f"line {i}\n" for i in range(1, 3001))
    proxy = CutProxy(shared._core.launched.daemon_url, b"/v1/processes")
    try:
        monkeypatch.setattr(shared._core, "_daemon", daemon(proxy.url))
        result = shared.commands.run("for i in $(seq 1 3000); do echo line $i; done")
        assert proxy.streams == 2  # cut once, opened again after the last event read
        assert result == CommandResult(expected, "", 0, None)
    finally:
        proxy.close()


async def test_async_a_connected_stream_cut_off_is_opened_again_after_its_last_event(
    shared: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = "".join(f"line {i}\n" for i in range(1, 3001))
    handle = shared.commands.run("read go; for i in $(seq 1 3000); do echo line $i; done", background=True)
    proxy = CutProxy(shared._core.launched.daemon_url, b"/events")
    sbx = await AsyncSandbox.connect(shared.sandbox_id, access_token=shared.access_token)
    try:
        monkeypatch.setattr(sbx._core, "_daemon", daemon(proxy.url))
        out: list[str] = []
        attached = await sbx.commands.connect(handle.pid, on_stdout=out.append)
        handle.send_stdin("go\n")
        result = await attached.wait()
        assert result == CommandResult(expected, "", 0, None)
        assert "".join(out) == expected
        assert proxy.streams == 2  # cut once, opened again after the last event read
    finally:
        await sbx.close()
        proxy.close()
