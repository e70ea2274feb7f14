"""``SandboxPool`` and ``AsyncSandboxPool`` (SPEC "SDK operations"; ``sdk/sandbox-pool.ts``): hot slots
of launched sandboxes, warmed before they are handed out, without gateways and without a handle;
``take`` opens a handle on one and its gateways then, so a slot never carries secrets before it is
taken. Both pools share every step and keep their slots in ``sdk._pool_core`` (the sync pool fills its
slots in background threads, the async pool in tasks of its event loop); each is defined beside the
handle its ``take`` opens, ``SandboxPool`` in ``sdk.sandbox`` and ``AsyncSandboxPool`` in
``sdk.async_sandbox`` (so that ``Sandbox.create(pool=...)`` knows its pool without the two modules
importing each other), and is importable from here as it always was.
"""

from __future__ import annotations

from .async_sandbox import AsyncSandboxPool as AsyncSandboxPool
from .sandbox import SandboxPool as SandboxPool
