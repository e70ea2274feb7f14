"""What the sync and the async ``sbx.files`` of the shim share: E2B's file options checked before any
call (the account, ``user``; paths resolved against its home, ``/home/user`` or ``/root``), and the
entries of ``write_files``."""

from __future__ import annotations

import posixpath
from typing import Any, Final, Mapping

from ..._accounts import Account
from ._options import check_user, sandbox_path
from .exceptions import InvalidArgumentException, NotSupportedException

#: How long ``get_new_events`` waits for events still on their way, seconds: it returns once none has
#: come for ``SETTLE_QUIET``, or after ``SETTLE_MOST`` (E2B's envd gathers them on its side instead).
SETTLE_QUIET: Final = 0.15
SETTLE_MOST: Final = 1.0


def file_call(path: object, user: object, call: str) -> tuple[str, Account]:
    """A file call's path, resolved against the home of the account ``user`` names, and that account."""
    account = check_user(user, call)
    return sandbox_path(path, user=account), account


def no_metadata(metadata: object) -> None:
    """E2B's per-file metadata (extended attributes) is not kept here."""
    if metadata:
        raise NotSupportedException("metadata", "files carry no metadata here")


def list_depth(depth: object) -> Any:
    """E2B's ``depth`` (None: 1; less than 1 refused as E2B does); the native SDK checks the rest."""
    if depth is None:
        return 1
    if isinstance(depth, int) and not isinstance(depth, bool) and depth < 1:
        raise InvalidArgumentException("depth should be at least 1")
    return depth


def write_entries(files: object, user: object) -> tuple[list[tuple[str, object]], Account]:
    """``write_files``' entries (E2B's ``WriteEntry`` dicts) as ``(path, data)`` pairs, paths resolved
    against the home of the account ``user`` names; and that account."""
    account = check_user(user, "files.write_files")
    if not isinstance(files, (list, tuple)):
        raise InvalidArgumentException("files.write_files: files: must be a list of WriteEntry")
    pairs: list[tuple[str, object]] = []
    for index, entry in enumerate(files):
        if not isinstance(entry, Mapping) or "path" not in entry or "data" not in entry:
            raise InvalidArgumentException(
                f"files.write_files: files[{index}]: must be a WriteEntry (path and data)"
            )
        pairs.append((sandbox_path(entry["path"], f"files[{index}].path", account), entry["data"]))
    return pairs, account


def event_path(watched: str, name: str) -> str:
    """The absolute path of a watch event's entry."""
    return posixpath.join(watched, name)
