"""The members of ``Sandbox`` and ``AsyncSandbox`` for home persistence and state feeds
(``checkpointFiles``, ``state$``, ``Sandbox.events``, ``events$`` as ``daemon_events`` and
``Sandbox.inspect$`` as ``inspect``, of ``sdk/sandbox.ts``), as base classes so the handles' own modules
stay small, and the check of ``reincarnate`` (which the handles define: it opens a new handle, and this
module, below the handles, imports none). The steps are shared: ``sdk._home_persistence`` and
``sdk._feeds``.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterator
from ._check import check_int, whole
from .daemon_events import DaemonEvent, InspectionRecord, daemon_feed, inspection_feed

from . import _control_plane as plane_calls
from ._feeds import Feed, SandboxEvent, aiterate, all_sandboxes_feed, iterate, sandbox_feed
from ._home_persistence import HomePersistence, adrive_home, drive_home, need_home, save_op
from ._http import AsyncTransport, Transport
from ._hybrid import hybridmethod
from ._sandbox_core import SandboxCore
from ._option_checks import check_url
from ._sandbox_options import CreateOptions
from ._check import Checker
from .errors import InvalidArgumentException


def home_of(creating: CreateOptions | None) -> HomePersistence | None:
    """Where a creating handle's home is saved (``persist``), or None."""
    if creating is None or creating.persist is None or creating.execution_role_arn is None:
        return None
    return HomePersistence(creating.persist, creating.execution_role_arn)


def keep_on_failure_of(creating: CreateOptions | None) -> bool:
    """``keep_on_failure`` of a creating handle."""
    return creating is not None and creating.keep_on_failure


def reincarnating(creating: CreateOptions | None) -> CreateOptions:
    """``reincarnate``'s options: those the handle created its sandbox with, which must have gateways.

    :raises InvalidArgumentException: on a connected handle or one created without gateways
    """
    if creating is None or not creating.gateways:
        raise InvalidArgumentException(
            "reincarnate: only the handle that created its sandbox with gateways can reincarnate it",
            "gateways",
        )
    return creating


def _all_feed(control_plane_url: str | None) -> str:
    check = Checker("Sandbox.events")
    url = check_url(check, "control_plane_url", control_plane_url)
    check.done()
    return plane_calls.control_plane_url(url)


def _after(operation: str, after: object) -> int | None:
    """``after=``: None, or a cursor (a whole number, 0 or more), checked before any call."""
    check = Checker(operation)
    if after is not None:
        check_int(check, ("after",), after, 0, 2**53 - 1, "must be a cursor (0 or more)")
    check.done()
    return None if after is None else whole(after)


def _inspection(control_plane_url: str | None, after: int | None) -> Feed[InspectionRecord]:
    check = Checker("Sandbox.inspect")
    url = check_url(check, "control_plane_url", control_plane_url)
    check.done()
    cursor = _after("Sandbox.inspect", after)
    return inspection_feed(plane_calls.control_plane_url(url), plane_calls.operator_key(), cursor)


def _daemon(core: SandboxCore, after: int | None) -> Feed[DaemonEvent]:
    cursor = _after("daemon_events", after) or 0
    return daemon_feed(core._daemon.url, core.access_token, cursor)


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
    """``checkpoint_files``, ``events``, ``daemon_events`` and ``inspect`` of the sync handle."""

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

    #: ``Sandbox.events(control_plane_url=...)`` for every sandbox; ``sbx.events()`` for this one.
    events = hybridmethod(_events_of_all, _events_of_one)

    def daemon_events(self, *, after: int | None = None) -> Iterator[DaemonEvent]:
        """What sandboxd sees, as it happens (TypeScript's ``sbx.events$``): calls to it, requests and
        responses of its gateway routes, commands started and ended, route changes and the transitions of
        the actors it hosts, each with its ``seq``; from the oldest record sandboxd holds, or after
        ``after``. A broken connection is opened again after the last number seen (nothing missed or
        repeated). Never a header value, a body or output; reading is not using the sandbox (it never
        resumes a suspended one: the read waits until something else resumes it). The iterator follows
        sandboxd until the sandbox ends or the caller stops.

        :raises InvalidArgumentException: for a malformed ``after``, before any call
        :raises AuthenticationException: (while iterating) when sandboxd refuses the token
        """
        return iterate(_daemon(self._core, after))

    @classmethod
    def inspect(cls, *, after: int | None = None, control_plane_url: str | None = None) -> Iterator[InspectionRecord]:
        """The operator's inspection feed (TypeScript's ``Sandbox.inspect$``): every transition of every
        actor of a control plane (sandboxes, gateway routes, agent executions), each with the actor's
        ``seq`` and the feed's ``cursor``; after ``after`` when given, else from each actor's latest
        transition. A broken connection goes on after the last cursor. Needs the operator key
        (``SDK_API_KEY``).

        :raises InvalidArgumentException: for a malformed argument, before any call
        :raises AuthenticationException: (at the first ``next``) without a valid operator key
        """
        return iterate(_inspection(control_plane_url, after))


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
    """``checkpoint_files``, ``events``, ``daemon_events`` and ``inspect`` of the async handle."""

    _core: SandboxCore
    _transport: AsyncTransport
    _creating: CreateOptions | None

    async def checkpoint_files(self) -> None:
        """As :meth:`SandboxExtras.checkpoint_files`, awaited (S3 calls in a worker thread)."""
        home = need_home(home_of(self._creating))
        await adrive_home(save_op(home, self._core), self._transport, self._core)

    #: ``AsyncSandbox.events(control_plane_url=...)`` for every sandbox; ``sbx.events()`` for this one.
    events = hybridmethod(_aevents_of_all, _aevents_of_one)

    def daemon_events(self, *, after: int | None = None) -> AsyncIterator[DaemonEvent]:
        """As :meth:`SandboxExtras.daemon_events`, an async iterator (``async for``).

        :raises InvalidArgumentException: for a malformed ``after``, before any call
        """
        return aiterate(_daemon(self._core, after))

    @classmethod
    def inspect(
        cls, *, after: int | None = None, control_plane_url: str | None = None
    ) -> AsyncIterator[InspectionRecord]:
        """As :meth:`SandboxExtras.inspect`, an async iterator (``async for``).

        :raises InvalidArgumentException: for a malformed argument, before any call
        """
        return aiterate(_inspection(control_plane_url, after))
