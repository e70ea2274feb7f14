"""``sbx.credentials`` (issue 27 item 2): the credential broker of a sandbox, mirroring
``sdk/sandbox-credentials.ts``. Each rule (``sdk.credential_rules.CredentialRule``) binds headers to one
host; sandboxd's proxy adds them to every HTTPS request sandbox code sends that host through
``HTTPS_PROXY``, which every command gets, with a CA of the sandbox's own that its toolchains trust.
Sandbox code uses the credential and never reads it. Values are read with the caller's ``SecretCache``
just before the one call that sends them (``POST /v1/credentials``) and held nowhere else in the SDK.

On the creating handle ``refresh()`` reads every secret again and sends the rules anew (rotation); on a
connected handle, or one created without rules, it reads the broker's state only: no rule is ever
recovered from the sandbox."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._http import AsyncTransport, Op, Transport
from ._sandbox_core import SandboxCore
from ._secret_ops import ReadSecrets, SecretOp, adrive_secrets, drive_secrets
from ._wire import CredentialState
from .credential_rules import CredentialRule
from .errors import SandboxException
from .secret_cache import SecretCache


@dataclass(frozen=True)
class CredentialStatus:
    """What the broker reports (TypeScript's ``CredentialStatus``): never a secret."""

    #: Hosts with a credential rule, sorted.
    hosts: tuple[str, ...]
    #: ``http://127.0.0.1:<port>``, what every command's ``HTTPS_PROXY`` says; None before any rule.
    proxy: str | None
    #: SHA-256 of the sandbox's CA certificate (``AB:CD:…``); None before any rule.
    ca_fingerprint256: str | None


class CredentialCore:
    """The credential broker of one handle: the rules and the cache (creating handle only), the state
    last read; the operations of both handles."""

    def __init__(self, core: SandboxCore, rules: Sequence[CredentialRule], cache: SecretCache | None) -> None:
        self.core = core
        self.rules: tuple[CredentialRule, ...] = tuple(rules)
        #: None on a connected handle.
        self.cache = cache
        self.status = CredentialStatus((), None, None)

    def adopt(self, state: CredentialState) -> CredentialStatus:
        """Takes the daemon's state as this handle's."""
        self.status = CredentialStatus(tuple(state.hosts), state.proxy, state.ca_fingerprint256)
        return self.status

    def read_state_op(self) -> Op[CredentialStatus]:
        """``GET /v1/credentials``."""
        return self.adopt((yield from self.core.credential_state_op()))

    def configure_op(self) -> SecretOp[CredentialStatus]:
        """Resolves every rule's secrets, then sends the whole set in one call.

        :raises SecretNotFoundException: for a missing secret (nothing is sent)
        :raises SandboxException: the daemon's refusal
        """
        if self.cache is None:
            raise SandboxException("this handle holds no credential rules")
        rules: list[dict[str, Any]] = []
        for rule in self.rules:
            names = list(rule.headers)
            # Resolved just before the call, held only for it.
            values: list[str] = yield ReadSecrets(tuple(rule.headers[name] for name in names))
            rules.append({"host": rule.host, "headers": dict(zip(names, values))})
        return self.adopt((yield from self.core.configure_credentials_op(rules)))

    def refresh_op(self) -> SecretOp[CredentialStatus]:
        """Creating handle with rules: re-reads every secret (even if cached) and sends the rules again;
        on a failure the rules in force stay. Otherwise: reads the state again."""
        if self.cache is None or not self.rules:
            return (yield from self.read_state_op())
        self.cache.invalidate(source for rule in self.rules for source in rule.headers.values())
        return (yield from self.configure_op())


class _CredentialState:
    """What the sync and async ``sbx.credentials`` share: ``status``."""

    def __init__(self, core: CredentialCore) -> None:
        self._core = core

    @property
    def status(self) -> CredentialStatus:
        """Hosts with a credential, the proxy's URL in the sandbox and the CA's fingerprint, as last read
        (at create, or by :meth:`refresh`; empty on a handle that has read nothing). Makes no call."""
        return self._core.status

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self._core.status!r})"


class SandboxCredentials(_CredentialState):
    """``sbx.credentials`` of a :class:`~sdk.sandbox.Sandbox`.

    Example::

        sbx = Sandbox.create(credentials=[CredentialRule("api.github.com", {"authorization": "gh-token"})])
        print(sbx.credentials.status.proxy)  # http://127.0.0.1:3128, every command's HTTPS_PROXY
        sbx.credentials.refresh()  # after the secret was rotated
    """

    def __init__(self, core: CredentialCore, transport: Transport) -> None:
        super().__init__(core)
        self._transport = transport

    def refresh(self) -> CredentialStatus:
        """Creating handle: reads every rule's secrets again (even if cached) and sends them; requests
        already under way keep the old values, the next ones get the new. Connected handle (or one
        created without rules): reads the broker's state again. Returns the state, which :attr:`status`
        then is.

        :raises SecretNotFoundException: when a secret is missing (the rules in force stay)
        :raises SandboxException: when the daemon refuses (the rules in force stay)
        """
        return drive_secrets(self._core.refresh_op(), self._transport, self._core.cache)


class AsyncSandboxCredentials(_CredentialState):
    """``sbx.credentials`` of an :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`SandboxCredentials`
    awaited (secrets read in a worker thread)."""

    def __init__(self, core: CredentialCore, transport: AsyncTransport) -> None:
        super().__init__(core)
        self._transport = transport

    async def refresh(self) -> CredentialStatus:
        """As :meth:`SandboxCredentials.refresh`, awaited.

        :raises SecretNotFoundException: when a secret is missing (the rules in force stay)
        :raises SandboxException: when the daemon refuses (the rules in force stay)
        """
        return await adrive_secrets(self._core.refresh_op(), self._transport, self._core.cache)
