"""``sbx.ports`` (issue 28): preview URLs of the sandbox's loopback ports, on the control plane, mirroring
``sdk/sandbox-ports.ts`` and ``protocol/preview-wire.ts``. A URL carries its port's token in the query
(``sdk_preview_token``): open it in a browser (the token becomes a cookie scoped to that sandbox and port,
so the page's links, iframes and WebSockets work) or give it to a program, which may send the token in
the ``x-sdk-preview-token`` header instead. ``expose(port, public=True)`` lets anyone with the URL in,
without a token.

Each port's token is derived here from the sandbox's preview key (given with the access token at create,
fork, and connect when the control plane admits the token): HMAC-SHA256 of ``port <n>`` under the key,
base64url without padding, as TypeScript's ``portToken``; the control plane derives the same from its
own key, so nothing is stored per port. The key is held as a :class:`~sdk._secret_text.SecretText`: no
display of a handle or of ``sbx.ports`` shows it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Final

from ._check import Checker, check_bool, check_int, whole
from ._http import AsyncTransport, Transport, adrive, drive
from ._sandbox_core import SandboxCore
from .errors import AuthenticationException, SandboxException

#: The query parameter a link carries the port token in.
PREVIEW_TOKEN_PARAM: Final = "sdk_preview_token"
#: The header a program sends the port token in.
PREVIEW_TOKEN_HEADER: Final = "x-sdk-preview-token"
#: Where ``{port}`` stands in a sandbox's preview URL pattern (``previewUrl`` of create and connect).
PORT_PLACEHOLDER: Final = "{port}"


def port_token(preview_key: str, port: int) -> str:
    """The token of one port of the sandbox whose preview key is ``preview_key`` (``portToken`` of
    ``protocol/preview-wire.ts``): HMAC-SHA256 of ``port <port>`` (UTF-8) keyed with the key's UTF-8
    bytes, base64url without padding."""
    digest = hmac.new(preview_key.encode(), f"port {port}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def preview_url_of(pattern: str, port: int, token: str | None = None) -> str:
    """The preview URL of ``port`` from a sandbox's pattern (its first ``{port}`` replaced, as
    JavaScript's ``replace`` does), with the token in its query when given (``previewUrlOf``)."""
    url = pattern.replace(PORT_PLACEHOLDER, str(port), 1)
    return url if token is None else f"{url}?{PREVIEW_TOKEN_PARAM}={token}"


def checked_port(port: object) -> int:
    """A port of the sandbox's loopback, 1 to 65535 (``previewPortSchema``), checked before any call:
    ``InvalidArgumentException`` (``field`` ``port``) otherwise, a bool included."""
    check = Checker("sbx.ports")
    check_int(check, ("port",), port, 1, 65_535)
    check.done()
    return whole(port)


def _public(public: object) -> bool:
    check = Checker("sbx.ports.expose")
    check_bool(check, ("public",), public)
    check.done()
    return bool(public)


class _PortsState:
    """What the sync and async ``sbx.ports`` share: the URLs and tokens, computed without a call."""

    def __init__(self, core: SandboxCore) -> None:
        self._core = core

    def url(self, port: int) -> str:
        """The preview URL of ``port``, its token in the query: a URL on the control plane that reaches
        the sandbox's ``127.0.0.1:<port>`` (HTTP, server-sent events, WebSockets). Computed here, no
        call: it works while the sandbox lives (a suspended one with ``auto_resume`` wakes on the first
        request) and is refused with 410 once it has ended. Never log it: it opens that port to whoever
        holds it (unless the port is public, when the token is not needed).

        Example::

            sbx.commands.run("python3 -m http.server 8000", background=True)
            print(sbx.ports.url(8000))  # http://127.0.0.1:4780/v1/sandboxes/<id>/ports/8000/?sdk_preview_token=…

        :raises InvalidArgumentException: a port out of 1-65535 (``field`` ``port``)
        :raises AuthenticationException: on a handle whose access token the control plane refused at
            connect (it was given no preview key)
        """
        checked = checked_port(port)
        token = self.token(port)
        pattern = self._core.launched.preview_url
        if pattern is None:
            raise SandboxException("this handle has not learnt its sandbox's preview URL")
        return preview_url_of(pattern, checked, token)

    def token(self, port: int) -> str:
        """The token of ``port`` alone (for a program's ``x-sdk-preview-token`` header). Never log it:
        it opens that port of this sandbox to whoever holds it.

        :raises AuthenticationException: on a handle without a preview key (its access token was refused
            at connect)
        :raises InvalidArgumentException: a port out of 1-65535 (``field`` ``port``)
        """
        key = self._core.launched.preview_key
        if key is None:
            raise AuthenticationException("this handle has no valid access token: it has no preview tokens")
        return port_token(key.reveal(), checked_port(port))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sandbox_id={self._core.sandbox_id!r})"


class SandboxPorts(_PortsState):
    """``sbx.ports`` of a :class:`~sdk.sandbox.Sandbox`.

    Example::

        sbx.commands.run("python3 -m http.server 8000", background=True)
        link = sbx.ports.url(8000)  # open it in a browser, or httpx.get(link)
        sbx.ports.expose(8000, public=True)  # anyone with the URL, no token
        print(sbx.ports.public_ports())  # [8000]
    """

    def __init__(self, core: SandboxCore, transport: Transport) -> None:
        super().__init__(core)
        self._transport = transport

    def expose(self, port: int, *, public: bool) -> None:
        """Makes ``port`` public (anyone with its URL, no token) or private again (``public=False``).
        ``PUT /v1/sandboxes/:id/previews/:port`` with the sandbox's token.

        :raises InvalidArgumentException: for a bad ``port`` or ``public``, before any call
        :raises SandboxException: ``sandbox_ended``, or another refusal of the control plane
        """
        checked, is_public = checked_port(port), _public(public)
        drive(self._core.expose_op(checked, is_public), self._transport)

    def public_ports(self) -> list[int]:
        """The ports made public (``GET /v1/sandboxes/:id/previews``).

        :raises SandboxException: ``sandbox_ended``, or another refusal of the control plane
        """
        answer = drive(self._core.public_ports_op(), self._transport)
        return [info.port for info in answer.ports]


class AsyncSandboxPorts(_PortsState):
    """``sbx.ports`` of an :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`SandboxPorts` with
    ``expose`` and ``public_ports`` awaited (``url`` and ``token`` make no call)."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        super().__init__(core)
        self._transport = transport

    async def expose(self, port: int, *, public: bool) -> None:
        """As :meth:`SandboxPorts.expose`, awaited.

        :raises InvalidArgumentException: for a bad ``port`` or ``public``, before any call
        """
        checked, is_public = checked_port(port), _public(public)
        await adrive(self._core.expose_op(checked, is_public), self._transport)

    async def public_ports(self) -> list[int]:
        """As :meth:`SandboxPorts.public_ports`, awaited."""
        answer = await adrive(self._core.public_ports_op(), self._transport)
        return [info.port for info in answer.ports]
