"""``sbx.files`` of ``AsyncSandbox`` against the real control plane: the rows of ``test_files.py``
awaited (the operations are shared; these prove the async I/O: streamed bodies both ways, async
iterables and file objects read off the loop, watches as tasks with plain or coroutine callbacks).
Every test ends the sandboxes it created."""

from __future__ import annotations

import asyncio
import hashlib
import io
import tracemalloc
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, NoReturn

import httpx
import pytest

from conftest import ControlPlane
from sdk import (
    AsyncFileStream,
    AsyncSandbox,
    AsyncWatchHandle,
    FilesystemEvent,
    InvalidArgumentException,
    SandboxException,
    WriteEntry,
)

HOME = "/home/user"


def refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("an HTTP request was sent")


async def until(condition: Any, timeout: float = 15) -> None:
    """Waits until ``condition()`` is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_every_method_round_trips(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        info = await sbx.files.write(f"{HOME}/a/b/notes.txt", "héllo")
        assert (info.name, info.type, info.size, info.uid) == ("notes.txt", "file", 6, 1000)
        assert await sbx.files.read(f"{HOME}/a/b/notes.txt") == "héllo"
        assert await sbx.files.read(f"{HOME}/a/b/notes.txt", format="bytes") == "héllo".encode()
        stream = await sbx.files.read(f"{HOME}/a/b/notes.txt", format="stream")
        assert isinstance(stream, AsyncFileStream)
        async with stream:
            assert b"".join([chunk async for chunk in stream]) == "héllo".encode()

        async def chunks() -> AsyncIterator[bytes]:
            for part in (b"as", b"ync"):
                await asyncio.sleep(0)
                yield part

        await sbx.files.write(f"{HOME}/a/async", chunks())
        assert await sbx.files.read(f"{HOME}/a/async") == "async"
        await sbx.files.write(f"{HOME}/a/file", io.BytesIO(b"from a file"))
        assert await sbx.files.read(f"{HOME}/a/file") == "from a file"
        await sbx.files.write(f"{HOME}/a/sync-iter", iter([b"s", b"i"]))
        assert await sbx.files.read(f"{HOME}/a/sync-iter") == "si"

        written = await sbx.files.write_files([WriteEntry(f"{HOME}/m/1", "1"), (f"{HOME}/m/2", chunks())])
        assert [(w.path, w.size) for w in written] == [(f"{HOME}/m/1", 1), (f"{HOME}/m/2", 5)]

        assert sorted(e.name for e in await sbx.files.list(f"{HOME}/a")) == ["async", "b", "file", "sync-iter"]
        assert len(await sbx.files.list(f"{HOME}/a", depth=2)) == 5
        assert await sbx.files.exists(f"{HOME}/a/b") and not await sbx.files.exists(f"{HOME}/nope")
        assert (await sbx.files.get_info(f"{HOME}/a/b")).type == "dir"
        assert await sbx.files.make_dir(f"{HOME}/c/d") is True
        assert await sbx.files.make_dir(f"{HOME}/c/d") is False
        moved = await sbx.files.rename(f"{HOME}/a/file", f"{HOME}/c/d/moved")
        assert (moved.path, moved.size) == (f"{HOME}/c/d/moved", 11)
        await sbx.files.remove(f"{HOME}/a")
        assert not await sbx.files.exists(f"{HOME}/a/b/notes.txt")


async def test_failures_are_typed(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        await sbx.files.write(f"{HOME}/plain", "x")
        cases: list[tuple[Callable[[], Awaitable[object]], str]] = [
            (lambda: sbx.files.read(f"{HOME}/missing"), "file_not_found"),
            (lambda: sbx.files.read(HOME), "is_a_directory"),
            (lambda: sbx.files.read("/etc/shadow"), "permission_denied"),
            (lambda: sbx.files.write("/usr/bin/mine", "x"), "permission_denied"),
            (lambda: sbx.files.list(f"{HOME}/plain"), "not_a_directory"),
            (lambda: sbx.files.watch_dir(f"{HOME}/missing", print), "file_not_found"),
            (lambda: sbx.files.watch_dir(f"{HOME}/plain", print), "not_a_directory"),
        ]
        for action, code in cases:
            with pytest.raises(SandboxException) as raised:
                await action()
            assert raised.value.code == code


async def test_big_and_broken_reads(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        run = sbx.commands.run
        await run(f"truncate -s 1T {HOME}/sparse && truncate -s 256M {HOME}/long")
        # Over 1 GiB: refused before its bytes are read, as text or bytes; a stream reads it.
        for fmt in ("text", "bytes"):
            with pytest.raises(InvalidArgumentException) as raised:
                await sbx.files.read(f"{HOME}/sparse", format=fmt)
            assert (raised.value.field, str(raised.value)) == (
                "format", "files.read: format: the file is over 1 GiB; read it with format 'stream'"
            )
        async with await sbx.files.read(f"{HOME}/sparse", format="stream") as stream:
            assert set(await anext(stream)) == {0}
        # A read whose helper the sandbox's code kills midway: SandboxException, not httpx's error.
        stream = await sbx.files.read(f"{HOME}/long", format="stream")
        await anext(stream)
        pids = (
            "for d in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); "
            f"case \"$c\" in *'sdk files helper'*' read {HOME}/long ') echo ${{d#/proc/}};; esac; done"
        )
        pid = (await run(pids)).stdout.strip()
        assert pid.isdigit(), pid
        await run(f"kill -9 {pid}")
        with pytest.raises(SandboxException) as broke:
            async for _ in stream:
                pass
        assert (broke.value.code, str(broke.value)) == ("sandbox_error", "files.read: the file's bytes broke off")


async def test_bad_arguments_are_refused_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        with monkeypatch.context() as patched:
            patched.setattr(httpx.AsyncClient, "send", refuse)
            cases: list[tuple[Callable[[], Awaitable[object]], str]] = [
                (lambda: sbx.files.read("relative"), "path"),
                (lambda: sbx.files.write("/home/user/a", 5), "data"),  # type: ignore[arg-type]
                (lambda: sbx.files.write("/home/user/a", io.StringIO("text")), "data"),  # type: ignore[arg-type]
                (lambda: sbx.files.write_files([("/home/user/a", "a"), ("b", "b")]), "entries[1].path"),
                (lambda: sbx.files.list("/home/user", depth=0), "depth"),
                (lambda: sbx.files.rename("/a", "b"), "new_path"),
                (
                    lambda: sbx.files.watch_dir("/home/user", print, recursive="yes"),  # type: ignore[arg-type]
                    "recursive",
                ),
            ]
            for action, field in cases:
                with pytest.raises(InvalidArgumentException) as raised:
                    await action()
                assert raised.value.field == field


async def test_a_large_round_trip_is_streamed_with_flat_memory(control_plane: ControlPlane) -> None:
    size, chunk = 64 * 1024 * 1024, 1024 * 1024

    def parts() -> Iterator[bytes]:
        for i in range(size // chunk):
            yield hashlib.sha256(str(i).encode()).digest() * (chunk // 32)

    async def generated() -> AsyncIterator[bytes]:
        for part in parts():
            yield part

    sent = hashlib.sha256()
    for part in parts():
        sent.update(part)
    async with await AsyncSandbox.create(timeout=300, memory_mb=1024) as sbx:
        tracemalloc.start()
        try:
            assert (await sbx.files.write(f"{HOME}/big.bin", generated())).size == size
            received, total = hashlib.sha256(), 0
            async with await sbx.files.read(f"{HOME}/big.bin", format="stream") as stream:
                async for part in stream:
                    received.update(part)
                    total += len(part)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (total, received.hexdigest()) == (size, sent.hexdigest())
        assert peak < 16 * 1024 * 1024, f"peak Python memory {peak} bytes for a {size}-byte round trip"


async def test_watch_dir_with_plain_and_coroutine_callbacks(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as sbx:
        await sbx.files.make_dir(f"{HOME}/w/sub")
        plain: list[FilesystemEvent] = []
        awaited: list[FilesystemEvent] = []

        async def on_event(event: FilesystemEvent) -> None:
            await asyncio.sleep(0)
            awaited.append(event)

        flat = await sbx.files.watch_dir(f"{HOME}/w", plain.append)
        deep = await sbx.files.watch_dir(f"{HOME}/w", on_event, recursive=True)
        assert isinstance(flat, AsyncWatchHandle)
        await sbx.files.write(f"{HOME}/w/top.txt", "x")
        await sbx.files.write(f"{HOME}/w/sub/inner.txt", "x")
        await until(lambda: FilesystemEvent("create", "sub/inner.txt") in awaited)
        await until(lambda: FilesystemEvent("create", "top.txt") in plain)
        await sbx.commands.run(f"echo more >> {HOME}/w/top.txt")
        await until(lambda: FilesystemEvent("write", "top.txt") in plain)
        await sbx.files.remove(f"{HOME}/w/top.txt")
        await until(lambda: FilesystemEvent("remove", "top.txt") in awaited)
        assert FilesystemEvent("create", "sub/inner.txt") not in plain
        await flat.stop()
        count = len(plain)
        await sbx.files.write(f"{HOME}/w/after", "x")
        await until(lambda: FilesystemEvent("create", "after") in awaited)
        assert len(plain) == count
        await deep.stop()


async def test_closing_the_handle_stops_its_watches(control_plane: ControlPlane) -> None:
    sbx = await AsyncSandbox.create(timeout=300)
    try:
        seen: list[FilesystemEvent] = []
        await sbx.files.watch_dir(HOME, seen.append)
        watches = [t for t in asyncio.all_tasks() if t.get_name() == "sdk-files-watch"]
        assert len(watches) == 1
    finally:
        await sbx.close()
        async with await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token):
            pass  # ``async with`` kills it
    assert watches[0].done()
