"""Home persistence (SPEC "Persistence and pools", ``sbx.checkpoint_files()``; ``sdk/home-persistence.ts``):
the sandbox user's home streamed between sandboxd's home archive (``sdk._archive_http``) and
``s3://<bucket>/<prefix>/<name>/home.tar.gz`` (``sdk._s3_home_store``). Neither side holds the whole
archive: the SDK holds one multipart part, sandboxd only tar's pipe buffers.

Written once as operations (generators) that yield calls (``sdk._http.Call``), blocking AWS work
(:class:`Blocking`) and archive steps (:class:`ReadArchive`, :class:`PutArchive`); :func:`drive_home` runs
them with sync I/O, :func:`adrive_home` with async I/O and AWS work in a worker thread.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any, AsyncIterator, Callable, Generator, Iterator, TypeVar, Union, cast

from ._archive_http import ArchiveClient, AsyncArchiveClient, archive_failure
from ._http import AsyncTransport, Call, Transport
from ._s3_home_store import PART_BYTES, S3HomeStore
from ._sandbox_core import SandboxCore
from .errors import InvalidArgumentException, SandboxException, SdkException
from .s3_prefix import S3Prefix

R = TypeVar("R")


@dataclass(frozen=True)
class Blocking:
    """Blocking work (boto3) for the driver: run in the caller's thread, or a worker thread."""

    work: Callable[[], Any]


@dataclass(frozen=True)
class ReadArchive:
    """The next bytes of sandboxd's home archive (the download opens at the first), ``b""`` at its end."""


@dataclass(frozen=True)
class ArchiveTrailers:
    """The archive's trailers, once its body has ended (None when there were none)."""


@dataclass(frozen=True)
class PutArchive:
    """``PUT /v1/home/archive`` with ``chunks`` (a blocking iterator) as the body."""

    chunks: Iterator[bytes]


#: An operation of home persistence.
HomeOp = Generator[Union[Call[Any], Blocking, ReadArchive, ArchiveTrailers, PutArchive], Any, R]


@dataclass(frozen=True)
class HomePersistence:
    """Where one sandbox's home is saved, and the role that may reach it."""

    location: S3Prefix
    execution_role_arn: str


def session_name(sandbox_id: str) -> str:
    """The role session's name: which sandbox used the role."""
    return f"sdk-home-{sandbox_id}"


def save_op(home: HomePersistence, core: SandboxCore) -> HomeOp[None]:
    """Saves the home: the archive fed into a multipart upload that completes only when the archive
    ended with tar's exit status 0; on any failure the upload is aborted and the object saved before
    stays as it was.

    :raises SandboxException: when the role, the bucket or tar failed
    """
    core.refuse_when_ended()  # nothing at all, not even the role, once the handle knows it ended
    # The role first: a denied one fails before tar reads a byte.
    opening = partial(S3HomeStore.open, home.location, home.execution_role_arn, session_name(core.sandbox_id))
    store: S3HomeStore = yield Blocking(opening)
    try:
        upload_id: str = yield Blocking(store.start_upload)
        parts: list[dict[str, Any]] = []
        try:
            part = bytearray()
            while True:
                try:
                    chunk: bytes = yield ReadArchive()
                except SdkException:
                    raise
                except Exception:
                    raise SandboxException("checkpoint_files: the home archive from the sandbox broke off") from None
                if chunk:
                    part += chunk
                if len(part) >= PART_BYTES or (not chunk and (part or not parts)):
                    data = bytes(part)
                    part.clear()
                    parts.append((yield Blocking(partial(store.upload_part, upload_id, len(parts) + 1, data))))
                if not chunk:
                    break
            failure = archive_failure((yield ArchiveTrailers()))
            if failure is not None:
                raise SandboxException(
                    f"checkpoint_files: the home archive failed in the sandbox ({failure}); "
                    "the saved home was left as it was"
                )
            yield Blocking(partial(store.complete, upload_id, parts))
        except GeneratorExit:
            store.abort(upload_id)
            raise
        except BaseException:
            yield Blocking(partial(store.abort, upload_id))
            raise
    finally:
        store.close()


class _Source:
    """The saved home's chunks, remembering whether reading them from S3 failed."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self.failed = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._chunks
        except Exception:
            self.failed = True
            raise


def restore_op(home: HomePersistence, core: SandboxCore) -> HomeOp[None]:
    """Restores the saved home into the sandbox, or leaves it empty when nothing was saved yet.

    :raises SandboxException: when the role or the bucket failed, the object broke off, or sandboxd
        refused the archive
    """
    opening = partial(S3HomeStore.open, home.location, home.execution_role_arn, session_name(core.sandbox_id))
    store: S3HomeStore = yield Blocking(opening)
    try:
        chunks: Iterator[bytes] | None = yield Blocking(store.download)
        if chunks is None:
            return
        source = _Source(chunks)
        try:
            yield PutArchive(iter(source))
        except Exception:
            if source.failed:
                where = f"s3://{home.location.bucket}/{home.location.key}"
                raise SandboxException(f"persist: reading {where} broke off") from None
            raise
    finally:
        store.close()


def restore_on_create_op(core: SandboxCore, home: HomePersistence | None, keep_on_failure: bool) -> HomeOp[None]:
    """A new sandbox's saved home, in place before the handle is returned; a failure ends the sandbox
    unless ``keep_on_failure``."""
    if home is None:
        return
    try:
        yield from restore_op(home, core)
    except GeneratorExit:
        raise
    except BaseException:
        if not keep_on_failure:
            try:
                yield from core.kill_op()
            except Exception:
                pass  # the failure that matters is the one raised below
        raise


def need_home(home: HomePersistence | None) -> HomePersistence:
    """The handle's persistence, or ``InvalidArgumentException`` (before any call) without one."""
    if home is None:
        raise InvalidArgumentException(
            "checkpoint_files: only the handle that created its sandbox with persist knows where to save",
            "persist",
        )
    return home


def _archive_url(core: SandboxCore) -> str:
    return core.launched.daemon_url


def _heard(core: SandboxCore, step: object, error: BaseException) -> None:
    """The handle hears a refusal of an archive call, as the transport's daemon calls are heard (the
    archive calls go to sandboxd over h11, not through the transport)."""
    if isinstance(step, (ReadArchive, PutArchive)) and isinstance(error, SdkException):
        core.on_refusal(error)


def drive_home(op: HomeOp[R], transport: Transport, core: SandboxCore) -> R:
    """Runs ``op`` with sync I/O; the archive calls are refused before any traffic once the handle knows
    its sandbox ended, as every daemon call is."""
    client = ArchiveClient(_archive_url(core), core.access_token, transport.request_timeout)
    download: Iterator[bytes] | None = None
    try:
        step = next(op)
        while True:
            try:
                answer: Any
                if isinstance(step, Blocking):
                    answer = step.work()
                elif isinstance(step, ReadArchive):
                    if download is None:
                        core.refuse_when_ended()
                        download = client.download()
                    answer = next(download, b"")
                elif isinstance(step, ArchiveTrailers):
                    answer = client.trailers
                elif isinstance(step, PutArchive):
                    core.refuse_when_ended()
                    client.upload(step.chunks)
                    answer = None
                else:
                    answer = transport.call(step)
            except BaseException as error:  # handed to the operation, which may catch it
                _heard(core, step, error)
                step = op.throw(error)
                continue
            step = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)
    finally:
        if download is not None and hasattr(download, "close"):
            download.close()  # a save that failed leaves the archive unread: closing ends tar


async def _chunks_in_thread(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    end = object()
    while True:
        chunk = await asyncio.to_thread(next, chunks, end)
        if chunk is end:
            return
        yield cast(bytes, chunk)


async def adrive_home(op: HomeOp[R], transport: AsyncTransport, core: SandboxCore) -> R:
    """Runs ``op`` with async I/O; blocking work and S3 reads in a worker thread."""
    client = AsyncArchiveClient(_archive_url(core), core.access_token, transport.request_timeout)
    download: AsyncIterator[bytes] | None = None
    try:
        step = next(op)
        while True:
            try:
                answer: Any
                if isinstance(step, Blocking):
                    answer = await asyncio.to_thread(step.work)
                elif isinstance(step, ReadArchive):
                    if download is None:
                        core.refuse_when_ended()
                        download = client.download()
                    answer = await anext(download, b"")
                elif isinstance(step, ArchiveTrailers):
                    answer = client.trailers
                elif isinstance(step, PutArchive):
                    core.refuse_when_ended()
                    await client.upload(_chunks_in_thread(step.chunks))
                    answer = None
                else:
                    answer = await transport.call(step)
            except BaseException as error:
                _heard(core, step, error)
                step = op.throw(error)
                continue
            step = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)
    finally:
        if download is not None:
            await cast(Any, download).aclose()
