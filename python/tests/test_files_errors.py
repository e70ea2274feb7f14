"""``sbx.files`` failures of the sync ``Sandbox`` against the real control plane: the typed errors
(missing file, directory read, a root-only file, a file where a directory should be, a FIFO, hostile
paths), arguments refused before any call, an ended sandbox, and what the sandbox's own code can do to
the files API (a file over 1 GiB, a read that breaks off, a listing over 8 MiB, a stopped files helper).
Every test ends the sandboxes it created."""

from __future__ import annotations

import io
import time
from typing import Callable

import pytest

from conftest import ControlPlane
from sdk import InvalidArgumentException, Sandbox, SandboxException

from _files_fixtures import HOME, code_of, folder, run, sbx  # noqa: F401  (fixtures)


# --- typed errors ---------------------------------------------------------------------------------


def test_failures_are_typed_and_never_name_the_path(sbx: Sandbox, folder: str) -> None:
    missing = f"{folder}/secret-name-missing"
    with pytest.raises(SandboxException) as raised:
        sbx.files.read(missing)
    assert raised.value.code == "file_not_found" and "secret-name" not in str(raised.value)
    assert code_of(lambda: sbx.files.get_info(missing)) == "file_not_found"
    assert code_of(lambda: sbx.files.list(missing)) == "file_not_found"
    assert code_of(lambda: sbx.files.remove(missing)) == "file_not_found"
    assert code_of(lambda: sbx.files.rename(missing, f"{folder}/b")) == "file_not_found"
    assert code_of(lambda: sbx.files.read(folder)) == "is_a_directory"
    assert code_of(lambda: sbx.files.write(folder, "x")) == "is_a_directory"
    sbx.files.write(f"{folder}/plain", "x")
    assert code_of(lambda: sbx.files.list(f"{folder}/plain")) == "not_a_directory"
    # The user's permissions, never sandboxd's root.
    assert code_of(lambda: sbx.files.read("/etc/shadow")) == "permission_denied"
    assert code_of(lambda: sbx.files.write("/etc/owned-by-user", "x")) == "permission_denied"
    assert code_of(lambda: sbx.files.remove("/usr/bin/env")) == "permission_denied"
    run(sbx, f"mkdir {folder}/closed; chmod 000 {folder}/closed")
    assert code_of(lambda: sbx.files.list(f"{folder}/closed")) == "permission_denied"
    assert code_of(lambda: sbx.files.read(f"{folder}/closed/x")) == "permission_denied"
    run(sbx, f"chmod 700 {folder}/closed")


def test_hostile_paths_reach_only_what_the_user_may(sbx: Sandbox, folder: str) -> None:
    assert code_of(lambda: sbx.files.read(f"{folder}/../../../etc/shadow")) == "permission_denied"
    run(sbx, f"ln -s /proc/1/environ {folder}/environ; ln -s /etc/shadow {folder}/shadow")
    assert code_of(lambda: sbx.files.read(f"{folder}/environ")) == "permission_denied"
    assert code_of(lambda: sbx.files.read(f"{folder}/shadow")) == "permission_denied"
    assert code_of(lambda: sbx.files.write(f"{folder}/shadow", "x")) == "permission_denied"
    assert sbx.files.get_info(f"{folder}/environ").symlink_target == "/proc/1/environ"
    # Odd but legal names travel intact (the query is encoded).
    odd = f"{folder}/a b&c=d?e#f%20g"
    sbx.files.write(odd, "odd")
    assert (sbx.files.read(odd), sbx.files.get_info(odd).name) == ("odd", "a b&c=d?e#f%20g")


def test_something_not_a_regular_file_is_refused(sbx: Sandbox, folder: str) -> None:
    run(sbx, f"mkfifo {folder}/fifo")
    with pytest.raises(InvalidArgumentException) as raised:
        sbx.files.read(f"{folder}/fifo")
    assert raised.value.code == "invalid_argument"
    with pytest.raises(InvalidArgumentException):
        sbx.files.read("/dev/zero", format="stream")


BAD_CALLS: list[tuple[str, Callable[[Sandbox], object], str]] = [
    ("relative", lambda s: s.files.read("notes.txt"), "path"),
    ("empty", lambda s: s.files.write("", "x"), "path"),
    ("nul", lambda s: s.files.get_info("/home/user/a\0b"), "path"),
    ("too long", lambda s: s.files.exists("/" + "a" * 4096), "path"),
    ("not a string", lambda s: s.files.list(5), "path"),  # type: ignore[arg-type]
    ("depth 0", lambda s: s.files.list("/home/user", depth=0), "depth"),
    ("depth 17", lambda s: s.files.list("/home/user", depth=17), "depth"),
    ("depth bool", lambda s: s.files.list("/home/user", depth=True), "depth"),
    ("format", lambda s: s.files.read("/home/user/a", format="json"), "format"),  # type: ignore[call-overload]
    ("data int", lambda s: s.files.write("/home/user/a", 5), "data"),  # type: ignore[arg-type]
    ("data text file", lambda s: s.files.write("/home/user/a", io.StringIO("x")), "data"),  # type: ignore[arg-type]
    ("data str chunks", lambda s: s.files.write("/home/user/a", ["x"]), "data"),  # type: ignore[list-item]
    ("data mapping", lambda s: s.files.write("/home/user/a", {b"x": 1}), "data"),
    ("make_dir", lambda s: s.files.make_dir("./x"), "path"),
    ("remove", lambda s: s.files.remove("x"), "path"),
    ("rename from", lambda s: s.files.rename("x", "/home/user/y"), "old_path"),
    ("rename to", lambda s: s.files.rename("/home/user/x", "y"), "new_path"),
    ("second entry", lambda s: s.files.write_files([("/home/user/a", "a"), ("b", "b")]), "entries[1].path"),
    ("entry data", lambda s: s.files.write_files([("/home/user/a", 1)]), "entries[0].data"),  # type: ignore[list-item]
    ("entry shape", lambda s: s.files.write_files(["/home/user/a"]), "entries[0]"),  # type: ignore[list-item]
    ("entries", lambda s: s.files.write_files(None), "entries"),  # type: ignore[arg-type]
    ("watch path", lambda s: s.files.watch_dir("home", print), "path"),
    ("on_event", lambda s: s.files.watch_dir("/home/user", None), "on_event"),  # type: ignore[arg-type]
    ("recursive", lambda s: s.files.watch_dir("/home/user", print, recursive=1), "recursive"),  # type: ignore[arg-type]
    ("on_exit", lambda s: s.files.watch_dir("/home/user", print, on_exit=3), "on_exit"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("action,field", [(a, f) for _, a, f in BAD_CALLS], ids=[n for n, _, _ in BAD_CALLS])
def test_bad_arguments_are_refused_before_any_call(
    sbx: Sandbox, no_traffic: None, action: Callable[[Sandbox], object], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as raised:
        action(sbx)
    assert raised.value.field == field and raised.value.code == "invalid_argument"
    assert str(raised.value).startswith("files.") and "user" not in str(raised.value)


def test_an_ended_sandbox_refuses_files_calls_before_any_call(control_plane: ControlPlane) -> None:
    sandbox = Sandbox.create(timeout=120)
    try:
        sandbox.kill()
        with pytest.raises(SandboxException) as raised:
            sandbox.files.read("/home/user/a")
        assert raised.value.code == "sandbox_ended"
        assert code_of(lambda: sandbox.files.write("/home/user/a", "x")) == "sandbox_ended"
        assert code_of(lambda: sandbox.files.list("/home/user")) == "sandbox_ended"
    finally:
        sandbox.close()


# --- what the sandbox's own code can do to the files API ----------------------------------------------


def helper_pids(sbx: Sandbox, tail: str) -> str:
    """Pids of the sandbox user's files helpers whose command line ends with ``tail``, found in /proc as
    the sandbox user's code would (root's helper, which makes missing parent folders, is not one)."""
    script = (
        "for d in /proc/[0-9]*; do [ -O $d ] || continue; c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); "
        f"case \"$c\" in *'sdk files helper'*'{tail} ') echo ${{d#/proc/}};; esac; done"
    )
    return run(sbx, script).strip()


def test_a_file_over_1_gib_is_read_only_as_a_stream(sbx: Sandbox, folder: str) -> None:
    run(sbx, f"truncate -s 1T {folder}/sparse")  # costs the sandbox nothing
    for fmt in ("text", "bytes"):
        with pytest.raises(InvalidArgumentException) as raised:
            sbx.files.read(f"{folder}/sparse", format=fmt)
        assert (raised.value.field, str(raised.value)) == (
            "format", "files.read: format: the file is over 1 GiB; read it with format 'stream'"
        )
    with sbx.files.read(f"{folder}/sparse", format="stream") as stream:
        assert set(next(stream)) == {0}


def test_a_read_whose_bytes_break_off_raises_sandbox_exception(sbx: Sandbox, folder: str) -> None:
    run(sbx, f"truncate -s 256M {folder}/long")
    stream = sbx.files.read(f"{folder}/long", format="stream")
    next(stream)
    pid = helper_pids(sbx, f" read {folder}/long")
    assert pid.isdigit(), pid
    run(sbx, f"kill -9 {pid}")
    with pytest.raises(SandboxException) as raised:
        for _ in stream:
            pass
    assert (raised.value.code, str(raised.value)) == ("sandbox_error", "files.read: the file's bytes broke off")


def test_a_listing_over_8_mib_is_refused(sbx: Sandbox, folder: str) -> None:
    run(sbx, f"cd {folder} && seq -f '{'n' * 200}%05g' 1 20000 | xargs touch")
    with pytest.raises(InvalidArgumentException) as raised:
        sbx.files.list(folder)
    assert str(raised.value) == "files.list: the listing is over 8 MiB; list a smaller depth or directory"
    assert len(sbx.files.list(HOME)) > 0


def test_a_files_helper_the_user_stopped_is_killed_and_replaced(sbx: Sandbox, folder: str) -> None:
    sbx.files.get_info(folder)
    pid = helper_pids(sbx, " serve")
    assert pid.isdigit(), pid
    run(sbx, f"kill -STOP {pid}")
    started = time.monotonic()
    with pytest.raises(SandboxException) as raised:
        sbx.files.get_info(folder)
    assert (raised.value.code, str(raised.value)) == ("sandbox_error", "the files helper did not answer")
    assert time.monotonic() - started < 25
    assert sbx.files.get_info(folder).type == "dir"
    assert helper_pids(sbx, " serve") not in ("", pid)
