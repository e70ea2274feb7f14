"""What ``SandboxPool`` and ``AsyncSandboxPool`` share (``sdk/sandbox-pool.ts``): the options every slot
is launched with, a slot's launch and warm-up, its end, and ``take``'s options, as operations
(``sdk._http.Op``); and the slot keeping itself, :class:`SlotPool` (slots filled by background threads)
and :class:`AsyncSlotPool` (by tasks of the event loop), which hand a slot out as a
:class:`~sdk._sandbox_lifecycle.Launched` record.

A slot is a launched sandbox without gateways and without a handle; ``take`` opens a handle on one and
its gateways then, so a slot never carries secrets before it is taken. That step is the handles':
``SandboxPool`` (``sdk.sandbox_pool``) and ``AsyncSandboxPool`` (``sdk.async_sandbox``) are these classes
and their ``take``; this module, part of the lifecycle layer, knows no handle.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any, Generic, Mapping, TypeVar

from . import _daemon as daemon_calls
from ._check import Checker, check_bool
from ._http import AsyncTransport, Call, Op, Transport, adrive, drive, model_parser
from ._sandbox_lifecycle import Launched, create_op, end_launched_op
from ._sandbox_options import DEFAULT_SANDBOX_TIMEOUT, CreateOptions, resolve_create_options
from ._wire import EmptyAnswer
from .errors import InvalidArgumentException, SdkException
from .pool_config import PoolConfig, PoolWarmup
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway, check_gateway_map


def pool_options(config: object, control_plane_url: object) -> tuple[PoolConfig, CreateOptions]:
    """The pool's config and what every slot is created with (every default applied).

    :raises InvalidArgumentException: for a config that is not a ``PoolConfig``, before any call
    """
    if not isinstance(config, PoolConfig):
        raise InvalidArgumentException("SandboxPool: config: must be a PoolConfig", "config")
    options = resolve_create_options(
        template=config.template,
        allow_internet_access=config.allow_internet_access,
        timeout=DEFAULT_SANDBOX_TIMEOUT,
        memory_mb=None,
        cpus=None,
        control_plane_url=control_plane_url,
        request_timeout=None,
    )
    return config, options


def prepare_call(launched: Launched, warmup: PoolWarmup) -> Call[EmptyAnswer]:
    """sandboxd's ``POST /v1/agent/prepare``: reads the runtime into the page cache."""
    peer = daemon_calls.daemon(launched.daemon_url)
    body = {"runtime": warmup.runtime}
    return Call(peer, "POST", "/v1/agent/prepare", model_parser(EmptyAnswer), launched.access_token, body)


def launch_slot_op(options: CreateOptions, warmup: PoolWarmup | None) -> Op[Launched]:
    """Launches a slot and warms it up; a failed warm-up leaves a cold slot, never none."""
    launched: Launched = yield from create_op(options)
    if warmup is not None:
        try:
            yield prepare_call(launched, warmup)
        except SdkException:
            pass
    return launched


def ready_op(launched: Launched) -> Op[Launched]:
    """An operation that makes no call: a slot already launched."""
    return launched
    yield  # a generator


def take_options(
    base: CreateOptions, gateways: object, secret_cache: object, keep_on_failure: object
) -> CreateOptions:
    """``pool.take``'s options checked (before any call), as the options a taken handle was created
    with: the pool's and its gateways (``reincarnate`` creates with them).

    :raises InvalidArgumentException: for a malformed option
    """
    check = Checker("pool.take")
    routes = check_gateway_map(check, ("gateways",), {} if gateways is None else gateways)
    if secret_cache is not None and not isinstance(secret_cache, SecretCache):
        check.add(("secret_cache",), "must be a SecretCache")
    check_bool(check, ("keep_on_failure",), keep_on_failure)
    check.done()
    cache = secret_cache if isinstance(secret_cache, SecretCache) else SecretCache()
    changes: dict[str, Any] = {"gateways": routes, "secret_cache": cache, "keep_on_failure": keep_on_failure}
    return dataclasses.replace(base, **changes)


#: The handle a sync pool's ``take`` opens on a slot.
H = TypeVar("H")


class SlotPool(Generic[H]):
    """The slots of a sync pool (``sdk.sandbox_pool.SandboxPool``, a ``SlotPool[Sandbox]``): launched (and
    warmed) in background threads as soon as the pool is made and after every take; ``close()`` ends
    every slot not taken. ``take`` is the handle's: it opens an ``H`` on a slot."""

    def __init__(self, config: PoolConfig, *, control_plane_url: str | None = None) -> None:
        """:raises InvalidArgumentException: for a malformed config or URL, before any call"""
        self.config, self._options = pool_options(config, control_plane_url)
        self._slots: list[Launched] = []
        self._filling = 0
        self._closed = False
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._fill()

    @property
    def ready(self) -> int:
        """Hot slots ready now."""
        return len(self._slots)

    def take(
        self,
        *,
        gateways: Mapping[str, SecretGateway] | None = None,
        secret_cache: SecretCache | None = None,
        keep_on_failure: bool = False,
    ) -> H:
        """Hands over a hot slot as a handle with ``gateways`` open on it (the subclass's)."""
        raise NotImplementedError

    def _take_slot(
        self, gateways: object, secret_cache: object, keep_on_failure: object
    ) -> tuple[Launched, CreateOptions]:
        """``take``'s options checked (before any call), and a hot slot, or a sandbox launched now when
        none is ready; the pool refills."""
        creating = take_options(self._options, gateways, secret_cache, keep_on_failure)
        with self._lock:
            slot = self._slots.pop(0) if self._slots else None
        if slot is None:
            transport = Transport(creating.request_timeout)
            try:
                slot = drive(launch_slot_op(self._options, None), transport)
            finally:
                transport.close()
        self._fill()
        return slot, creating

    def close(self) -> None:
        """Stops refilling and ends every hot slot not taken (also those still being launched)."""
        with self._lock:
            self._closed = True
            slots, self._slots = self._slots, []
        for slot in slots:
            self._end(slot)
        for thread in list(self._threads):
            thread.join(timeout=120)

    def _end(self, slot: Launched) -> None:
        transport = Transport(slot.request_timeout)
        try:
            drive(end_launched_op(slot), transport)
        except Exception:
            pass  # already ended: nothing is left to end
        finally:
            transport.close()

    def _fill(self) -> None:
        with self._lock:
            self._threads = [thread for thread in self._threads if thread.is_alive()]
            while not self._closed and len(self._slots) + self._filling < self.config.size:
                self._filling += 1
                thread = threading.Thread(target=self._launch, name="sdk-pool-slot", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _launch(self) -> None:
        transport = Transport(self._options.request_timeout)
        slot: Launched | None = None
        try:
            slot = drive(launch_slot_op(self._options, self.config.warmup), transport)
        except Exception:
            pass  # a failed launch leaves the slot empty; the next take refills
        finally:
            transport.close()
        with self._lock:
            self._filling -= 1
            keep = slot is not None and not self._closed
            if keep and slot is not None:
                self._slots.append(slot)
        if slot is not None and not keep:
            self._end(slot)



class AsyncSlotPool:
    """The slots of an async pool (``sdk.async_sandbox.AsyncSandboxPool``): as :class:`SlotPool`, launched
    by tasks of the event loop the pool was made in."""

    def __init__(self, config: PoolConfig, *, control_plane_url: str | None = None) -> None:
        """:raises InvalidArgumentException: for a malformed config or URL, before any call
        :raises RuntimeError: outside a running event loop"""
        self.config, self._options = pool_options(config, control_plane_url)
        self._loop = asyncio.get_running_loop()
        self._slots: list[Launched] = []
        self._filling = 0
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._fill()

    @property
    def ready(self) -> int:
        """Hot slots ready now."""
        return len(self._slots)

    async def _take_slot(
        self, gateways: object, secret_cache: object, keep_on_failure: object
    ) -> tuple[Launched, CreateOptions]:
        """As :meth:`SlotPool._take_slot`, awaited."""
        creating = take_options(self._options, gateways, secret_cache, keep_on_failure)
        slot = self._slots.pop(0) if self._slots else None
        if slot is None:
            transport = AsyncTransport(creating.request_timeout)
            try:
                slot = await adrive(launch_slot_op(self._options, None), transport)
            finally:
                await transport.aclose()
        self._fill()
        return slot, creating

    async def close(self) -> None:
        """Stops refilling and ends every hot slot not taken (also those still being launched)."""
        self._closed = True
        slots, self._slots = self._slots, []
        await asyncio.gather(*(self._end(slot) for slot in slots))
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _end(self, slot: Launched) -> None:
        transport = AsyncTransport(slot.request_timeout)
        try:
            await adrive(end_launched_op(slot), transport)
        except Exception:
            pass  # already ended: nothing is left to end
        finally:
            await transport.aclose()

    def _fill(self) -> None:
        while not self._closed and len(self._slots) + self._filling < self.config.size:
            self._filling += 1
            task = self._loop.create_task(self._launch())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _launch(self) -> None:
        transport = AsyncTransport(self._options.request_timeout)
        slot: Launched | None = None
        try:
            slot = await adrive(launch_slot_op(self._options, self.config.warmup), transport)
        except Exception:
            pass  # a failed launch leaves the slot empty; the next take refills
        finally:
            await transport.aclose()
            self._filling -= 1
        if slot is None:
            return
        if self._closed:
            await self._end(slot)
        else:
            self._slots.append(slot)
