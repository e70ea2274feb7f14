"""``sbx.files`` of ``AsyncSandbox``: the same operations as :mod:`sdk.files`, awaited. ``write`` also
takes async iterables of bytes, and a file object is read in a worker thread (never blocking the loop)."""

from __future__ import annotations

import asyncio
import builtins
import inspect
from types import TracebackType
from typing import AsyncIterable, AsyncIterator, Iterable, Literal, overload

import httpx

from ._accounts import Account
from ._files_core import (
    UPLOAD_CHUNK,
    EntryInfo,
    FileData,
    FilesCore,
    WriteEntry,
    as_chunk,
    broken_download,
    check_callback,
    check_data,
    check_entries,
    check_flag,
    check_format,
    check_path,
    check_user,
    too_large_to_read_whole,
)
from ._files_watch import AsyncWatchHandle, EventCallback, ExitCallback, start_async_watch
from ._http import AsyncTransport, adrive
from ._sandbox_core import SandboxCore


class AsyncFileStream:
    """A file's bytes as they arrive (``await read(path, format="stream")``): ``async for`` it for
    chunks; it closes its connection at the end, on :meth:`aclose`, or at the end of ``async with``."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._chunks = response.aiter_bytes()

    def __aiter__(self) -> AsyncFileStream:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await anext(self._chunks)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except httpx.HTTPError:
            await self.aclose()  # raised below, without httpx's error as context
        raise broken_download()

    async def aclose(self) -> None:
        """Closes the connection (the rest of the file is not read)."""
        await self._response.aclose()

    async def __aenter__(self) -> AsyncFileStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()


async def _file_chunks(data: object, call: str) -> AsyncIterator[bytes]:
    read = getattr(data, "read")
    while True:
        # An async file object (``async def read``) is awaited; a blocking one is read in a thread.
        pending = read(UPLOAD_CHUNK) if inspect.iscoroutinefunction(read) else asyncio.to_thread(read, UPLOAD_CHUNK)
        chunk = await pending
        if not chunk:
            return
        yield as_chunk(chunk, call)


async def _iterable_chunks(data: Iterable[object] | AsyncIterable[object], call: str) -> AsyncIterator[bytes]:
    if isinstance(data, AsyncIterable):
        async for chunk in data:
            yield as_chunk(chunk, call)
    else:
        for chunk in data:
            yield as_chunk(chunk, call)


def async_chunks(data: FileData, call: str) -> bytes | AsyncIterator[bytes]:
    """A checked ``write`` body as the async transport sends it: bytes, or chunks read as sent."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if callable(getattr(data, "read", None)):
        return _file_chunks(data, call)
    return _iterable_chunks(data, call)


class AsyncFiles:
    """Files of one sandbox, as its user (or root, ``user="root"``); the operations of
    :class:`sdk.files.Files`, awaited."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        self._files = FilesCore(core)
        self._transport = transport
        #: The tasks following this handle's watches.
        self._watches: set[asyncio.Task[None]] = set()

    @overload
    async def read(self, path: str, format: Literal["text"] = ..., *, user: Account = ...) -> str: ...

    @overload
    async def read(self, path: str, format: Literal["bytes"], *, user: Account = ...) -> bytes: ...

    @overload
    async def read(
        self, path: str, format: Literal["stream"], *, user: Account = ...
    ) -> AsyncFileStream: ...

    async def read(
        self, path: str, format: Literal["text", "bytes", "stream"] = "text", *, user: Account = "user"
    ) -> str | bytes | AsyncFileStream:
        """Reads a file as text (UTF-8, the default), bytes, or an :class:`AsyncFileStream`.

        Example::

            notes = await sbx.files.read("/home/user/notes.txt")
            async with await sbx.files.read("/home/user/data.bin", format="stream") as chunks:
                async for chunk in chunks:
                    sink.write(chunk)

        Text and bytes hold the whole file in memory: a file over 1 GiB is refused before its bytes
        are read; read it as a stream.

        :raises SandboxException: ``file_not_found``, ``is_a_directory``, ``permission_denied``;
            ``sandbox_error`` when the file's bytes broke off midway (a stream raises it as iterated)
        :raises InvalidArgumentException: for a malformed argument (before any call), a path that is
            not a regular file (a FIFO, a device: the daemon refuses it), or text or bytes of a file
            over 1 GiB (``format``)
        """
        checked, fmt = check_path(path, "files.read"), check_format(format)
        account = check_user(user, "files.read")
        call = self._files.read_call(checked, account)
        response = await self._transport.open_stream(call, self._transport.request_timeout)
        stream = AsyncFileStream(response)
        if fmt == "stream":
            return stream
        refused = too_large_to_read_whole(response.headers)
        if refused is not None:
            await stream.aclose()
            raise refused
        async with stream:
            content = b"".join([chunk async for chunk in stream])
        return content.decode("utf-8", errors="replace") if fmt == "text" else content

    async def write(self, path: str, data: FileData, *, user: Account = "user") -> EntryInfo:
        """Writes a file, making its parent directories; ``data`` as :meth:`sdk.files.Files.write`
        takes it, or an async iterable of bytes.

        Example::

            await sbx.files.write("/home/user/notes.txt", "hello")
        """
        checked = check_path(path, "files.write")
        check_data(data, "files.write", allow_async=True)
        account = check_user(user, "files.write")
        op = self._files.write_op(checked, async_chunks(data, "files.write"), account)
        return await adrive(op, self._transport)

    async def write_files(
        self, entries: Iterable[WriteEntry | tuple[str, FileData]], *, user: Account = "user"
    ) -> builtins.list[EntryInfo]:
        """Writes many files in turn (every path checked before the first is written); their info, in
        order."""
        checked = check_entries(entries, allow_async=True)
        account = check_user(user, "files.write_files")
        written: builtins.list[EntryInfo] = []
        for path, data in checked:
            op = self._files.write_op(path, async_chunks(data, "files.write_files"), account)
            written.append(await adrive(op, self._transport))
        return written

    async def list(self, path: str, depth: int = 1, *, user: Account = "user") -> builtins.list[EntryInfo]:
        """The entries of a directory, down to ``depth`` levels (1 to 16)."""
        return await adrive(self._files.list_op(path, depth, user), self._transport)

    async def exists(self, path: str, *, user: Account = "user") -> bool:
        """True when ``path`` names something the user can see (a dangling symlink counts)."""
        return await adrive(self._files.exists_op(path, user), self._transport)

    async def get_info(self, path: str, *, user: Account = "user") -> EntryInfo:
        """What ``path`` names (a symlink as itself, with its target)."""
        return await adrive(self._files.get_info_op(path, user), self._transport)

    async def make_dir(self, path: str, *, user: Account = "user") -> bool:
        """Makes a directory and its parents; False when a directory was there already."""
        return await adrive(self._files.make_dir_op(path, user), self._transport)

    async def remove(self, path: str, *, user: Account = "user") -> None:
        """Removes a file, or a directory with everything in it."""
        await adrive(self._files.remove_op(path, user), self._transport)

    async def rename(self, old_path: str, new_path: str, *, user: Account = "user") -> EntryInfo:
        """Renames (moves) ``old_path`` to ``new_path``; the info of ``new_path``."""
        return await adrive(self._files.rename_op(old_path, new_path, user), self._transport)

    async def watch_dir(
        self,
        path: str,
        on_event: EventCallback,
        *,
        recursive: bool = False,
        on_exit: ExitCallback | None = None,
        user: Account = "user",
    ) -> AsyncWatchHandle:
        """Watches a directory as :meth:`sdk.files.Files.watch_dir` does; ``on_event`` and ``on_exit``
        may be plain or coroutine functions, called on the handle's loop. Returns once the watch is set
        up; ``await handle.stop()`` ends it.

        Example::

            handle = await sbx.files.watch_dir("/home/user", events.append)
            await sbx.files.write("/home/user/new.txt", "x")
            await handle.stop()
        """
        checked = check_path(path, "files.watch_dir")
        check_callback(on_event, "files.watch_dir", "on_event")
        check_flag(recursive, "files.watch_dir", "recursive")
        check_callback(on_exit, "files.watch_dir", "on_exit", optional=True)
        account = check_user(user, "files.watch_dir")
        call = self._files.watch_call(checked, recursive, account)
        return await start_async_watch(self._transport, call, on_event, on_exit, self._watches)

    async def stop_watching(self) -> None:
        """Stops every watch of this handle. The sandbox handle calls this when it closes."""
        tasks = set(self._watches)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
