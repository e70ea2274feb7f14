"""sandboxd's home archive over HTTP/1.1 with its trailer (``protocol/home-archive.ts``), sync and async.

httpx (through httpcore) reads a chunked body but drops its trailers, and sandboxd says whether the
archive is whole only in the trailer ``sdk-archive-exit`` that follows the last byte. So the two archive
calls are made with ``h11`` (the HTTP/1.1 state machine httpx itself stands on), whose end-of-message
event carries the trailers: :class:`_Exchange` is the protocol, written once; :class:`ArchiveClient` and
:class:`AsyncArchiveClient` only move its bytes over a socket. No message carries a token or a byte of
the archive.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from typing import AsyncIterator, Iterator

import h11
import httpx

from .errors import SandboxException, SdkException, error_from_envelope

#: The endpoint of both calls, and the content type of the archive both ways.
HOME_ARCHIVE_PATH = "/v1/home/archive"
HOME_ARCHIVE_TYPE = "application/gzip"
#: The trailer that carries tar's exit status after the archive's last byte.
ARCHIVE_EXIT_TRAILER = "sdk-archive-exit"
_READ = 256 * 1024


def archive_failure(trailers: dict[str, str] | None) -> str | None:
    """Why the archive read with these trailers is not whole, or None when it is (trailer ``0``)."""
    value = (trailers or {}).get(ARCHIVE_EXIT_TRAILER)
    if value == "0":
        return None
    if value is None:
        return "the archive ended without its exit status"
    if re.fullmatch(r"\d{1,3}|signal:[A-Z0-9]{1,16}", value) is None:
        return "the archive ended with a malformed exit status"
    return f"tar ended with {value}"


def _broken(what: str) -> SandboxException:
    return SandboxException(f"the home archive {what} the sandbox daemon broke off")


class _Exchange:
    """One request and its answer as h11 events: what both clients share."""

    def __init__(self, url: str, token: str, method: str, chunked: bool) -> None:
        parsed = httpx.URL(url)
        if parsed.scheme != "http" or not parsed.host:
            raise SandboxException("the sandbox daemon's address is not an http URL")
        self.host = parsed.host
        self.port = parsed.port or 80
        self.conn = h11.Connection(our_role=h11.CLIENT)
        headers = [("host", f"{self.host}:{self.port}"), ("authorization", f"Bearer {token}")]
        if chunked:
            headers += [("content-type", HOME_ARCHIVE_TYPE), ("transfer-encoding", "chunked")]
        # Under the URL's own path: the daemon URL is the control plane's proxy, /v1/sandboxes/<id>/daemon.
        target = parsed.raw_path.split(b"?")[0].rstrip(b"/") + HOME_ARCHIVE_PATH.encode()
        self.head = self.conn.send(h11.Request(method=method, target=target, headers=headers))
        self.status = 0
        self.trailers: dict[str, str] | None = None
        self.body = bytearray()

    def data(self, chunk: bytes) -> bytes:
        """The bytes that send ``chunk`` of the request body."""
        return self.conn.send(h11.Data(data=chunk)) or b""

    def end(self) -> bytes:
        """The bytes that end the request."""
        return self.conn.send(h11.EndOfMessage()) or b""

    def next(self) -> h11.Response | h11.Data | h11.EndOfMessage | None:
        """The next answer event, or None when more bytes are needed.

        :raises SandboxException: when the answer is not HTTP/1.1 or broke off
        """
        try:
            event = self.conn.next_event()
        except h11.RemoteProtocolError:
            event = None  # raised below, without h11's error as context
            broken = True
        else:
            broken = isinstance(event, h11.ConnectionClosed)
        if broken:
            raise _broken("from")
        if event is h11.NEED_DATA or event is h11.PAUSED:
            return None
        if isinstance(event, h11.Response):
            self.status = event.status_code
        elif isinstance(event, h11.EndOfMessage):
            self.trailers = {name.decode().lower(): value.decode() for name, value in event.headers}
        return event if isinstance(event, (h11.Response, h11.Data, h11.EndOfMessage)) else None

    def passed_on(self, event: h11.Response | h11.Data | h11.EndOfMessage) -> bytes | None:
        """The bytes of a body event to hand to the caller; a refusal's body is kept for its envelope."""
        if not isinstance(event, h11.Data):
            return None
        if self.status >= 400:
            self.body += event.data
            return None
        return bytes(event.data)

    def refused(self) -> SdkException:
        """The SDK exception of an error answer (its envelope)."""
        try:
            payload = json.loads(bytes(self.body)) if self.body else None
        except ValueError:
            payload = None
        return error_from_envelope(payload)


class ArchiveClient:
    """The home archive of one sandboxd, over a blocking socket per call."""

    def __init__(self, url: str, token: str, timeout: float) -> None:
        self._url, self._token, self._timeout = url, token, timeout
        #: The trailers of the last download, once its body has ended.
        self.trailers: dict[str, str] | None = None

    def _connect(self, exchange: _Exchange) -> socket.socket:
        try:
            return socket.create_connection((exchange.host, exchange.port), timeout=self._timeout)
        except OSError:
            pass
        raise SandboxException("the sandbox daemon did not answer the home archive call")

    def _events(self, sock: socket.socket, exchange: _Exchange) -> Iterator[h11.Response | h11.Data | h11.EndOfMessage]:
        while True:
            event = exchange.next()
            if event is not None:
                yield event
                if isinstance(event, h11.EndOfMessage):
                    return
                continue
            try:
                received = sock.recv(_READ)
            except OSError:
                received = b""
            exchange.conn.receive_data(received)

    def download(self) -> Iterator[bytes]:
        """``GET /v1/home/archive``: the archive's bytes as they arrive; then ``trailers`` is set.

        :raises SandboxException: for a refusal (its envelope) or a connection that broke off
        """
        exchange = _Exchange(self._url, self._token, "GET", False)
        self.trailers = None
        sock = self._connect(exchange)
        try:
            sock.sendall(exchange.head + exchange.end())
            for event in self._events(sock, exchange):
                if (chunk := exchange.passed_on(event)) is not None:
                    yield chunk
            if exchange.status >= 400:
                raise exchange.refused()
            self.trailers = exchange.trailers
        finally:
            sock.close()

    def upload(self, chunks: Iterator[bytes]) -> None:
        """``PUT /v1/home/archive`` with ``chunks`` as the body, sent as they are read.

        :raises SandboxException: when sandboxd refused the archive, or the connection broke off
        """
        exchange = _Exchange(self._url, self._token, "PUT", True)
        sock = self._connect(exchange)
        try:
            try:
                sock.sendall(exchange.head)
                for chunk in chunks:
                    if chunk:
                        sock.sendall(exchange.data(chunk))
                sock.sendall(exchange.end())
            except OSError:
                pass  # sandboxd answered early (tar failed): its answer says why
            for event in self._events(sock, exchange):
                if isinstance(event, h11.Data):
                    exchange.body += event.data
            if exchange.status >= 400:
                raise exchange.refused()
        finally:
            sock.close()


class AsyncArchiveClient:
    """The home archive of one sandboxd, over an asyncio stream per call."""

    def __init__(self, url: str, token: str, timeout: float) -> None:
        self._url, self._token, self._timeout = url, token, timeout
        self.trailers: dict[str, str] | None = None

    async def _connect(self, exchange: _Exchange) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.wait_for(asyncio.open_connection(exchange.host, exchange.port), self._timeout)
        except (OSError, asyncio.TimeoutError):
            pass
        raise SandboxException("the sandbox daemon did not answer the home archive call")

    async def _events(
        self, reader: asyncio.StreamReader, exchange: _Exchange
    ) -> AsyncIterator[h11.Response | h11.Data | h11.EndOfMessage]:
        while True:
            event = exchange.next()
            if event is not None:
                yield event
                if isinstance(event, h11.EndOfMessage):
                    return
                continue
            try:
                received = await asyncio.wait_for(reader.read(_READ), self._timeout)
            except (OSError, asyncio.TimeoutError):
                received = b""
            exchange.conn.receive_data(received)

    async def download(self) -> AsyncIterator[bytes]:
        """``GET /v1/home/archive`` as :meth:`ArchiveClient.download`."""
        exchange = _Exchange(self._url, self._token, "GET", False)
        self.trailers = None
        reader, writer = await self._connect(exchange)
        try:
            writer.write(exchange.head + exchange.end())
            await writer.drain()
            async for event in self._events(reader, exchange):
                if (chunk := exchange.passed_on(event)) is not None:
                    yield chunk
            if exchange.status >= 400:
                raise exchange.refused()
            self.trailers = exchange.trailers
        finally:
            writer.close()

    async def upload(self, chunks: AsyncIterator[bytes]) -> None:
        """``PUT /v1/home/archive`` as :meth:`ArchiveClient.upload`."""
        exchange = _Exchange(self._url, self._token, "PUT", True)
        reader, writer = await self._connect(exchange)
        try:
            try:
                writer.write(exchange.head)
                async for chunk in chunks:
                    if chunk:
                        writer.write(exchange.data(chunk))
                        await writer.drain()
                writer.write(exchange.end())
                await writer.drain()
            except OSError:
                pass  # sandboxd answered early (tar failed): its answer says why
            async for event in self._events(reader, exchange):
                if isinstance(event, h11.Data):
                    exchange.body += event.data
            if exchange.status >= 400:
                raise exchange.refused()
        finally:
            writer.close()
