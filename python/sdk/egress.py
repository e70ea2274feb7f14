"""``sbx.egress`` (issue 27): a sandbox's egress policy, known from the control plane's answers, and
its replacement while the sandbox runs (``PUT /v1/sandboxes/:id/egress`` with the sandbox's token)."""

from __future__ import annotations

from typing import Any, Mapping

from ._http import AsyncTransport, Transport, adrive, drive
from ._sandbox_core import SandboxCore
from .egress_policy import EgressPolicy, egress_argument
from .errors import SandboxException


class _EgressState:
    """What the sync and async ``sbx.egress`` share: the handle's core and its last known policy."""

    def __init__(self, core: SandboxCore) -> None:
        self._core = core

    @property
    def policy(self) -> EgressPolicy:
        """The sandbox's egress policy, normalised, as the control plane last answered it (at create or
        connect, in any facts since, or after :meth:`update`). Makes no call.

        :raises SandboxException: for a handle made without a control-plane answer (never one from
            ``create``, ``connect``, ``fork`` or a pool)
        """
        if self._core.egress is None:
            raise SandboxException("this handle has not learnt its sandbox's egress policy")
        return self._core.egress

    def __repr__(self) -> str:
        return f"{type(self).__name__}(policy={self._core.egress!r})"


def _policy(policy: object) -> EgressPolicy:
    return egress_argument("sbx.egress.update", "policy", policy)


class SandboxEgress(_EgressState):
    """``sbx.egress`` of a :class:`~sdk.sandbox.Sandbox`.

    Example::

        sbx.egress.update(EgressPolicy("allowlist", allow=["pypi.org", "*.pythonhosted.org"]))
        print(sbx.egress.policy.allow)
    """

    def __init__(self, core: SandboxCore, transport: Transport) -> None:
        super().__init__(core)
        self._transport = transport

    def update(self, policy: EgressPolicy | Mapping[str, Any]) -> EgressPolicy:
        """Replaces the sandbox's egress policy while it runs (a suspended sandbox is resumed first, as by
        any call). Returns the policy now in force, normalised, which :attr:`policy` then is.

        :param policy: an ``EgressPolicy``, or a mapping of its options (``{"mode": "closed"}``)
        :raises InvalidArgumentException: for a malformed policy (``field`` ``mode``, ``allow[0]``...;
            ``policy`` for a value that is neither), before any call; or the control plane's refusal
            (``field`` ``mode``: the sandbox's template cannot close egress)
        :raises SandboxException: ``sandbox_ended``, or another refusal of the control plane
        """
        return drive(self._core.egress_op(_policy(policy)), self._transport)


class AsyncSandboxEgress(_EgressState):
    """``sbx.egress`` of an :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`SandboxEgress` awaited."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        super().__init__(core)
        self._transport = transport

    async def update(self, policy: EgressPolicy | Mapping[str, Any]) -> EgressPolicy:
        """As :meth:`SandboxEgress.update`, awaited.

        :raises InvalidArgumentException: for a malformed policy, before any call
        :raises SandboxException: ``sandbox_ended``, or the control plane's refusal
        """
        return await adrive(self._core.egress_op(_policy(policy)), self._transport)
