"""What ``sbx.files`` of the sync and the async handle share (``sdk/files.ts``, the wire of
``protocol/files-wire.ts``): the checks every argument passes before any call, the value types, the
calls as :class:`~sdk._http.Call` values, and the JSON operations written once as generators that
:func:`~sdk._http.drive` or :func:`~sdk._http.adrive` run. Only the streamed bodies (read, write, watch)
differ between the drivers, so they live in ``files.py`` and ``async_files.py``.

Messages name the call and the argument, never a path or a byte of a file.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO, Any, AsyncIterable, Callable, Iterable, Iterator, Literal, Mapping, TypeVar, Union, cast
from urllib.parse import quote

from pydantic import Field

from ._accounts import Account, account_field, account_query, check_account
from ._http import Call, Op, model_parser
from ._sandbox_core import SandboxCore
from ._wire import _Wire
from .errors import InvalidArgumentException, SandboxException

T = TypeVar("T")

#: Longest path accepted (Linux's ``PATH_MAX``), as ``MAX_FILE_PATH`` in TypeScript.
MAX_FILE_PATH = 4096
#: Deepest ``list`` accepted.
MAX_LIST_DEPTH = 16
#: Largest file read whole (format "text" or "bytes"), as ``MAX_WHOLE_READ_BYTES`` in TypeScript: a
#: file's size costs the sandbox nothing (``truncate -s 1T``), so a larger one is read as a stream.
MAX_WHOLE_READ_BYTES = 1024 * 1024 * 1024
#: Base of the files API's endpoints.
FILES_PATH = "/v1/files"
#: Size of the chunks a file object is read in for an upload.
UPLOAD_CHUNK = 256 * 1024

#: What an entry is.
EntryType = Literal["file", "dir", "symlink", "other"]
#: What happened to a watched entry.
FilesystemEventType = Literal["create", "write", "remove", "rename", "chmod"]
#: ``read``'s formats.
ReadFormat = Literal["text", "bytes", "stream"]
#: One chunk of a ``write`` body.
Chunk = Union[bytes, bytearray, memoryview]
#: What ``write`` takes: text (UTF-8), bytes, a binary file object, or chunks of bytes (the async handle
#: also takes async iterables), streamed as they are read.
FileData = Union[str, Chunk, IO[bytes], Iterable[Chunk], AsyncIterable[Chunk]]


@dataclass(frozen=True)
class EntryInfo:
    """One file, directory or symlink of a sandbox, as its user sees it."""

    name: str
    #: Absolute path.
    path: str
    type: EntryType
    #: Bytes.
    size: int
    #: Permission bits with setuid/setgid/sticky (``0o7777`` of ``st_mode``).
    mode: int
    uid: int
    gid: int
    #: ISO 8601.
    modified_time: str
    #: Where a symlink points (``None`` for anything else).
    symlink_target: str | None = None


@dataclass(frozen=True)
class FilesystemEvent:
    """One change under a watched directory; ``name`` is relative to that directory."""

    type: FilesystemEventType
    name: str


@dataclass(frozen=True)
class WriteEntry:
    """One file of ``write_files``: its path and its data (anything ``write`` takes)."""

    path: str
    data: FileData


# --- the wire ------------------------------------------------------------------------------------


class _EntryWire(_Wire):
    name: str
    path: str
    type: EntryType
    size: int = Field(ge=0)
    mode: int = Field(ge=0)
    uid: int
    gid: int
    modified_time: str
    symlink_target: str | None = None

    def entry(self) -> EntryInfo:
        return EntryInfo(
            self.name, self.path, self.type, self.size, self.mode, self.uid, self.gid,
            self.modified_time, self.symlink_target,
        )


class _ListWire(_Wire):
    entries: list[_EntryWire]


class _MadeDirWire(_Wire):
    created: bool


class _EmptyWire(_Wire):
    pass


class _WatchLineWire(_Wire):
    type: Literal["watching", "create", "write", "remove", "rename", "chmod"]
    name: str | None = None


_ENTRY = model_parser(_EntryWire)
_LIST = model_parser(_ListWire)
_MADE_DIR = model_parser(_MadeDirWire)
_EMPTY = model_parser(_EmptyWire)
#: The codes that say nothing is at a path.
_ABSENT = frozenset({"file_not_found", "not_a_directory"})


def _unparsed(payload: object) -> object:
    return payload


def parse_entry(payload: object) -> EntryInfo:
    """An ``EntryInfo`` answer."""
    return _ENTRY(payload).entry()


def parse_watch_line(payload: object) -> FilesystemEvent | None:
    """One line of ``GET /v1/files/watch``: an event, or ``None`` for ``{"type": "watching"}``."""
    line = _WatchLineWire.model_validate(payload, strict=True)
    if line.type == "watching":
        return None
    if line.name is None:
        raise ValueError("an event without its name")
    return FilesystemEvent(line.type, line.name)


# --- checks before any call ----------------------------------------------------------------------


def check_path(path: object, call: str, field: str = "path") -> str:
    """A path argument: absolute, without NUL, at most ``MAX_FILE_PATH`` characters."""
    if not isinstance(path, str):
        problem = "must be a string"
    elif path == "":
        problem = "must not be empty"
    elif not path.startswith("/"):
        problem = "must be an absolute path"
    elif "\0" in path:
        problem = "must not contain NUL"
    elif len(path) > MAX_FILE_PATH:
        problem = f"must be at most {MAX_FILE_PATH} characters"
    else:
        return path
    raise InvalidArgumentException(f"{call}: {field}: {problem}", field)


def check_depth(depth: object) -> int:
    """``list``'s depth: a whole number from 1 to ``MAX_LIST_DEPTH``."""
    if not isinstance(depth, int) or isinstance(depth, bool):
        problem = "must be an integer"
    elif depth < 1:
        problem = "must be 1 or more"
    elif depth > MAX_LIST_DEPTH:
        problem = f"must be at most {MAX_LIST_DEPTH}"
    else:
        return depth
    raise InvalidArgumentException(f"files.list: depth: {problem}", "depth")


def check_format(fmt: object) -> ReadFormat:
    """``read``'s format."""
    if fmt == "text" or fmt == "bytes" or fmt == "stream":
        return cast(ReadFormat, fmt)
    raise InvalidArgumentException("files.read: format: must be 'text', 'bytes' or 'stream'", "format")


def check_flag(value: object, call: str, field: str) -> bool:
    """A bool argument."""
    if not isinstance(value, bool):
        raise InvalidArgumentException(f"{call}: {field}: must be a bool", field)
    return value


def check_callback(value: object, call: str, field: str, optional: bool = False) -> None:
    """A callback argument."""
    if not callable(value) and not (optional and value is None):
        raise InvalidArgumentException(f"{call}: {field}: must be callable", field)


def _data_problem(data: object, allow_async: bool) -> str | None:
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        return None
    if isinstance(data, io.TextIOBase):
        return "must be a binary file, not a text file (open it with 'rb')"
    if isinstance(data, Mapping):
        return "must be str, bytes, a binary file or an iterable of bytes, not a mapping"
    if isinstance(data, (list, tuple)):  # chunks at hand are checked now, before any call
        ok = all(isinstance(chunk, (bytes, bytearray, memoryview)) for chunk in data)
        return None if ok else "every chunk must be bytes"
    if hasattr(data, "read") or isinstance(data, Iterable):
        return None
    if allow_async and isinstance(data, AsyncIterable):
        return None
    return f"must be str, bytes, a binary file or an iterable of bytes{' (or an async one)' if allow_async else ''}"


def check_data(data: object, call: str, field: str = "data", allow_async: bool = False) -> None:
    """A ``write`` body: what ``FileData`` says (chunks are checked as they are read)."""
    problem = _data_problem(data, allow_async)
    if problem is not None:
        raise InvalidArgumentException(f"{call}: {field}: {problem}", field)


def check_entries(entries: object, allow_async: bool = False) -> list[tuple[str, FileData]]:
    """``write_files``'s entries, every one checked before the first is written."""
    call = "files.write_files"
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        raise InvalidArgumentException(f"{call}: entries: must be a list of WriteEntry or (path, data)", "entries")
    checked: list[tuple[str, FileData]] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, WriteEntry):
            path, data = entry.path, entry.data
        elif isinstance(entry, tuple) and len(entry) == 2:
            path, data = entry
        else:
            field = f"entries[{i}]"
            raise InvalidArgumentException(f"{call}: {field}: must be a WriteEntry or a (path, data) pair", field)
        checked.append((check_path(path, call, f"entries[{i}].path"), data))
        check_data(data, call, f"entries[{i}].data", allow_async)
    return checked


def as_chunk(value: object, call: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise InvalidArgumentException(f"{call}: data: every chunk must be bytes", "data")


def sync_chunks(data: FileData, call: str) -> bytes | Iterator[bytes]:
    """A checked ``write`` body as what the sync transport sends: bytes, or chunks read as sent."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    reader = getattr(data, "read", None)
    if callable(reader):
        return _read_chunks(reader, call)
    if isinstance(data, Iterable):
        return (as_chunk(chunk, call) for chunk in data)
    raise InvalidArgumentException(f"{call}: data: an async iterable needs the async sandbox", "data")


def _read_chunks(read: Callable[[int], object], call: str) -> Iterator[bytes]:
    while chunk := read(UPLOAD_CHUNK):
        yield as_chunk(chunk, call)


# --- the calls -----------------------------------------------------------------------------------


def _query(path: str, account: Account) -> str:
    return f"?path={quote(path, safe='')}{account_query(account)}"


def check_user(user: object, call: str) -> Account:
    """A files call's ``user``: ``"user"`` (the sandbox user, the default) or ``"root"``."""
    return check_account(user, call)


class FilesCore:
    """The files calls of one sandbox handle, for ``Files`` and ``AsyncFiles``."""

    def __init__(self, core: SandboxCore) -> None:
        self.core = core

    def _call(self, method: str, path: str, parse: Callable[[Any], T], body: object = None) -> Call[T]:
        return Call(self.core._daemon, method, path, parse, self.core.access_token, body)

    def read_call(self, path: str, account: Account = "user") -> Call[object]:
        """``GET /v1/files/content``: the file's bytes, streamed (the answer is read raw, never parsed)."""
        return self._call("GET", f"{FILES_PATH}/content{_query(path, account)}", _unparsed)

    def write_call(
        self, path: str, body: bytes | Iterable[bytes] | AsyncIterable[bytes], account: Account = "user"
    ) -> Call[EntryInfo]:
        """``PUT /v1/files/content``: ``body`` into the file (parents made, the calling account's); the
        written file's info."""
        path = f"{FILES_PATH}/content{_query(path, account)}"
        return Call(self.core._daemon, "PUT", path, parse_entry, self.core.access_token, content=body)

    def watch_call(self, path: str, recursive: bool, account: Account = "user") -> Call[FilesystemEvent | None]:
        """``GET /v1/files/watch``: ``watching``, then one line per event, until closed."""
        flag = "true" if recursive else "false"
        return Call(
            self.core._daemon, "GET", f"{FILES_PATH}/watch{_query(path, account)}&recursive={flag}",
            parse_watch_line, self.core.access_token,
            malformed="malformed line in the watch stream of the sandbox daemon",
        )

    def write_op(
        self, path: str, body: bytes | Iterable[bytes] | AsyncIterable[bytes], account: Account = "user"
    ) -> Op[EntryInfo]:
        """Writes ``body`` (checked, in the driver's form) into ``path``."""
        answer: EntryInfo = yield from self.core.daemon_op(self.write_call(path, body, account))
        return answer

    def get_info_op(self, path: str, user: object = "user", call: str = "files.get_info") -> Op[EntryInfo]:
        """What ``path`` names (a symlink as itself)."""
        checked, account = check_path(path, call), check_user(user, call)
        return self.core.daemon_op(
            self._call("GET", f"{FILES_PATH}/info{_query(checked, account)}", parse_entry)
        )

    def exists_op(self, path: str, user: object = "user") -> Op[bool]:
        """True when ``path`` names something (a dangling symlink counts); False when nothing is there
        (``file_not_found``, or a parent that is a file: ``not_a_directory``). As E2B's ``exists`` does,
        any other failure raises: a parent the user may not search is ``permission_denied``."""
        try:
            yield from self.get_info_op(path, user, "files.exists")
        except SandboxException as error:
            if error.code in _ABSENT:
                return False
            raise
        return True

    def list_op(self, path: str, depth: object, user: object = "user") -> Op[list[EntryInfo]]:
        """A directory's entries, down to ``depth`` levels."""
        checked, levels = check_path(path, "files.list"), check_depth(depth)
        account = check_user(user, "files.list")
        call = self._call("GET", f"{FILES_PATH}/list{_query(checked, account)}&depth={levels}", _LIST)
        answer: _ListWire = yield from self.core.daemon_op(call)
        return [entry.entry() for entry in answer.entries]

    def make_dir_op(self, path: str, user: object = "user") -> Op[bool]:
        """Makes a directory and its parents (the calling account's); False when one was there already."""
        checked, account = check_path(path, "files.make_dir"), check_user(user, "files.make_dir")
        answer: _MadeDirWire = yield from self.core.daemon_op(
            self._call("POST", f"{FILES_PATH}/dir", _MADE_DIR, {"path": checked, **account_field(account)})
        )
        return answer.created

    def remove_op(self, path: str, user: object = "user") -> Op[None]:
        """Removes a file, or a directory with everything in it."""
        checked, account = check_path(path, "files.remove"), check_user(user, "files.remove")
        body = {"path": checked, **account_field(account)}
        yield from self.core.daemon_op(self._call("POST", f"{FILES_PATH}/remove", _EMPTY, body))

    def rename_op(self, old_path: str, new_path: str, user: object = "user") -> Op[EntryInfo]:
        """Renames (moves) ``old_path`` to ``new_path``; the info of ``new_path``."""
        body = {
            "from": check_path(old_path, "files.rename", "old_path"),
            "to": check_path(new_path, "files.rename", "new_path"),
            **account_field(check_user(user, "files.rename")),
        }
        answer: EntryInfo = yield from self.core.daemon_op(
            self._call("POST", f"{FILES_PATH}/rename", parse_entry, body)
        )
        return answer


def broken_download() -> SandboxException:
    """A download whose body broke off (the file failed to read midway, or the sandbox went away)."""
    return SandboxException("files.read: the file's bytes broke off")


def too_large_to_read_whole(headers: Mapping[str, str]) -> InvalidArgumentException | None:
    """Why a read as text or bytes is refused before its body is read: the file's length (the answer's
    ``content-length``) is over ``MAX_WHOLE_READ_BYTES``, or unknown. None when it may be read whole."""
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) <= MAX_WHOLE_READ_BYTES:
        return None
    return InvalidArgumentException("files.read: format: the file is over 1 GiB; read it with format 'stream'", "format")
