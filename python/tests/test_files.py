"""``sbx.files`` reads and writes of the sync ``Sandbox`` against the real control plane: text, bytes and
streams, file objects and iterables, uploads that break off, many files in one call, a 64 MiB round trip
streamed both ways with Python's memory flat, a 1 GiB one in another process, and a files call resuming a
paused sandbox. Every test ends the sandboxes it created."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import time
import tracemalloc
from typing import Any, Iterator

import pytest

from conftest import ControlPlane
from sdk import EntryInfo, FileStream, InvalidArgumentException, Sandbox, WriteEntry

from _files_fixtures import HOME, folder, run, sbx  # noqa: F401  (fixtures)


# --- read and write -------------------------------------------------------------------------------


def test_write_then_read_as_text_bytes_and_stream(sbx: Sandbox, folder: str) -> None:
    info = sbx.files.write(f"{folder}/deep/er/notes.txt", "héllo\nworld")
    assert isinstance(info, EntryInfo)
    assert (info.name, info.path, info.type, info.size) == ("notes.txt", f"{folder}/deep/er/notes.txt", "file", 12)
    assert (info.uid, info.gid, info.symlink_target) == (1000, 1000, None)
    assert info.mode & 0o600 == 0o600 and info.modified_time.endswith("Z")
    assert sbx.files.read(f"{folder}/deep/er/notes.txt") == "héllo\nworld"
    assert run(sbx, f"cat {folder}/deep/er/notes.txt; stat -c %U {folder}/deep") == "héllo\nworlduser\n"

    raw = bytes(range(256)) * 3
    sbx.files.write(f"{folder}/raw.bin", raw)
    assert sbx.files.read(f"{folder}/raw.bin", format="bytes") == raw
    with sbx.files.read(f"{folder}/raw.bin", format="stream") as stream:
        assert isinstance(stream, FileStream)
        assert b"".join(stream) == raw
    # Text that is not UTF-8 is read with replacement characters, as TypeScript's decoder does.
    assert sbx.files.read(f"{folder}/raw.bin")[:3] == "\x00\x01\x02"


def test_write_takes_files_iterables_and_overwrites(sbx: Sandbox, folder: str) -> None:
    source = io.BytesIO(b"skip:from a file object")
    source.read(5)  # read from where the file stands
    assert sbx.files.write(f"{folder}/a", source).size == 18
    assert sbx.files.read(f"{folder}/a") == "from a file object"

    def generated() -> Iterator[bytes | bytearray | memoryview]:
        yield b"one,"
        yield bytearray(b"two,")
        yield memoryview(b"three")

    sbx.files.write(f"{folder}/a", generated())
    assert sbx.files.read(f"{folder}/a") == "one,two,three"
    sbx.files.write(f"{folder}/a", [b"x", b"y"])
    assert sbx.files.read(f"{folder}/a") == "xy"
    assert sbx.files.write(f"{folder}/empty", b"").size == 0
    assert sbx.files.read(f"{folder}/empty") == ""


def test_a_chunk_that_is_not_bytes_stops_the_upload(sbx: Sandbox, folder: str) -> None:
    def mixed() -> Iterator[Any]:
        yield b"first"
        yield "not bytes"

    with pytest.raises(InvalidArgumentException) as raised:
        sbx.files.write(f"{folder}/half", mixed())
    assert (raised.value.field, str(raised.value)) == ("data", "files.write: data: every chunk must be bytes")
    # A file that failed partway is not left behind (sandboxd removes it once it sees the upload end).
    deadline = time.monotonic() + 10
    while sbx.files.exists(f"{folder}/half"):
        assert time.monotonic() < deadline, "the partial file stayed"
        time.sleep(0.1)
    assert sbx.files.write(f"{folder}/whole", "ok").size == 2  # the handle goes on working


def test_an_upload_that_breaks_off_leaves_the_old_file_and_a_rewrite_keeps_the_mode(sbx: Sandbox, folder: str) -> None:
    sbx.files.write(f"{folder}/kept", "old content")

    def breaking() -> Iterator[Any]:
        yield b"n" * (1024 * 1024)
        yield "not bytes"

    with pytest.raises(InvalidArgumentException):
        sbx.files.write(f"{folder}/kept", breaking())
    # The new bytes went to a temporary file beside it, removed once sandboxd saw the upload end.
    deadline = time.monotonic() + 10
    while run(sbx, f"ls -A {folder}") != "kept\n":
        assert time.monotonic() < deadline, "the temporary file stayed"
        time.sleep(0.1)
    assert sbx.files.read(f"{folder}/kept") == "old content"

    sbx.files.write(f"{folder}/tool.sh", "#!/bin/sh\necho one\n")
    run(sbx, f"chmod 0750 {folder}/tool.sh")
    assert sbx.files.write(f"{folder}/tool.sh", "#!/bin/sh\necho two\n").mode == 0o750
    assert run(sbx, f"{folder}/tool.sh; stat -c %a {folder}/tool.sh") == "two\n750\n"


def test_a_stream_closed_early_leaves_the_handle_usable(sbx: Sandbox, folder: str) -> None:
    sbx.files.write(f"{folder}/big", b"z" * (4 * 1024 * 1024))
    stream = sbx.files.read(f"{folder}/big", format="stream")
    assert next(stream)[:1] == b"z"
    stream.close()
    assert sbx.files.read(f"{folder}/big", format="bytes") == b"z" * (4 * 1024 * 1024)


def test_write_files_writes_many_in_order(sbx: Sandbox, folder: str) -> None:
    written = sbx.files.write_files(
        [
            WriteEntry(f"{folder}/one.txt", "1"),
            (f"{folder}/sub/two.bin", b"22"),
            WriteEntry(f"{folder}/three", io.BytesIO(b"333")),
        ]
    )
    assert [(w.name, w.size) for w in written] == [("one.txt", 1), ("two.bin", 2), ("three", 3)]
    assert run(sbx, f"cat {folder}/one.txt {folder}/sub/two.bin {folder}/three") == "122333"
    assert sbx.files.write_files([]) == []


def test_a_large_round_trip_is_streamed_with_flat_memory(sbx: Sandbox, folder: str) -> None:
    size, chunk = 64 * 1024 * 1024, 1024 * 1024

    def generated() -> Iterator[bytes]:
        for i in range(size // chunk):
            yield hashlib.sha256(str(i).encode()).digest() * (chunk // 32)

    sent = hashlib.sha256()
    for part in generated():
        sent.update(part)
    tracemalloc.start()
    try:
        assert sbx.files.write(f"{folder}/big.bin", generated()).size == size
        received = hashlib.sha256()
        total = 0
        with sbx.files.read(f"{folder}/big.bin", format="stream") as stream:
            for part in stream:
                received.update(part)
                total += len(part)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (total, received.hexdigest()) == (size, sent.hexdigest())
    assert run(sbx, f"sha256sum {folder}/big.bin").split()[0] == sent.hexdigest()
    assert peak < 16 * 1024 * 1024, f"peak Python memory {peak} bytes for a {size}-byte round trip"


GIB_ROUND_TRIP = """
import hashlib, resource, sys
from sdk import Sandbox

sandbox_id, url, token, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sbx = Sandbox.connect(sandbox_id, access_token=token, control_plane_url=url)
chunk = 1024 * 1024
sent = hashlib.sha256()

def generated():
    for i in range(size // chunk):
        part = hashlib.sha256(str(i).encode()).digest() * (chunk // 32)
        sent.update(part)
        yield part

written = sbx.files.write("/home/user/big.bin", generated()).size
received, total = hashlib.sha256(), 0
with sbx.files.read("/home/user/big.bin", format="stream") as stream:
    for part in stream:
        received.update(part)
        total += len(part)
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(written, total, sent.hexdigest(), received.hexdigest(), peak_kib)
"""


def test_a_gib_round_trip_keeps_the_sdk_process_memory_flat(control_plane: ControlPlane) -> None:
    # The whole process's peak (httpx and h11 buffers included), not only Python's objects: another
    # process, so this session's own memory is not counted. /home holds half the sandbox's memory.
    size = 1024**3
    with Sandbox.create(template="sdk-base", timeout=600, memory_mb=3072) as big:
        ran = subprocess.run(
            [sys.executable, "-c", GIB_ROUND_TRIP, big.sandbox_id, control_plane.url, big.access_token, str(size)],
            capture_output=True, text=True, timeout=280, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-2000:]
        written, total, sent, received, peak_kib = ran.stdout.split()
        assert (int(written), int(total), received) == (size, size, sent)
        assert run(big, "sha256sum /home/user/big.bin").split()[0] == sent
        assert int(peak_kib) * 1024 < 256 * 1024 * 1024, f"peak RSS {int(peak_kib) // 1024} MiB for 1 GiB"


def test_a_files_call_resumes_a_paused_sandbox(control_plane: ControlPlane) -> None:
    with Sandbox.create(timeout=120) as sandbox:
        sandbox.files.write(f"{HOME}/kept.txt", "kept")
        sandbox.pause()
        assert sandbox.get_info().state == "suspended"
        assert sandbox.files.read(f"{HOME}/kept.txt") == "kept"  # resumed by the control plane on the way
        assert sandbox.get_info().state == "running"
