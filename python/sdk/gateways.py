"""``sbx.gateways`` (SPEC "GatewayStatus", "SDK operations"): the routes of a sandbox by name, mirroring
``sdk/sandbox-gateways.ts``. On the handle that created the sandbox it holds the definitions:
``refresh()`` (sync) / ``await arefresh()`` (async) drops their secrets from the cache, reads them again
and sends a new configuration (ConfigureSandbox). On a connected handle it holds state only
(ConfigureStatus): a refresh reads that state again; no definition is ever recovered from the sandbox."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ._http import AsyncTransport, Op, Transport
from ._sandbox_core import SandboxCore
from ._secret_ops import ReadSecrets, SecretOp, adrive_secrets, drive_secrets
from ._wire import GatewayState
from .errors import SandboxException
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway

#: The first daemon with secret gateways (SPEC "Versioning" 0.6.0).
GATEWAY_MIN_VERSION: Final = "0.6.0"


def _parts(version: str) -> tuple[int, int, int]:
    numbers = []
    for part in (version.split(".") + ["0", "0", "0"])[:3]:
        digits = re.match(r"\d*", part.strip())
        numbers.append(int(digits.group(0)) if digits and digits.group(0) else 0)
    return numbers[0], numbers[1], numbers[2]


def meets_version(actual: str, minimum: str) -> bool:
    """True when ``actual`` is ``minimum`` or later (as ``protocol/versions.ts``' ``meetsVersion``)."""
    return _parts(actual) >= _parts(minimum)


@dataclass(frozen=True)
class GatewayStatus:
    """One route's state: never a secret."""

    #: OS-chosen loopback port in the sandbox, kept across refreshes.
    port: int
    #: ``http://127.0.0.1:<port>``.
    url: str
    #: Class of the last refused configuration, or None.
    last_error_class: str | None


class GatewayCore:
    """The routes of one handle: definitions (creating handle only), the cache, the state; the
    operations of both handles."""

    def __init__(
        self, core: SandboxCore, definitions: Mapping[str, SecretGateway], cache: SecretCache | None
    ) -> None:
        self.core = core
        self.definitions: Mapping[str, SecretGateway] = MappingProxyType(dict(definitions))
        #: None on a connected handle.
        self.cache = cache
        self.status: Mapping[str, GatewayStatus] = MappingProxyType({})

    def adopt(self, state: GatewayState) -> None:
        """Takes the daemon's state as this handle's."""
        self.status = MappingProxyType(
            {name: GatewayStatus(s.port, s.url, s.last_error_class) for name, s in state.routes.items()}
        )

    def read_state_op(self) -> Op[None]:
        """ConfigureStatus."""
        self.adopt((yield from self.core.gateway_state_op()))

    def configure_op(self) -> SecretOp[None]:
        """Checks the daemon's version, resolves the secrets just before the call and sends ConfigureSandbox.

        :raises SandboxException: (class ``UnimplementedError``) for a daemon older than 0.6.0, or the
            daemon's refusal with its failure class
        :raises SecretNotFoundException: for a missing secret
        """
        if self.cache is None:
            raise SandboxException("this handle holds no gateway definitions")
        answer = yield from self.core.version_op()
        if not meets_version(answer.version, GATEWAY_MIN_VERSION):
            raise SandboxException(
                f"UnimplementedError: sandbox image {answer.version} predates gateways ({GATEWAY_MIN_VERSION})",
                "unimplemented",
                "UnimplementedError",
            )
        routes: dict[str, Any] = {}
        for name, gateway in self.definitions.items():
            names = list(gateway.headers)
            values: list[str] = yield ReadSecrets(tuple(gateway.headers[h] for h in names))
            routes[name] = {
                "upstream": gateway.upstream,
                "headers": dict(zip(names, values)),
                "allow": [[method, path] for method, path in gateway.allow],
                "ratePerMinute": gateway.rate_per_minute,
            }
        self.adopt((yield from self.core.configure_op(routes)))

    def refresh_op(self) -> SecretOp[None]:
        """Creating handle: re-reads every route's secrets (even if cached) and reconfigures; on a refusal
        the previous configuration stays in force. Connected handle: reads the state again. Creating
        handle without gateways: nothing."""
        if not self.definitions:
            if self.cache is None:
                yield from self.read_state_op()
            return
        assert self.cache is not None
        self.cache.invalidate(s for g in self.definitions.values() for s in g.headers.values())
        yield from self.configure_op()


class _Routes(Mapping[str, GatewayStatus]):
    """Route name to :class:`GatewayStatus`; empty when the sandbox has no gateways."""

    def __init__(self, core: GatewayCore) -> None:
        self._core = core

    def __getitem__(self, name: str) -> GatewayStatus:
        return self._core.status[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._core.status)

    def __len__(self) -> int:
        return len(self._core.status)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self._core.status)!r})"


class Gateways(_Routes):
    """``sbx.gateways`` of a :class:`~sdk.sandbox.Sandbox`: ``sbx.gateways["llm"].url``."""

    def __init__(self, core: GatewayCore, transport: Transport) -> None:
        super().__init__(core)
        self._transport = transport

    def refresh(self) -> None:
        """Re-reads the routes' secrets (even if cached) and reconfigures the sandbox, same ports; on a
        connected handle reads the state again; without gateways does nothing.

        :raises SecretNotFoundException: for a missing secret (the previous configuration stays)
        :raises SandboxException: when the daemon refuses (the previous configuration stays)
        """
        drive_secrets(self._core.refresh_op(), self._transport, self._core.cache)


class AsyncGateways(_Routes):
    """``sbx.gateways`` of an :class:`~sdk.async_sandbox.AsyncSandbox`."""

    def __init__(self, core: GatewayCore, transport: AsyncTransport) -> None:
        super().__init__(core)
        self._transport = transport

    async def arefresh(self) -> None:
        """``refresh()`` of the sync handle, awaited (secrets read in a worker thread)."""
        await adrive_secrets(self._core.refresh_op(), self._transport, self._core.cache)

