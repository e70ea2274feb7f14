"""``AsyncSandbox`` against the real control plane: the same rows as the sync tests, awaited (the
operations are shared; these prove the async I/O). Every test ends the sandboxes it created."""

from __future__ import annotations

import asyncio
from typing import Any, NoReturn

import httpx
import pytest

from conftest import ControlPlane
from sdk import (
    AsyncCommandHandle,
    AsyncSandbox,
    AuthenticationException,
    CommandResult,
    InvalidArgumentException,
    SandboxException,
)


def refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("an HTTP request was sent")


def sandbox_count(plane: ControlPlane) -> int:
    listed = plane._call("GET", "/v1/sandboxes")
    assert isinstance(listed, list)
    return len(listed)


async def test_run_gives_output_exit_codes_envs_and_cwd(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        assert await sbx.commands.run("echo hello") == CommandResult("hello\n", "", 0, None)
        failed = await sbx.commands.run("echo oops >&2; exit 3")
        assert (failed.stderr, failed.exit_code) == ("oops\n", 3)
        result = await sbx.commands.run('echo "$GREETING"; pwd', envs={"GREETING": "hi"}, cwd="/tmp")
        assert result.stdout == "hi\n/tmp\n"


async def test_background_commands_with_stdin_callbacks_and_kill(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        plain: list[str] = []
        awaited: list[str] = []

        async def on_stderr(text: str) -> None:
            await asyncio.sleep(0)
            awaited.append(text)

        handle = await sbx.commands.run(
            "read line; echo got:$line; echo err >&2",
            background=True,
            on_stdout=plain.append,
            on_stderr=on_stderr,
        )
        assert isinstance(handle, AsyncCommandHandle) and handle.pid > 0
        await handle.send_stdin("abc\n")
        assert await handle.wait() == CommandResult("got:abc\n", "err\n", 0, None)
        assert ("".join(plain), "".join(awaited)) == ("got:abc\n", "err\n")

        cat = await sbx.commands.run("cat", background=True)
        await cat.send_stdin(b"bytes")
        await cat.close_stdin()
        assert (await cat.wait()).stdout == "bytes"

        sleeper = await sbx.commands.run("echo started; sleep 60", background=True)
        again = await sbx.commands.connect(sleeper.pid)
        await sleeper.kill()
        ended = await sleeper.wait()
        assert ended.exit_code is None and ended.signal in ("SIGTERM", "SIGKILL")
        assert await again.wait() == ended
        assert {p.pid for p in await sbx.commands.list()} >= {handle.pid, cat.pid, sleeper.pid}


async def test_pause_then_connect_resumes(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        sleeper = await sbx.commands.run("sleep 300", background=True)
        await sbx.pause()
        assert (await sbx.get_info()).state == "suspended"
        assert await sbx.connect() is sbx
        assert (await sbx.get_info()).state == "running"
        assert any(p.pid == sleeper.pid and p.running for p in await sbx.commands.list())


async def test_a_second_handle_connects_with_the_token_and_not_without(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with await AsyncSandbox.create() as sbx:
        await sbx.pause()
        other = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        try:
            assert (await other.get_info()).state == "running"
            assert (await other.commands.run("echo from-other")).stdout == "from-other\n"
        finally:
            await other.close()
        monkeypatch.delenv("SDK_ACCESS_TOKEN", raising=False)
        with monkeypatch.context() as patched:
            patched.setattr(httpx.AsyncClient, "send", refuse)
            with pytest.raises(AuthenticationException):
                await AsyncSandbox.connect(sbx.sandbox_id)
        wrong = "wrong-token-" + "y" * 20
        refused = await AsyncSandbox.connect(sbx.sandbox_id, access_token=wrong)
        try:
            with pytest.raises(AuthenticationException) as raised:
                await refused.commands.run("echo no")
            assert wrong not in str(raised.value) and wrong not in repr(refused)
        finally:
            await refused.close()


async def test_kill_then_every_call_raises_before_any_traffic(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    sbx = await AsyncSandbox.create()
    try:
        running = await sbx.commands.run("sleep 300", background=True)
        await sbx.kill()
        info = await sbx.get_info()
        assert (info.state, info.end_reason) == ("ended", "killed")
        with pytest.raises(SandboxException):
            await running.wait()
        monkeypatch.setattr(httpx.AsyncClient, "send", refuse)
        for call in (
            lambda: sbx.commands.run("echo"),
            lambda: sbx.commands.list(),
            sbx.pause,
            sbx.connect,
            sbx.kill,
            lambda: running.send_stdin("x"),
            running.kill,
        ):
            with pytest.raises(SandboxException) as raised:
                await call()
            assert raised.value.code == "sandbox_ended" and sbx.access_token not in str(raised.value)
    finally:
        await sbx.close()


async def test_a_second_handle_learns_the_sandbox_ended(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed through another handle: this one's next daemon call is refused by the control plane with
    ``sandbox_ended``; the handle remembers it, and every call after is refused before any request."""
    async with await AsyncSandbox.create() as sbx:
        other = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        await sbx.kill()
        try:
            with pytest.raises(SandboxException) as first:
                await other.commands.list()
            assert first.value.code == "sandbox_ended"
            with monkeypatch.context() as patched:
                patched.setattr(httpx.AsyncClient, "send", refuse)
                for call in (
                    lambda: other.commands.list(),
                    lambda: other.commands.run("echo"),
                    lambda: other.files.read("/home/user/a"),
                    other.pause,
                ):
                    with pytest.raises(SandboxException, match="has ended") as raised:
                        await call()
                    assert raised.value.code == "sandbox_ended"
        finally:
            await other.close()


async def test_async_with_kills_the_sandbox_at_exit(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=120, isolation="namespace") as sbx:
        sandbox_id = sbx.sandbox_id
        assert (await sbx.get_info()).isolation == "namespace"
        token = sbx.access_token
        assert token not in repr(sbx)
        await sbx.commands.run("sleep 300", background=True)  # followed until the handle closes
    answer = control_plane._call("GET", f"/v1/sandboxes/{sandbox_id}")
    assert isinstance(answer, dict) and answer["state"] == "ended"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"template": "Bad Name"}, "template"),
        ({"timeout": 9 * 3600}, "timeout"),
        ({"memory_mb": 20_000}, "memory_mb"),
        ({"cpus": 100}, "cpus"),
        ({"allow_internet_access": 1}, "allow_internet_access"),  # None is "not given": the default
        ({"isolation": "vm"}, "isolation"),
        ({"snapshot": "snap_NOPE"}, "snapshot"),
    ],
)
async def test_bad_create_options_raise_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], field: str
) -> None:
    before = sandbox_count(control_plane)
    with monkeypatch.context() as patched:
        patched.setattr(httpx.AsyncClient, "send", refuse)
        with pytest.raises(InvalidArgumentException) as raised:
            await AsyncSandbox.create(**options)
    assert raised.value.field == field
    assert sandbox_count(control_plane) == before


async def test_bad_run_options_raise_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with await AsyncSandbox.create() as sbx:
        with monkeypatch.context() as patched:
            patched.setattr(httpx.AsyncClient, "send", refuse)
            with pytest.raises(InvalidArgumentException) as raised:
                await sbx.commands.run("echo", cwd="relative")
            assert raised.value.field == "cwd"
