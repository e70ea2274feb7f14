"""The one HTTP transport of the sync and the async SDK (``httpx.Client`` / ``httpx.AsyncClient``).

Every call is described once as a :class:`Call` (method, URL, bearer token, body, how to parse the
answer); what the SDK does with calls is written once as *operations*, generators that yield calls and
receive their parsed answers (or have the call's exception thrown in). :func:`drive` runs an operation
with a :class:`Transport`, :func:`adrive` with an :class:`AsyncTransport`: only the I/O differs.

Answers are JSON; an answer with status 400 or more is an error envelope and becomes its SDK exception
(``sdk.errors.error_from_envelope``). NDJSON answers are read line by line as they arrive. A peer's
hooks hear each call to it before anything is sent (and may refuse it there) and each refusal. No message
carries a token, a body or sandbox content.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Generic,
    Iterable,
    Iterator,
    Protocol,
    TypeVar,
    cast,
)

import httpx
import pydantic

from .errors import SandboxException, SdkException, error_from_envelope

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
M = TypeVar("M", bound=pydantic.BaseModel)

#: Longest NDJSON line taken, as in TypeScript (``protocol/ndjson.ts``).
MAX_NDJSON_LINE_BYTES = 64 * 1024 * 1024

#: The SDK's deadline of one call by default, seconds (TypeScript: 120 000 ms).
DEFAULT_REQUEST_TIMEOUT = 120.0


class PeerHooks(Protocol):
    """What a sandbox handle hears of its calls to one peer (TypeScript's ``DaemonEndpoint`` has the
    same two: ``beforeCall`` and ``onRefusal``)."""

    def before_call(self) -> None:
        """Runs before every call, making none of its own; raises to refuse the call before any traffic."""

    def on_refusal(self, error: SdkException) -> None:
        """Hears every refusal of a call (an error answer, or a malformed or missing one) on its way to
        the caller."""


@dataclass(frozen=True)
class Peer:
    """A server the SDK calls: its base URL and how messages name it."""

    url: str
    #: ``the control plane`` or ``the daemon``: names the server in a malformed-answer message.
    name: str
    #: Names the server in an unreachable message (``the control plane at http://…``).
    unreachable_name: str
    #: Hears every call to this peer and its refusals (a sandbox handle's sandboxd:
    #: ``sdk._sandbox_core.KnownEnd``).
    hooks: PeerHooks | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Call(Generic[T_co]):
    """One HTTP call: ``parse`` turns the decoded JSON answer (or each NDJSON line) into ``T_co``."""

    peer: Peer
    method: str
    path: str
    parse: Callable[[Any], T_co]
    token: str | None = field(default=None, repr=False)
    json_body: object = field(default=None, repr=False)
    #: A raw body: bytes, or chunks sent as they are read (chunked; sync iterables with ``Transport``,
    #: async ones with ``AsyncTransport``), so an upload never need be whole in memory.
    content: bytes | Iterable[bytes] | AsyncIterable[bytes] | None = field(default=None, repr=False)
    #: For NDJSON lines ``parse`` refuses: the message of the ``SandboxException`` (else a generic one).
    malformed: str | None = None

    @property
    def what(self) -> str:
        """``the daemon to POST /v1/processes``: names the call in messages."""
        return f"{self.peer.name} to {self.method} {self.path}"


#: An operation: yields calls, receives their answers, returns its result.
Op = Generator[Call[Any], Any, R]


def model_parser(model: type[M]) -> Callable[[Any], M]:
    """A ``parse`` for ``Call`` that validates a wire model strictly (camelCase aliases)."""
    return lambda payload: model.model_validate(payload, strict=True)


def _headers(call: Call[Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    if call.token is not None:
        headers["authorization"] = f"Bearer {call.token}"
    if call.json_body is not None:
        headers["content-type"] = "application/json"
    elif call.content is not None:
        headers["content-type"] = "application/octet-stream"
    return headers


def _build(
    client: httpx.Client | httpx.AsyncClient, call: Call[Any], timeout: httpx.Timeout
) -> httpx.Request:
    body = json.dumps(call.json_body).encode() if call.json_body is not None else call.content
    return client.build_request(
        call.method, f"{call.peer.url}{call.path}", headers=_headers(call), content=body, timeout=timeout
    )


def _before(call: Call[Any]) -> None:
    if call.peer.hooks is not None:
        call.peer.hooks.before_call()


def _heard(call: Call[Any], error: SdkException) -> SdkException:
    """``error``, a refusal of ``call``, once the peer's hooks heard it."""
    if call.peer.hooks is not None:
        call.peer.hooks.on_refusal(error)
    return error


def _unreachable(call: Call[Any]) -> SandboxException:
    return SandboxException(f"{call.peer.unreachable_name} did not answer {call.method} {call.path}")


def _answer_of(call: Call[T], response: httpx.Response | None) -> T:
    """The parsed answer of a sent ``call`` (None: nothing answered); the peer's hooks hear a refusal."""
    if response is None:
        raise _heard(call, _unreachable(call))
    try:
        return read_answer(call, response.status_code, response.content)
    except SdkException as error:
        _heard(call, error)
        raise


def _decode(body: bytes) -> object:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def read_answer(call: Call[T], status: int, body: bytes) -> T:
    """The answer of ``call`` parsed; an error status raises the envelope's exception."""
    payload = _decode(body)
    if status >= 400:
        raise error_from_envelope(payload)
    return parse_value(call, payload, f"malformed answer from {call.what}")


def parse_value(call: Call[T], payload: object, malformed: str) -> T:
    """``call.parse(payload)``; a payload it refuses is a ``SandboxException`` saying ``malformed``."""
    try:
        return call.parse(payload)
    except SdkException:
        raise
    except (pydantic.ValidationError, ValueError, TypeError, KeyError):
        pass  # raised below, outside this block: the refused payload is not even the exception's context
    raise SandboxException(malformed)


class NdjsonDecoder:
    """Splits bytes of newline-delimited JSON into values, one per complete line; a line longer than
    ``max_line_bytes`` or one that is not JSON is a ``SandboxException`` naming the path only."""

    def __init__(self, path: str, max_line_bytes: int = MAX_NDJSON_LINE_BYTES) -> None:
        self._path = path
        self._max = max_line_bytes
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[object]:
        """The values of the lines ``chunk`` completes (a split line waits for its end)."""
        self._pending += chunk
        values: list[object] = []
        start = 0
        newline = self._pending.find(b"\n", start)
        while newline >= 0:
            line = bytes(self._pending[start:newline])
            start = newline + 1
            newline = self._pending.find(b"\n", start)
            try:
                values.append(json.loads(line))
                continue
            except ValueError:
                pass  # raised below, without the line as the exception's context
            raise SandboxException(f"malformed line in the event stream of the sandbox daemon ({self._path})")
        del self._pending[:start]
        if len(self._pending) > self._max:
            raise SandboxException(f"an NDJSON line of {self._path} is longer than allowed")
        return values


def _stream_values(call: Call[T], values: list[object]) -> list[T]:
    message = call.malformed or f"malformed line in the event stream of {call.what}"
    return [parse_value(call, value, message) for value in values]


class StreamBroke(SandboxException):
    """An event stream that broke off (not a refusal, not a malformed line): a command's followers open
    it again after the last event read (``_command_output.follow``)."""


def _broken(call: Call[Any]) -> SandboxException:
    return StreamBroke(f"the event stream of the sandbox daemon broke ({call.path})")


class Transport:
    """Sync I/O: one ``httpx.Client`` (connections kept alive) for a handle's calls and streams."""

    def __init__(self, request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> None:
        self.request_timeout = request_timeout
        self._client = httpx.Client(timeout=request_timeout, trust_env=False)

    def call(self, call: Call[T]) -> T:
        """Sends ``call`` and returns its parsed answer (its peer's hooks hear the call and a refusal)."""
        _before(call)
        response = None
        try:
            response = self._client.send(_build(self._client, call, httpx.Timeout(self.request_timeout)))
        except httpx.HTTPError:
            pass  # raised below, without httpx's error as context (its request holds the token)
        return _answer_of(call, response)

    def open_stream(self, call: Call[Any], read_timeout: float | None = None) -> httpx.Response:
        """Sends ``call`` and returns its answer with the body unread (the caller closes it); an error
        status raises the envelope's exception. ``read_timeout`` bounds each wait for bytes (None: none).
        The peer's hooks hear the call and a refusal, not what breaks later in the body."""
        _before(call)
        timeout = httpx.Timeout(self.request_timeout, read=read_timeout)
        response = None
        try:
            response = self._client.send(_build(self._client, call, timeout), stream=True)
        except httpx.HTTPError:
            pass
        if response is None:
            raise _heard(call, _unreachable(call))
        if response.status_code >= 400:
            body = b""
            try:
                body = response.read()
            except httpx.HTTPError:
                pass  # a refusal whose body broke off: its envelope is then malformed
            finally:
                response.close()
            raise _heard(call, error_from_envelope(_decode(body)))
        return response

    @contextmanager
    def lines(self, call: Call[T]) -> Iterator[Iterator[T]]:
        """The NDJSON answer of ``call``, each line parsed, read as the caller iterates."""
        response = self.open_stream(call)
        try:
            yield self._values(call, response)
        finally:
            response.close()

    @staticmethod
    def _values(call: Call[T], response: httpx.Response) -> Iterator[T]:
        decoder = NdjsonDecoder(call.path)
        try:
            for chunk in response.iter_bytes():
                yield from _stream_values(call, decoder.feed(chunk))
            return
        except httpx.HTTPError:
            pass
        raise _broken(call)

    def close(self) -> None:
        """Closes the connections."""
        self._client.close()


class AsyncTransport:
    """Async I/O: one ``httpx.AsyncClient`` for a handle's calls and streams."""

    def __init__(self, request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> None:
        self.request_timeout = request_timeout
        self._client = httpx.AsyncClient(timeout=request_timeout, trust_env=False)

    async def call(self, call: Call[T]) -> T:
        """Sends ``call`` and returns its parsed answer (its peer's hooks hear the call and a refusal)."""
        _before(call)
        response = None
        try:
            response = await self._client.send(_build(self._client, call, httpx.Timeout(self.request_timeout)))
        except httpx.HTTPError:
            pass  # raised below, without httpx's error as context (its request holds the token)
        return _answer_of(call, response)

    async def open_stream(self, call: Call[Any], read_timeout: float | None = None) -> httpx.Response:
        """As :meth:`Transport.open_stream`, awaited (the caller closes the answer with ``aclose``)."""
        _before(call)
        timeout = httpx.Timeout(self.request_timeout, read=read_timeout)
        response = None
        try:
            response = await self._client.send(_build(self._client, call, timeout), stream=True)
        except httpx.HTTPError:
            pass
        if response is None:
            raise _heard(call, _unreachable(call))
        if response.status_code >= 400:
            body = b""
            try:
                body = await response.aread()
            except httpx.HTTPError:
                pass  # a refusal whose body broke off: its envelope is then malformed
            finally:
                await response.aclose()
            raise _heard(call, error_from_envelope(_decode(body)))
        return response

    @asynccontextmanager
    async def lines(self, call: Call[T]) -> AsyncIterator[AsyncIterator[T]]:
        """The NDJSON answer of ``call``, each line parsed, read as the caller iterates."""
        response = await self.open_stream(call)
        try:
            yield self._values(call, response)
        finally:
            await response.aclose()

    @staticmethod
    async def _values(call: Call[T], response: httpx.Response) -> AsyncIterator[T]:
        decoder = NdjsonDecoder(call.path)
        try:
            async for chunk in response.aiter_bytes():
                for value in _stream_values(call, decoder.feed(chunk)):
                    yield value
            return
        except httpx.HTTPError:
            pass
        raise _broken(call)

    async def aclose(self) -> None:
        """Closes the connections."""
        await self._client.aclose()


def drive(op: Op[R], transport: Transport) -> R:
    """Runs an operation with sync I/O: each call it yields is sent, its answer (or exception) given back."""
    try:
        call = next(op)
        while True:
            try:
                answer = transport.call(call)
            except BaseException as error:  # handed to the operation, which may catch it
                call = op.throw(error)
                continue
            call = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)


async def adrive(op: Op[R], transport: AsyncTransport) -> R:
    """Runs an operation with async I/O (the same operations as :func:`drive`)."""
    try:
        call = next(op)
        while True:
            try:
                answer = await transport.call(call)
            except BaseException as error:
                call = op.throw(error)
                continue
            call = op.send(answer)
    except StopIteration as stop:
        return cast(R, stop.value)
