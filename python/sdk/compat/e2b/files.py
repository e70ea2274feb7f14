"""``sbx.files`` of the sync E2B shim: E2B's ``read``, ``write``, ``write_files``, ``list``, ``exists``,
``get_info``, ``remove``, ``rename``, ``make_dir`` and ``watch_dir`` (a :class:`WatchHandle` polled with
``get_new_events()``), on the native files of :mod:`sdk.files`, as the sandbox user or (``user="root"``)
its root. Relative paths resolve against the account's home (``/home/user``, ``/root``)."""

from __future__ import annotations

import builtins
import threading
import time
from typing import IO, Callable, Literal, cast, overload

from ..._files_core import EntryInfo as NativeEntryInfo
from ..._files_core import FilesystemEvent as NativeFilesystemEvent
from ...errors import SandboxException as NativeSandboxException
from ...errors import SdkException as NativeSdkException
from ...files import FileStream
from ...files import Files as NativeFiles
from ..._files_watch import WatchHandle as NativeWatchHandle
from ..._accounts import Account
from ._files_options import (
    SETTLE_MOST,
    SETTLE_QUIET,
    event_path,
    file_call,
    list_depth,
    no_metadata,
    write_entries,
)
from ._command_ops import broken_by_end, sandbox_gone
from .exceptions import SandboxException, from_native, translated
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


class WatchHandle:
    """A directory watch (E2B's): ``get_new_events()`` gives the events since the last call; ``stop()``
    ends it."""

    def __init__(self, files: Filesystem, path: str, include_entry: bool, account: Account = "user") -> None:
        self._files = files
        self._path = path
        self._account = account
        self._include_entry = include_entry
        self._changed = threading.Condition()
        self._pending: list[NativeFilesystemEvent] = []
        self._stopped = False
        self._broken: BaseException | None = None
        self._native: NativeWatchHandle | None = None

    def _open(self, native: NativeFiles, recursive: bool) -> WatchHandle:
        self._native = native.watch_dir(
            self._path, self._arrived, recursive=recursive, on_exit=self._exited, user=self._account
        )
        return self

    def _exited(self, error: BaseException | None) -> None:
        """The watch ended by itself: the next ``get_new_events()`` after the last events raises why."""
        with self._changed:
            self._broken = error
            self._changed.notify_all()

    def _arrived(self, event: NativeFilesystemEvent) -> None:
        with self._changed:
            self._pending.append(event)
            self._changed.notify_all()

    def get_new_events(self, request_timeout: float | None = None) -> list[FilesystemEvent]:
        """The events since the last call (or since the watch began), waiting briefly for those still on
        their way from the sandbox.

        :raises SandboxException: once the watch is stopped, or why it ended by itself once its last events
            are read (``TimeoutException`` when its sandbox was killed or ended, as in E2B)
        """
        if self._stopped:
            raise SandboxException("The watcher is already stopped")
        deadline = time.monotonic() + SETTLE_MOST
        with self._changed:
            seen = len(self._pending)
            while time.monotonic() < deadline:
                self._changed.wait(min(SETTLE_QUIET, max(0.0, deadline - time.monotonic())))
                if len(self._pending) == seen:
                    break
                seen = len(self._pending)
            events, self._pending = self._pending, []
            broken = self._broken
        if not events and broken is not None:
            raise self._files._ended_watch(broken)
        return [to_event(event, self._entry(event)) for event in events]

    def _entry(self, event: NativeFilesystemEvent) -> EntryInfo | None:
        if not self._include_entry or event.type in ("remove", "rename"):
            return None
        try:
            return self._files.get_info(event_path(self._path, event.name), user=self._account)
        except SandboxException:
            return None  # gone again since: E2B gives no entry then

    def stop(self, request_timeout: float | None = None) -> None:
        """Stops watching; later ``get_new_events()`` raise."""
        self._stopped = True
        if self._native is not None:
            self._native.stop()


class Filesystem:
    """E2B's ``sbx.files``, as the sandbox user, or as its root with ``user="root"``."""

    def __init__(self, native: NativeFiles, gone: Callable[[], bool] | None = None) -> None:
        self._native = native
        self._gone = gone

    def _ended_watch(self, error: BaseException) -> BaseException:
        """E2B's exception for a watch that ended by itself: ``TimeoutException`` when its stream broke
        because the sandbox is gone (as for a command)."""
        if not isinstance(error, NativeSdkException):
            return error
        shim_error = from_native(error, in_sandbox=True)
        if isinstance(shim_error, SandboxException) and broken_by_end(shim_error) and self._sandbox_gone():
            return sandbox_gone(shim_error)
        return shim_error

    def _sandbox_gone(self) -> bool:
        try:
            return self._gone is not None and self._gone()
        except Exception:  # the question failed too: keep the first error
            return False

    def _entry_of(self, native: NativeEntryInfo, account: Account) -> EntryInfo:
        """E2B's entry, a symlink followed to its target (``file_types.followed``) as ``account`` sees it."""
        steps = followed(native)
        try:
            path = next(steps)
            while True:
                try:
                    found: NativeEntryInfo | None = self._native.get_info(path, user=account)
                except NativeSdkException:  # nothing there (or not visible): the link dangles
                    found = None
                path = steps.send(found)
        except StopIteration as done:
            return cast(EntryInfo, done.value)

    @overload
    def read(
        self, path: str, format: Literal["text"] = "text", user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False,
    ) -> str: ...

    @overload
    def read(
        self, path: str, format: Literal["bytes"], user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False,
    ) -> bytearray: ...

    @overload
    def read(
        self, path: str, format: Literal["stream"], user: str | None = None,
        request_timeout: float | None = None, gzip: bool = False, stream_idle_timeout: float | None = None,
    ) -> FileStream: ...

    def read(
        self,
        path: str,
        format: Literal["text", "bytes", "stream"] = "text",
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> str | bytearray | FileStream:
        """A file as text (default), a ``bytearray``, or a stream of byte chunks (close it or use
        ``with``).

        :raises FileNotFoundException: when it does not exist
        """
        resolved, account = file_call(path, user, "files.read")
        with translated(in_sandbox=True):
            if format == "bytes":
                return bytearray(self._native.read(resolved, format="bytes", user=account))
            if format == "stream":
                return self._native.read(resolved, format="stream", user=account)
            return self._native.read(resolved, format=format, user=account)

    def write(
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
            return to_write_info(self._native.write(resolved, native_data(data), user=account))

    def write_files(
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
            written = self._native.write_files(
                [(path, native_data(data)) for path, data in pairs], user=account
            )
        return [to_write_info(info) for info in written]

    def list(
        self, path: str, depth: int | None = 1, user: str | None = None, request_timeout: float | None = None
    ) -> builtins.list[EntryInfo]:
        """A directory's entries, down to ``depth`` levels."""
        resolved, account = file_call(path, user, "files.list")
        with translated(in_sandbox=True):
            listed = self._native.list(resolved, list_depth(depth), user=account)
        return [self._entry_of(entry, account) for entry in listed]

    def exists(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """True when the file or directory exists."""
        resolved, account = file_call(path, user, "files.exists")
        with translated(in_sandbox=True):
            return self._native.exists(resolved, user=account)

    def get_info(self, path: str, user: str | None = None, request_timeout: float | None = None) -> EntryInfo:
        """A file's or directory's details.

        :raises FileNotFoundException: when it does not exist
        """
        resolved, account = file_call(path, user, "files.get_info")
        with translated(in_sandbox=True):
            native = self._native.get_info(resolved, user=account)
        return self._entry_of(native, account)

    def remove(self, path: str, user: str | None = None, request_timeout: float | None = None) -> None:
        """Removes a file or a directory with its contents (nothing there is not an error, as in E2B)."""
        resolved, account = file_call(path, user, "files.remove")
        try:
            self._native.remove(resolved, user=account)
        except NativeSandboxException as error:
            if error.code != "file_not_found":
                raise from_native(error, in_sandbox=True) from error

    def rename(
        self, old_path: str, new_path: str, user: str | None = None, request_timeout: float | None = None
    ) -> EntryInfo:
        """Renames (moves) an entry; its details at the new path."""
        old, account = file_call(old_path, user, "files.rename")
        new, _ = file_call(new_path, account, "files.rename")
        with translated(in_sandbox=True):
            native = self._native.rename(old, new, user=account)
        return self._entry_of(native, account)

    def make_dir(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """Makes a directory and its parents; False when it was there already."""
        resolved, account = file_call(path, user, "files.make_dir")
        with translated(in_sandbox=True):
            return self._native.make_dir(resolved, user=account)

    def watch_dir(
        self,
        path: str,
        user: str | None = None,
        request_timeout: float | None = None,
        recursive: bool = False,
        include_entry: bool = False,
        allow_network_mounts: bool = False,
    ) -> WatchHandle:
        """Watches a directory; returns once the watch is set up.

        :raises FileNotFoundException: when the directory does not exist
        :raises InvalidArgumentException: when ``path`` is not a directory
        """
        resolved, account = file_call(path, user, "files.watch_dir")
        with translated(in_sandbox=True):
            return WatchHandle(self, resolved, bool(include_entry), account)._open(self._native, recursive)


