"""``Sandbox``: the sync handle on one isolated sandbox (``sdk/sandbox.ts``; defined in
``sdk._sandbox_handle``), and ``SandboxPool``, whose ``take`` opens one (defined in ``sdk.sandbox_pool``):
the module users import them from, as ``sdk`` also exports them."""

from __future__ import annotations

from ._sandbox_handle import Sandbox as Sandbox
from .sandbox_pool import SandboxPool as SandboxPool
