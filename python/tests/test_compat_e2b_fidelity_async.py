"""Programs as E2B's documentation and its Python SDK's own tests write them, run through the async E2B shim
against the real control plane with only the import changed, asserting what E2B says the program
observes: result shapes, field names and types, enum members, exception classes, defaults. This
module: the same programs with ``AsyncSandbox`` (commands, files, watches with ``on_event``, lifecycle,
a kill under a command and a watch). Every test ends the sandboxes it created."""

from __future__ import annotations

import asyncio

import pytest

from conftest import ControlPlane
from sdk.compat.e2b import (
    AsyncSandbox,
    FileNotFoundException,
    FilesystemEvent,
    FilesystemEventType,
    FileType,
    SandboxNotFoundException,
    SandboxQuery,
    SandboxState,
    TimeoutException,
)


# --- the same programs with AsyncSandbox ----------------------------------------------------------


async def test_async_program_commands_files_and_lifecycle(control_plane: ControlPlane) -> None:
    sbx = await AsyncSandbox.create()
    try:
        result = await sbx.commands.run('echo "Hello, World!"')
        assert (result.exit_code, result.stdout) == (0, "Hello, World!\n")
        with pytest.raises(TimeoutException):
            await sbx.commands.run("sleep 10", timeout=1)
        await sbx.files.write("a/test.txt", "Hello")
        await sbx.commands.run("ln -s test.txt link.txt", cwd="a")
        link = await sbx.files.get_info("a/link.txt")
        assert (link.type, link.symlink_target) == (FileType.FILE, "/home/user/a/test.txt")
        assert await sbx.files.make_dir("a") is False
        info = await sbx.get_info()
        assert info.state == SandboxState.RUNNING
        listed = await AsyncSandbox.list(SandboxQuery(state=[SandboxState.RUNNING])).next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in listed]
        await sbx.pause()
        assert (await AsyncSandbox.get_info(sbx.sandbox_id)).state == SandboxState.PAUSED
        again = await AsyncSandbox.connect(sbx.sandbox_id)
        assert await again.is_running()
        # A timeout past the lifetime left extends it (never shortens, as E2B's connect).
        before = (await again.get_info()).end_at
        await again.connect(timeout=7200)
        assert (await again.get_info()).end_at > before
        sleeper = await sbx.commands.run("sleep 60", background=True)
    finally:
        assert await sbx.kill() is True
    with pytest.raises(TimeoutException, match="sandbox was killed or reached its end of life"):
        await asyncio.wait_for(sleeper.wait(), 30)


async def test_async_watch_program_with_on_event(control_plane: ControlPlane) -> None:
    sbx = await AsyncSandbox.create()
    try:
        await sbx.files.make_dir("watched")
        await sbx.files.write("watched/test_watch.txt", "This file will be watched.")
        write_seen = asyncio.Event()
        received: list[FilesystemEvent] = []

        def on_event(event: FilesystemEvent) -> None:
            if event.type == FilesystemEventType.WRITE and event.name == "test_watch.txt":
                received.append(event)
                write_seen.set()

        handle = await sbx.files.watch_dir("watched", on_event=on_event, include_entry=True)
        await sbx.files.write("watched/test_watch.txt", "This file has been modified.")
        await asyncio.wait_for(write_seen.wait(), 10)
        entry = received[0].entry
        assert entry is not None
        assert (entry.name, entry.path, entry.type) == (
            "test_watch.txt", "/home/user/watched/test_watch.txt", FileType.FILE
        )
        await handle.stop()

        nested_seen, folder_seen = asyncio.Event(), asyncio.Event()

        async def on_nested(event: FilesystemEvent) -> None:  # a coroutine handler, as E2B allows
            if event.type == FilesystemEventType.WRITE and event.name == "nested/test_watch.txt":
                nested_seen.set()
            if event.type == FilesystemEventType.CREATE and event.name == "nested":
                folder_seen.set()

        recursive = await sbx.files.watch_dir("watched", on_nested, recursive=True)
        await sbx.files.make_dir("watched/nested")
        await sbx.files.write("watched/nested/test_watch.txt", "nested")
        await asyncio.wait_for(asyncio.gather(nested_seen.wait(), folder_seen.wait()), 10)
        await recursive.stop()
        with pytest.raises(FileNotFoundException):
            await sbx.files.watch_dir("non_existing_watch_dir", on_event)
    finally:
        await sbx.kill()


async def test_async_kill_under_a_command_and_a_watch_raises_timeout_exception(control_plane: ControlPlane) -> None:
    sbx = await AsyncSandbox.create(timeout=60)
    command = await sbx.commands.run("sleep 60", background=True)
    watch_ended: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
    await sbx.files.watch_dir(".", lambda event: None, on_exit=watch_ended.set_result, timeout=0)
    assert await sbx.kill() is True
    ended_by = await asyncio.wait_for(watch_ended, 10)
    assert isinstance(ended_by, TimeoutException), ended_by
    with pytest.raises(TimeoutException, match="reached its end of life while the request was in flight"):
        await command.wait()
    with pytest.raises(TimeoutException):
        await sbx.files.read("anything.txt")
    with pytest.raises(SandboxNotFoundException):  # the sandbox's own calls still say "not found", as E2B's
        await sbx.get_info()
