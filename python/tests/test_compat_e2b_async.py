"""The async E2B shim (``AsyncSandbox`` of ``sdk.compat.e2b``) running programs written for E2B's async
SDK against the real control plane: commands with coroutine callbacks, background commands, files,
``watch_dir`` with ``on_event``/``on_exit``, connect by id, pause, kill; and the native handle's agent
refused before any call. Every test ends the sandboxes it created."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from conftest import ControlPlane, refuse_traffic
from sdk import AgentModel, AgentSpec
from sdk import InvalidArgumentException as NativeInvalidArgumentException
from sdk.compat.e2b import (
    AsyncCommandHandle,
    AsyncSandbox,
    AuthenticationException,
    CommandExitException,
    FileNotFoundException,
    FilesystemEvent,
    FilesystemEventType,
    FileType,
    InvalidArgumentException,
    NotFoundException,
    SandboxNotFoundException,
    TimeoutException,
    NotSupportedException,
    WriteEntry,
)


async def test_refusals_before_any_call(no_traffic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDK_API_KEY", "key")
    with pytest.raises(NotSupportedException, match="`domain` is E2B's hosted service"):
        await AsyncSandbox.create(domain="e2b.app")
    with pytest.raises(InvalidArgumentException, match="gateways is not accepted"):
        await AsyncSandbox.create(gateways={"llm": object()})
    with pytest.raises(InvalidArgumentException, match="metadata"):  # offered, with the native rules
        await AsyncSandbox.create(metadata={"k": "a\x00b"})
    with pytest.raises(InvalidArgumentException, match="^AsyncSandbox.get_metrics: start: must be a datetime"):
        await AsyncSandbox.get_metrics("0123456789ab", start="yesterday")  # type: ignore[arg-type]  # checked first
    monkeypatch.delenv("SDK_ACCESS_TOKEN", raising=False)
    monkeypatch.delenv("SDK_API_KEY")  # with a key, connect first asks whether the sandbox exists
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    with pytest.raises(AuthenticationException, match="access token"):
        await AsyncSandbox.connect("0123456789ab")
    assert not hasattr(AsyncSandbox, "agent")


async def test_commands_program(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(envs={"GREETING": "hi"}, timeout=300) as sbx:
        result = await sbx.commands.run('echo "$GREETING from $(whoami) in $PWD"')
        assert (result.exit_code, result.stdout) == (0, "hi from user in /home/user\n")

        with pytest.raises(CommandExitException) as failed:
            await sbx.commands.run("echo bad >&2; exit 2")
        error = failed.value
        assert (error.exit_code, error.stderr, error.error) == (2, "bad\n", "exit status 2")

        with pytest.raises(TimeoutException):
            await sbx.commands.run("sleep 10", timeout=1)
        assert (await sbx.commands.run("id -u", user="root")).stdout == "0\n"
        with pytest.raises(InvalidArgumentException, match="must be 'user' or 'root'"):
            await sbx.commands.run("id", user="nobody")

        # Coroutine callbacks, a background command, its output so far, wait.
        seen: list[str] = []

        async def on_stdout(text: str) -> None:
            seen.append(text)

        handle = await sbx.commands.run("echo one; sleep 0.5; echo two", background=True, on_stdout=on_stdout)
        assert isinstance(handle, AsyncCommandHandle)
        done = await handle.wait()
        assert done.stdout == "one\ntwo\n" == handle.stdout == "".join(seen)
        assert handle.exit_code == 0 and handle.error is None

        # Background + list + kill, stdin.
        sleeper = await sbx.commands.run("sleep 30", background=True)
        assert sleeper.pid in [process.pid for process in await sbx.commands.list()]
        assert await sleeper.kill() is True
        with pytest.raises(CommandExitException):
            await sleeper.wait()
        assert sleeper.exit_code == -1
        assert await sbx.commands.kill(999_999) is False

        cat = await sbx.commands.run("cat", background=True, stdin=True)
        await cat.send_stdin("piped")
        await cat.close_stdin()
        assert (await cat.wait()).stdout == "piped"

        attached = await sbx.commands.connect(cat.pid)
        assert (await attached.wait()).stdout == "piped"  # its output from the start
        with pytest.raises(NotFoundException):
            await sbx.commands.connect(999_999)


async def test_files_and_watch_program(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        info = await sbx.files.write("notes/hello.txt", "hello")
        assert (info.path, info.type) == ("/home/user/notes/hello.txt", FileType.FILE)
        assert await sbx.files.read("notes/hello.txt") == "hello"
        assert await sbx.files.read("notes/hello.txt", format="bytes") == bytearray(b"hello")
        stream = await sbx.files.read("notes/hello.txt", format="stream")
        assert b"".join([chunk async for chunk in stream]) == b"hello"
        entries = [WriteEntry(path="notes/a.txt", data="a"), WriteEntry(path="notes/b.bin", data=b"b")]
        await sbx.files.write_files(entries)
        listed = {entry.name: entry.type for entry in await sbx.files.list("notes")}
        assert listed == {"hello.txt": FileType.FILE, "a.txt": FileType.FILE, "b.bin": FileType.FILE}
        assert await sbx.files.exists("notes/a.txt") and not await sbx.files.exists("notes/zzz")
        assert (await sbx.files.get_info("notes")).type == FileType.DIR
        assert await sbx.files.make_dir("notes/sub") is True
        assert (await sbx.files.rename("notes/a.txt", "notes/sub/a.txt")).path == "/home/user/notes/sub/a.txt"
        await sbx.files.remove("notes/b.bin")
        assert not await sbx.files.exists("notes/b.bin")
        with pytest.raises(FileNotFoundException):
            await sbx.files.read("notes/b.bin")

        events: list[FilesystemEvent] = []
        exits: list[Exception | None] = []
        got_write = asyncio.Event()

        async def on_event(event: FilesystemEvent) -> None:
            events.append(event)
            if event.type == FilesystemEventType.WRITE and event.name == "sub/watched.txt":
                got_write.set()

        handle = await sbx.files.watch_dir(
            "notes", on_event, on_exit=exits.append, recursive=True, include_entry=True
        )
        await sbx.files.write("notes/sub/watched.txt", "x")
        await asyncio.wait_for(got_write.wait(), 10)
        write = next(e for e in events if e.name == "sub/watched.txt" and e.type == FilesystemEventType.WRITE)
        assert write.entry is not None and write.entry.path == "/home/user/notes/sub/watched.txt"
        await handle.stop()
        assert exits == [None]

        short = await sbx.files.watch_dir("notes", lambda event: None, on_exit=exits.append, timeout=1)
        await asyncio.sleep(2)
        assert isinstance(exits[-1], TimeoutException)
        await short.stop()  # already ended: on_exit is not called again
        assert len(exits) == 2
        with pytest.raises(FileNotFoundException):
            await sbx.files.watch_dir("not_there", lambda event: None)


async def test_connect_pause_kill_and_native_agent(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    sbx = await AsyncSandbox.create(timeout=300)
    try:
        await sbx.files.write("state.txt", "kept")
        assert await sbx.pause() is True
        assert (await AsyncSandbox.get_info(sbx.sandbox_id)).state == "paused"
        again = await AsyncSandbox.connect(sbx.sandbox_id)  # resumed; the token this process holds
        assert await again.is_running()
        assert await again.files.read("state.txt") == "kept"
        items = await AsyncSandbox.list().next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in items]
        await again.close()

        assert not hasattr(sbx, "agent")
        spec = AgentSpec(AgentModel("compatible", "model-1", "llm", base_path="/v1"))
        with monkeypatch.context() as patched:
            patched.setattr(httpx.AsyncClient, "send", refuse_traffic)
            with pytest.raises(NativeInvalidArgumentException):
                await sbx.native.agent.run("hi", spec=spec)
    finally:
        assert await sbx.kill() is True
        await sbx.close()
    assert await sbx.kill() is False
    assert await AsyncSandbox.kill(sbx.sandbox_id) is False
    with pytest.raises(SandboxNotFoundException):
        await AsyncSandbox.get_info(sbx.sandbox_id)
