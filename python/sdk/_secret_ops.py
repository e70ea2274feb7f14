"""Operations that also read secrets: besides calls (``sdk._http.Call``) they may yield
:class:`ReadSecrets`, answered with the values from the handle's ``SecretCache``. :func:`drive_secrets`
reads them in the caller's thread, :func:`adrive_secrets` in a worker thread (boto3 is blocking), so the
sync and the async SDK share every step, as ``sdk._http.drive`` / ``adrive`` do for calls. Values are held
only by the operation that asked for them, for the one call that sends them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Generator, TypeVar, Union, cast

from ._http import AsyncTransport, Call, Transport
from .errors import SandboxException
from .secret_cache import SecretCache
from .secret_gateway import SecretSource

R = TypeVar("R")


@dataclass(frozen=True)
class ReadSecrets:
    """Asks the driver for the values of ``sources``, in order (a ``list[str]``)."""

    sources: tuple[SecretSource, ...]


#: An operation that yields calls and secret reads.
SecretOp = Generator[Union[Call[Any], ReadSecrets], Any, R]


def _need(cache: SecretCache | None) -> SecretCache:
    if cache is None:
        raise SandboxException("this handle holds no secret cache")
    return cache


def drive_secrets(op: SecretOp[R], transport: Transport, cache: SecretCache | None) -> R:
    """Runs ``op`` with sync I/O; each answer (or exception) is given back to it."""
    try:
        step = next(op)
        while True:
            try:
                if isinstance(step, ReadSecrets):
                    answer: Any = _need(cache).get_all(step.sources)
                else:
                    answer = transport.call(step)
            except BaseException as error:  # handed to the operation, which may catch it
                step = op.throw(error)
                continue
            step = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)


async def adrive_secrets(op: SecretOp[R], transport: AsyncTransport, cache: SecretCache | None) -> R:
    """Runs ``op`` with async I/O; secrets are read in a worker thread."""
    try:
        step = next(op)
        while True:
            try:
                if isinstance(step, ReadSecrets):
                    answer: Any = await asyncio.to_thread(_need(cache).get_all, step.sources)
                else:
                    answer = await transport.call(step)
            except BaseException as error:
                step = op.throw(error)
                continue
            step = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)
