"""The members of ``Sandbox`` and ``AsyncSandbox`` for home persistence, reincarnation and state feeds
(``checkpointFiles``, ``reincarnate``, ``state$`` and ``Sandbox.events`` of ``sdk/sandbox.ts``), as base
classes so the handles' own modules stay small. The steps are shared: ``sdk._home_persistence`` and
``sdk._feeds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator, Iterator

from . import _control_plane as plane_calls
from ._feeds import SandboxEvent, aiterate, all_sandboxes_feed, iterate, sandbox_feed
from ._home_persistence import HomePersistence, adrive_home, drive_home, need_home, save_op
from ._http import AsyncTransport, Transport
from ._hybrid import hybridmethod
from ._sandbox_core import SandboxCore, create_op
from ._sandbox_options import CreateOptions, _url
from ._check import Checker
from .errors import InvalidArgumentException

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox
    from .sandbox import Sandbox


def home_of(creating: CreateOptions | None) -> HomePersistence | None:
    """Where a creating handle's home is saved (``persist``), or None."""
    if creating is None or creating.persist is None or creating.execution_role_arn is None:
        return None
    return HomePersistence(creating.persist, creating.execution_role_arn)


def keep_on_failure_of(creating: CreateOptions | None) -> bool:
    """``keep_on_failure`` of a creating handle."""
    return creating is not None and creating.keep_on_failure


def _reincarnating(creating: CreateOptions | None) -> CreateOptions:
    if creating is None or not creating.gateways:
        raise InvalidArgumentException(
            "reincarnate: only the handle that created its sandbox with gateways can reincarnate it",
            "gateways",
        )
    return creating


def _all_feed(control_plane_url: str | None) -> str:
    check = Checker("Sandbox.events")
    url = _url(check, "control_plane_url", control_plane_url)
    check.done()
    return plane_calls.control_plane_url(url)


def _events_of_all(cls: type[SandboxExtras], *, control_plane_url: str | None = None) -> Iterator[SandboxEvent]:
    """``Sandbox.events()``: state changes of every sandbox of a control plane, each with its sequence
    number: the current state of every sandbox first, then every change; a broken connection is opened
    again after the last number seen. Needs the operator key (``SDK_API_KEY``)."""
    return iterate(all_sandboxes_feed(_all_feed(control_plane_url), plane_calls.operator_key()))


def _events_of_one(self: SandboxExtras) -> Iterator[SandboxEvent]:
    """``sbx.events()``: this sandbox's state when the handle was made and at every change, until it
    ends; a broken connection is opened again after the last sequence number seen."""
    launched = self._core.launched
    return iterate(sandbox_feed(launched.plane_url, launched.sandbox_id, launched.access_token, launched.seq))


class SandboxExtras:
    """``checkpoint_files``, ``reincarnate`` and ``events`` of the sync handle."""

    _core: SandboxCore
    _transport: Transport
    _creating: CreateOptions | None

    def checkpoint_files(self) -> None:
        """Saves the sandbox user's home (``/home/user``, agent sessions included) to the ``persist``
        location, ``<prefix>/<name>/home.tar.gz``, under ``execution_role_arn``; a sandbox created later
        with the same ``persist`` starts with it. Streamed, never whole in memory. The object is replaced
        only by a whole archive: when anything fails (tar in the sandbox, S3, the role) the one saved
        before stays. Save while the agent is idle.

        :raises InvalidArgumentException: on a handle not created with ``persist``, before any call
        :raises SandboxException: when the role cannot be assumed, the bucket is missing or refuses, or
            tar failed
        """
        home = need_home(home_of(self._creating))
        drive_home(save_op(home, self._core), self._transport, self._core)

    def reincarnate(self) -> Sandbox:
        """A new sandbox created with this handle's options and gateways (secrets read again), for a
        sandbox that ended or must be replaced.

        :raises InvalidArgumentException: on a connected handle or one created without gateways, before
            any call
        """
        from .sandbox import Sandbox

        creating = _reincarnating(self._creating)
        return Sandbox._open(create_op(creating), creating.request_timeout, creating)

    #: ``Sandbox.events(control_plane_url=...)`` for every sandbox; ``sbx.events()`` for this one.
    events = hybridmethod(_events_of_all, _events_of_one)


def _aevents_of_all(
    cls: type[AsyncSandboxExtras], *, control_plane_url: str | None = None
) -> AsyncIterator[SandboxEvent]:
    """``AsyncSandbox.events()``: as ``Sandbox.events()``, an async iterator."""
    return aiterate(all_sandboxes_feed(_all_feed(control_plane_url), plane_calls.operator_key()))


def _aevents_of_one(self: AsyncSandboxExtras) -> AsyncIterator[SandboxEvent]:
    """``sbx.events()``: as on ``Sandbox``, an async iterator."""
    launched = self._core.launched
    return aiterate(sandbox_feed(launched.plane_url, launched.sandbox_id, launched.access_token, launched.seq))


class AsyncSandboxExtras:
    """``checkpoint_files``, ``reincarnate`` and ``events`` of the async handle."""

    _core: SandboxCore
    _transport: AsyncTransport
    _creating: CreateOptions | None

    async def checkpoint_files(self) -> None:
        """As :meth:`SandboxExtras.checkpoint_files`, awaited (S3 calls in a worker thread)."""
        home = need_home(home_of(self._creating))
        await adrive_home(save_op(home, self._core), self._transport, self._core)

    async def reincarnate(self) -> AsyncSandbox:
        """As :meth:`SandboxExtras.reincarnate`, awaited."""
        from .async_sandbox import AsyncSandbox

        creating = _reincarnating(self._creating)
        return await AsyncSandbox._open(create_op(creating), creating.request_timeout, creating)

    #: ``AsyncSandbox.events(control_plane_url=...)`` for every sandbox; ``sbx.events()`` for this one.
    events = hybridmethod(_aevents_of_all, _aevents_of_one)
