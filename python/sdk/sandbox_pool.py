"""``SandboxPool`` and ``AsyncSandboxPool`` (SPEC "SDK operations"; ``sdk/sandbox-pool.ts``): hot slots
of launched sandboxes, warmed before they are handed out, without gateways and without a handle;
``take`` opens a handle on one and its gateways then, so a slot never carries secrets before it is
taken. Both pools share every step (``sdk._pool_core``); the sync pool fills its slots in background
threads, the async pool in tasks of its event loop.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Mapping

from ._http import AsyncTransport, Transport, adrive, drive
from ._pool_core import end_slot_op, launch_slot_op, pool_options, ready_op, take_options
from ._sandbox_core import Launched
from .async_sandbox import AsyncSandbox
from .pool_config import PoolConfig
from .sandbox import Sandbox
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway


class SandboxPool:
    """A pool of hot sandboxes (sync). Slots are launched (and warmed) in the background as soon as the
    pool is made and after every take; ``close()`` (or ``with``) ends every slot not taken.

    Example::

        config = PoolConfig(4, "sdk-agent", warmup=agent_pool_warmup("runtime_a"))
        with SandboxPool(config) as pool:
            with pool.take(gateways={"llm": gateway}) as sbx:
                ...
    """

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
    ) -> Sandbox:
        """Hands over a hot slot (or a new sandbox when none is ready) and opens ``gateways`` on it.

        :raises InvalidArgumentException: for a malformed option, before any call
        :raises SecretNotFoundException: / ``SandboxException`` as ``Sandbox.create`` does; the sandbox
            is then ended unless ``keep_on_failure``
        """
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
        return Sandbox._open(ready_op(slot), creating.request_timeout, creating)

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
            drive(end_slot_op(slot), transport)
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

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class AsyncSandboxPool:
    """A pool of hot sandboxes (async): the same as :class:`SandboxPool`, awaited. Make it inside a
    running event loop (its slots are launched by tasks of that loop).

    Example::

        async with AsyncSandboxPool(PoolConfig(2, "sdk-base")) as pool:
            sbx = await pool.take()
    """

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

    async def take(
        self,
        *,
        gateways: Mapping[str, SecretGateway] | None = None,
        secret_cache: SecretCache | None = None,
        keep_on_failure: bool = False,
    ) -> AsyncSandbox:
        """Hands over a hot slot (or a new sandbox when none is ready) and opens ``gateways`` on it; as
        :meth:`SandboxPool.take`."""
        creating = take_options(self._options, gateways, secret_cache, keep_on_failure)
        slot = self._slots.pop(0) if self._slots else None
        if slot is None:
            transport = AsyncTransport(creating.request_timeout)
            try:
                slot = await adrive(launch_slot_op(self._options, None), transport)
            finally:
                await transport.aclose()
        self._fill()
        return await AsyncSandbox._open(ready_op(slot), creating.request_timeout, creating)

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
            await adrive(end_slot_op(slot), transport)
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

    async def __aenter__(self) -> AsyncSandboxPool:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()
