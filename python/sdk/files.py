"""``sbx.files`` of the sync ``Sandbox``: files of a sandbox read and written as its user (or, with
``user="root"``, as its root), streamed both ways so no whole file need be in memory
(``sdk/files.ts``). Failures are ``SandboxException`` with a stable ``code``: ``file_not_found``,
``not_a_directory``, ``is_a_directory``, ``permission_denied``, ``no_space``; a malformed argument is
``InvalidArgumentException`` before any call."""

from __future__ import annotations

import builtins
import threading
from types import TracebackType
from typing import Iterable, Literal, overload

import httpx

from ._accounts import Account
from ._files_core import (
    EntryInfo,
    FileData,
    FilesCore,
    WriteEntry,
    broken_download,
    check_callback,
    check_data,
    check_entries,
    check_flag,
    check_format,
    check_path,
    check_user,
    sync_chunks,
    too_large_to_read_whole,
)
from ._files_watch import EventCallback, ExitCallback, WatchHandle
from ._http import Transport, drive
from ._sandbox_core import SandboxCore


class FileStream:
    """A file's bytes as they arrive (``read(path, format="stream")``): iterate it for chunks; it closes
    its connection at the end, on :meth:`close`, or at the end of ``with``."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._chunks = response.iter_bytes()

    def __iter__(self) -> FileStream:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            self.close()
            raise
        except httpx.HTTPError:
            self.close()  # raised below, without httpx's error as context
        raise broken_download()

    def close(self) -> None:
        """Closes the connection (the rest of the file is not read)."""
        self._response.close()

    def __enter__(self) -> FileStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class Files:
    """Files of one sandbox, as its user, or as its root with ``user="root"`` on any call (each call
    goes straight to sandboxd through the control plane, which resumes a suspended sandbox with
    auto-resume where the call reaches it). Paths are absolute."""

    def __init__(self, core: SandboxCore, transport: Transport) -> None:
        self._files = FilesCore(core)
        self._transport = transport
        self._watches: set[WatchHandle] = set()
        self._watches_lock = threading.Lock()

    @overload
    def read(self, path: str, format: Literal["text"] = ..., *, user: Account = ...) -> str: ...

    @overload
    def read(self, path: str, format: Literal["bytes"], *, user: Account = ...) -> bytes: ...

    @overload
    def read(self, path: str, format: Literal["stream"], *, user: Account = ...) -> FileStream: ...

    def read(
        self, path: str, format: Literal["text", "bytes", "stream"] = "text", *, user: Account = "user"
    ) -> str | bytes | FileStream:
        """Reads a file as text (UTF-8, the default), bytes, or a :class:`FileStream` of chunks read as
        the caller iterates.

        Example::

            notes = sbx.files.read("/home/user/notes.txt")
            with sbx.files.read("/home/user/data.bin", format="stream") as chunks:
                for chunk in chunks:
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
        response = self._transport.open_stream(call, self._transport.request_timeout)
        stream = FileStream(response)
        if fmt == "stream":
            return stream
        refused = too_large_to_read_whole(response.headers)
        if refused is not None:
            stream.close()
            raise refused
        with stream:
            content = b"".join(stream)
        return content.decode("utf-8", errors="replace") if fmt == "text" else content

    def write(self, path: str, data: FileData, *, user: Account = "user") -> EntryInfo:
        """Writes a file, making its parent directories. ``data`` is text (UTF-8), bytes, a binary file
        object (read from where it stands) or an iterable of bytes, sent as it is read.

        Example::

            sbx.files.write("/home/user/notes.txt", "hello")
            with open("data.bin", "rb") as source:
                sbx.files.write("/home/user/data.bin", source)

        A file that was there is replaced only once all is written (the bytes go to a temporary file
        beside it, renamed over it, with its mode), so a write that fails leaves it as it was; where
        the user may not make files in its directory, it is rewritten in place and emptied on failure.
        Missing parents are made as E2B's envd makes them, owned by the calling account: as the user
        also where the user could not make them (``/path/to`` of ``/path/to/file``: root makes them and
        hands them over), the file itself written as the user; with ``user="root"`` all is root's.

        :returns: the written file's info
        :raises SandboxException: ``is_a_directory``, ``permission_denied``, ``no_space``,
            ``not_a_directory``
        """
        checked = check_path(path, "files.write")
        check_data(data, "files.write")
        account = check_user(user, "files.write")
        return drive(self._files.write_op(checked, sync_chunks(data, "files.write"), account), self._transport)

    def write_files(
        self, entries: Iterable[WriteEntry | tuple[str, FileData]], *, user: Account = "user"
    ) -> builtins.list[EntryInfo]:
        """Writes many files in turn (every path checked before the first is written); their info, in
        order.

        Example::

            sbx.files.write_files([WriteEntry("/home/user/a.txt", "a"), ("/home/user/b.bin", b"b")])
        """
        checked = check_entries(entries)
        account = check_user(user, "files.write_files")
        return [
            drive(self._files.write_op(path, sync_chunks(data, "files.write_files"), account), self._transport)
            for path, data in checked
        ]

    def list(self, path: str, depth: int = 1, *, user: Account = "user") -> builtins.list[EntryInfo]:
        """The entries of a directory, and of its subdirectories down to ``depth`` levels (1 to 16; 1:
        the directory only).

        :raises SandboxException: ``file_not_found``, ``not_a_directory``, ``permission_denied``
        """
        return drive(self._files.list_op(path, depth, user), self._transport)

    def exists(self, path: str, *, user: Account = "user") -> bool:
        """True when ``path`` names something the user can see (a dangling symlink counts)."""
        return drive(self._files.exists_op(path, user), self._transport)

    def get_info(self, path: str, *, user: Account = "user") -> EntryInfo:
        """What ``path`` names (a symlink as itself, with its target).

        :raises SandboxException: ``file_not_found``, ``permission_denied``
        """
        return drive(self._files.get_info_op(path, user), self._transport)

    def make_dir(self, path: str, *, user: Account = "user") -> bool:
        """Makes a directory and its parents (the calling account's, as ``write`` makes them); False when
        a directory was there already."""
        return drive(self._files.make_dir_op(path, user), self._transport)

    def remove(self, path: str, *, user: Account = "user") -> None:
        """Removes a file, or a directory with everything in it."""
        drive(self._files.remove_op(path, user), self._transport)

    def rename(self, old_path: str, new_path: str, *, user: Account = "user") -> EntryInfo:
        """Renames (moves) ``old_path`` to ``new_path``; the info of ``new_path``."""
        return drive(self._files.rename_op(old_path, new_path, user), self._transport)

    def watch_dir(
        self,
        path: str,
        on_event: EventCallback,
        *,
        recursive: bool = False,
        on_exit: ExitCallback | None = None,
        user: Account = "user",
    ) -> WatchHandle:
        """Watches a directory (and its subdirectories with ``recursive=True``): ``on_event`` gets each
        :class:`~sdk.FilesystemEvent` (``create``, ``write``, ``remove``, ``rename``, ``chmod``; its
        ``name`` relative to ``path``), called on the watch's own thread. Returns once the watch is set
        up, so changes made after it are seen. ``on_exit`` is called if the watch ends by itself
        (``None``, or why it broke); ``handle.stop()`` ends it.

        Example::

            handle = sbx.files.watch_dir("/home/user", lambda event: print(event.type, event.name))
            sbx.files.write("/home/user/new.txt", "x")
            handle.stop()

        :raises SandboxException: ``file_not_found``, ``not_a_directory``, ``permission_denied``
        """
        checked = check_path(path, "files.watch_dir")
        check_callback(on_event, "files.watch_dir", "on_event")
        check_flag(recursive, "files.watch_dir", "recursive")
        check_callback(on_exit, "files.watch_dir", "on_exit", optional=True)
        account = check_user(user, "files.watch_dir")
        call = self._files.watch_call(checked, recursive, account)
        handle = WatchHandle(self._transport.request_timeout, call, on_event, on_exit, self._forget)
        with self._watches_lock:
            self._watches.add(handle)
        return handle._start()

    def _forget(self, handle: WatchHandle) -> None:
        with self._watches_lock:
            self._watches.discard(handle)

    def stop_watching(self) -> None:
        """Stops every watch of this handle. The sandbox handle calls this when it closes."""
        with self._watches_lock:
            handles = builtins.list(self._watches)
        for handle in handles:
            handle.stop()
