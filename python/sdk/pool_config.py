"""``PoolConfig`` and ``agent_pool_warmup``: warm sandbox pools (SPEC "Persistence and pools")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._check import Checker, check_bool, check_int, check_string, expected, fail, whole
from ._rules import RUNTIME_NAMES, TEMPLATE_NAME

#: Runtime names.
RuntimeName = Literal["runtime_a", "runtime_b"]


@dataclass(frozen=True)
class PoolWarmup:
    """A warm-up step run in each pooled sandbox before it is handed out; made by ``agent_pool_warmup``."""

    kind: Literal["agent"]
    runtime: RuntimeName


def agent_pool_warmup(runtime: RuntimeName) -> PoolWarmup:
    """The warm-up that prepares an agent runtime in every pooled sandbox.

    Example: ``PoolConfig(4, "sdk-agent", warmup=agent_pool_warmup("runtime_a"))``
    """
    if runtime not in RUNTIME_NAMES:
        fail("agent_pool_warmup", (), "must be runtime_a or runtime_b")
    return PoolWarmup("agent", runtime)


@dataclass(frozen=True, init=False)
class PoolConfig:
    """How many hot sandboxes to keep (``size`` 1-300), of which ``template`` and egress
    (``allow_internet_access``, default open), and how to warm them (``warmup``)."""

    size: int
    template: str
    allow_internet_access: bool
    warmup: PoolWarmup | None

    def __init__(
        self, size: int, template: str, allow_internet_access: bool = True, warmup: PoolWarmup | None = None
    ) -> None:
        check = Checker("PoolConfig")
        if check_int(check, ("size",), size, 1, 300):
            object.__setattr__(self, "size", whole(size))
        check_string(check, ("template",), template, TEMPLATE_NAME, "must be an image name [a-z0-9._-] or an ARN")
        check_bool(check, ("allow_internet_access",), allow_internet_access)
        if warmup is not None and not isinstance(warmup, PoolWarmup):
            check.add(("warmup",), expected("made by agent_pool_warmup()", warmup))
        check.done()
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "allow_internet_access", allow_internet_access)
        object.__setattr__(self, "warmup", warmup)
