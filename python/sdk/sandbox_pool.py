"""``SandboxPool`` and ``AsyncSandboxPool`` (SPEC "SDK operations"; ``sdk/sandbox-pool.ts``): hot slots
of launched sandboxes, warmed before they are handed out, without gateways and without a handle;
``take`` opens a handle on one and its gateways then, so a slot never carries secrets before it is
taken. Both pools share every step and keep their slots in ``sdk._pool_core`` (the sync pool fills its
slots in background threads, the async pool in tasks of its event loop).

``SandboxPool`` is defined here, over the handle its ``take`` opens (``sdk._sandbox_handle``), which
takes it in ``Sandbox.create(pool=...)`` by its slots' class, ``SlotPool``, without importing this
module; ``sdk.sandbox`` imports it from here. ``AsyncSandboxPool`` is defined beside its handle in
``sdk.async_sandbox`` and importable from here as it always was.
"""

from __future__ import annotations

from types import TracebackType
from typing import Mapping

from ._pool_core import SlotPool, ready_op
from ._sandbox_handle import Sandbox
from .async_sandbox import AsyncSandboxPool as AsyncSandboxPool
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway


class SandboxPool(SlotPool[Sandbox]):
    """A pool of hot sandboxes (sync). Slots are launched (and warmed) in the background as soon as the
    pool is made and after every take; ``close()`` (or ``with``) ends every slot not taken. Also
    importable from ``sdk.sandbox`` and ``sdk``; over the slots of ``sdk._pool_core``.

    Example::

        config = PoolConfig(4, "sdk-agent", warmup=agent_pool_warmup("runtime_a"))
        with SandboxPool(config) as pool:
            with pool.take(gateways={"llm": gateway}) as sbx:
                ...
    """

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
        slot, creating = self._take_slot(gateways, secret_cache, keep_on_failure)
        return Sandbox._open(ready_op(slot), creating.request_timeout, creating)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
