"""``sbx.files`` of the async E2B shim: the operations of :mod:`sdk.compat.e2b.files`, awaited, on the
native :mod:`sdk.async_files`; ``watch_dir`` calls ``on_event`` (plain or coroutine function) with each
event, as E2B's async SDK does."""

from __future__ import annotations

import asyncio
import builtins
import inspect
from typing import IO, Any, Awaitable, Callable, Literal, Union, cast, overload

from ..._files_core import EntryInfo as NativeEntryInfo
from ..._files_core import FilesystemEvent as NativeFilesystemEvent
from ...async_files import AsyncFileStream
from ...async_files import AsyncFiles as NativeAsyncFiles
from ..._files_watch import AsyncWatchHandle as NativeAsyncWatchHandle
from ...errors import SandboxException as NativeSandboxException
from ...errors import SdkException as NativeSdkException
from ..._accounts import Account
from ._files_options import event_path, file_call, list_depth, no_metadata, write_entries
from ._command_ops import broken_by_end, sandbox_gone
from ._command_options import command_timeout
from .exceptions import InvalidArgumentException, SandboxException, TimeoutException, from_native, translated
from .file_types import (
    EntryInfo,
    FilesystemEvent,
    WriteEntry,
    WriteInfo,
    followed,
    native_data,
    to_event,
    to_write_info,
)

#: Whether the sandbox has ended (asked when a watch's stream breaks).
SandboxGone = Callable[[], Awaitable[bool]]
#: ``on_event`` of ``watch_dir``.
EventHandler = Callable[[FilesystemEvent], Union[None, Awaitable[None]]]
#: ``on_exit`` of ``watch_dir``: the error that ended the watch, or None.
ExitHandler = Callable[[Union[Exception, None]], Union[None, Awaitable[None]]]


async def _call(callback: Callable[[Any], object], value: object) -> None:
    returned = callback(value)
    if inspect.isawaitable(returned):
        await returned


class AsyncWatchHandle:
    """A directory watch (E2B's async handle): ``on_event`` gets each event; ``await stop()`` ends it and
    calls ``on_exit(None)``. The watch also ends after its ``timeout`` (``on_exit`` then gets a
    ``TimeoutException``)."""

    def __init__(self, on_exit: ExitHandler | None, gone: SandboxGone | None = None) -> None:
        self._on_exit = on_exit
        self._gone = gone
        self._native: NativeAsyncWatchHandle | None = None
        self._ended = False
        self._timer: asyncio.Task[None] | None = None

    async def _end(self, error: Exception | None) -> None:
        """Calls ``on_exit`` once, however the watch ended."""
        if self._ended:
            return
        self._ended = True
        if self._on_exit is not None:
            try:
                await _call(self._on_exit, error)
            except Exception:  # nowhere to raise it: the watch has ended either way
                pass

    async def _ended_by_itself(self, error: BaseException | None) -> None:
        if isinstance(error, NativeSdkException):
            shim_error = from_native(error, in_sandbox=True)
            # A broken stream whose sandbox has ended: E2B's TimeoutException, as for a command.
            if isinstance(shim_error, SandboxException) and broken_by_end(shim_error):
                if await self._sandbox_gone():
                    shim_error = sandbox_gone(shim_error)
            error = shim_error
        await self._end(error if isinstance(error, Exception) else None)

    async def _sandbox_gone(self) -> bool:
        try:
            return self._gone is not None and await self._gone()
        except Exception:  # the question failed too: keep the first error
            return False

    def _limit(self, seconds: float) -> None:
        async def expire() -> None:
            await asyncio.sleep(seconds)
            await self._stop_native()
            await self._end(TimeoutException("the watch outlived its timeout (timeout=0: none)", "timeout"))

        self._timer = asyncio.get_running_loop().create_task(expire(), name="e2b-watch-timeout")

    async def _stop_native(self) -> None:
        if self._native is not None:
            await self._native.stop()

    async def stop(self) -> None:
        """Stops watching; ``on_exit(None)`` is called."""
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        await self._stop_native()
        await self._end(None)


class AsyncFilesystem:
    """E2B's async ``sbx.files``, as the sandbox user, or as its root with ``user="root"``."""

    def __init__(self, native: NativeAsyncFiles, gone: SandboxGone | None = None) -> None:
        self._native = native
        self._gone = gone

    async def _entry_of(self, native: NativeEntryInfo, account: Account) -> EntryInfo:
        """E2B's entry, a symlink followed to its target (``file_types.followed``) as ``account`` sees it."""
        steps = followed(native)
        try:
            path = next(steps)
            while True:
                try:
                    found: NativeEntryInfo | None = await self._native.get_info(path, user=account)
                except NativeSdkException:  # nothing there (or not visible): the link dangles
                    found = None
                path = steps.send(found)
        except StopIteration as done:
            return cast(EntryInfo, done.value)

    @overload
    async def read(
        self, path: str, format: Literal["text"] = "text", user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False,
    ) -> str: ...

    @overload
    async def read(
        self, path: str, format: Literal["bytes"], user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False,
    ) -> bytearray: ...

    @overload
    async def read(
        self, path: str, format: Literal["stream"], user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False, stream_idle_timeout: float | None = None,
    ) -> AsyncFileStream: ...

    async def read(
        self,
        path: str,
        format: Literal["text", "bytes", "stream"] = "text",
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> str | bytearray | AsyncFileStream:
        """A file as text (default), a ``bytearray``, or an async stream of byte chunks.

        :raises FileNotFoundException: when it does not exist
        """
        resolved, account = file_call(path, user, "files.read")
        with translated(in_sandbox=True):
            if format == "bytes":
                return bytearray(await self._native.read(resolved, format="bytes", user=account))
            if format == "stream":
                return await self._native.read(resolved, format="stream", user=account)
            return await self._native.read(resolved, format=format, user=account)

    async def write(
        self,
        path: str,
        data: str | bytes | IO[str] | IO[bytes],
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        use_octet_stream: bool | None = None,
        metadata: dict[str, str] | None = None,
    ) -> WriteInfo:
        """Writes a file (parents made), streaming a file object rather than holding it whole."""
        resolved, account = file_call(path, user, "files.write")
        no_metadata(metadata)
        with translated(in_sandbox=True):
            return to_write_info(await self._native.write(resolved, native_data(data), user=account))

    async def write_files(
        self,
        files: builtins.list[WriteEntry],
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        use_octet_stream: bool | None = None,
        metadata: dict[str, str] | None = None,
    ) -> builtins.list[WriteInfo]:
        """Writes many files in turn; their info, in order."""
        pairs, account = write_entries(files, user)
        no_metadata(metadata)
        with translated(in_sandbox=True):
            written = await self._native.write_files(
                [(path, native_data(data)) for path, data in pairs], user=account
            )
        return [to_write_info(info) for info in written]

    async def list(
        self, path: str, depth: int | None = 1, user: str | None = None, request_timeout: float | None = None
    ) -> builtins.list[EntryInfo]:
        """A directory's entries, down to ``depth`` levels."""
        resolved, account = file_call(path, user, "files.list")
        with translated(in_sandbox=True):
            listed = await self._native.list(resolved, list_depth(depth), user=account)
        return [await self._entry_of(entry, account) for entry in listed]

    async def exists(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """True when the file or directory exists."""
        resolved, account = file_call(path, user, "files.exists")
        with translated(in_sandbox=True):
            return await self._native.exists(resolved, user=account)

    async def get_info(
        self, path: str, user: str | None = None, request_timeout: float | None = None
    ) -> EntryInfo:
        """A file's or directory's details.

        :raises FileNotFoundException: when it does not exist
        """
        resolved, account = file_call(path, user, "files.get_info")
        with translated(in_sandbox=True):
            native = await self._native.get_info(resolved, user=account)
        return await self._entry_of(native, account)

    async def remove(self, path: str, user: str | None = None, request_timeout: float | None = None) -> None:
        """Removes a file or a directory with its contents (nothing there is not an error, as in E2B)."""
        resolved, account = file_call(path, user, "files.remove")
        try:
            await self._native.remove(resolved, user=account)
        except NativeSandboxException as error:
            if error.code != "file_not_found":
                raise from_native(error, in_sandbox=True) from error

    async def rename(
        self, old_path: str, new_path: str, user: str | None = None, request_timeout: float | None = None
    ) -> EntryInfo:
        """Renames (moves) an entry; its details at the new path."""
        old, account = file_call(old_path, user, "files.rename")
        new, _ = file_call(new_path, account, "files.rename")
        with translated(in_sandbox=True):
            native = await self._native.rename(old, new, user=account)
        return await self._entry_of(native, account)

    async def make_dir(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """Makes a directory and its parents; False when it was there already."""
        resolved, account = file_call(path, user, "files.make_dir")
        with translated(in_sandbox=True):
            return await self._native.make_dir(resolved, user=account)

    async def watch_dir(
        self,
        path: str,
        on_event: EventHandler,
        on_exit: ExitHandler | None = None,
        user: str | None = None,
        request_timeout: float | None = None,
        timeout: float | None = 60,
        recursive: bool = False,
        include_entry: bool = False,
        allow_network_mounts: bool = False,
    ) -> AsyncWatchHandle:
        """Watches a directory: ``on_event`` gets each event (with its entry's details when
        ``include_entry``); the watch ends after ``timeout`` seconds (60; 0 for none) or at ``stop()``.

        :raises FileNotFoundException: when the directory does not exist
        :raises InvalidArgumentException: when ``path`` is not a directory
        """
        resolved, account = file_call(path, user, "files.watch_dir")
        if not callable(on_event) or (on_exit is not None and not callable(on_exit)):
            raise InvalidArgumentException("files.watch_dir: on_event and on_exit must be callable")
        seconds = command_timeout(timeout, "files.watch_dir")
        handle = AsyncWatchHandle(on_exit, self._gone)

        async def arrived(event: NativeFilesystemEvent) -> None:
            entry = None
            if include_entry and event.type not in ("remove", "rename"):
                try:
                    entry = await self.get_info(event_path(resolved, event.name), user=account)
                except SandboxException:
                    entry = None  # gone again since: E2B gives no entry then
            await _call(on_event, to_event(event, entry))

        with translated(in_sandbox=True):
            handle._native = await self._native.watch_dir(
                resolved, arrived, recursive=recursive, on_exit=handle._ended_by_itself, user=account
            )
        if seconds > 0:
            handle._limit(seconds)
        return handle
