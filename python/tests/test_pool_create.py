"""``Sandbox.create(pool=...)`` and ``AsyncSandbox.create(pool=...)`` (``sdk/sandbox-options.ts``,
``sdk/sandbox-lifecycle.ts``): the sandbox is ``pool.take()``'s (a hot slot, created with the pool's
options, whatever else ``create`` is given), and ``gateways``, ``secrets`` and ``persist`` are refused
with a pool before any call, as is a pool of the other kind. Against the session's control plane;
every test ends the sandboxes it created."""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from conftest import ControlPlane
from sdk import (
    AsyncSandbox,
    AsyncSandboxPool,
    InvalidArgumentException,
    PoolConfig,
    S3Prefix,
    Sandbox,
    SandboxPool,
    SecretGateway,
)

GATEWAY = SecretGateway("https://upstream.example", headers={"x-api-key": "llm-key"}, allow=[("GET", "/v1/*")])
ROLE = "arn:aws:iam::123456789012:role/sandbox-home"

#: ``create`` options refused with a pool: the option, and the field and message of the refusal.
REFUSED: list[tuple[dict[str, Any], str, str]] = [
    ({"gateways": {"llm": GATEWAY}}, "gateways", "is not accepted with pool; use pool.take(gateways=...)"),
    ({"secrets": {"GITHUB_TOKEN": "github-token"}}, "secrets", "is not accepted with pool"),
    ({"persist": S3Prefix("team-sandboxes", "homes", "alice"), "execution_role_arn": ROLE}, "persist",
     "is not accepted with pool"),
]


def wait_until(ready: Callable[[], bool], seconds: float = 60) -> None:
    """Polls ``ready`` until it holds (fails after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_create_with_a_pool_takes_its_hot_slot(control_plane: ControlPlane) -> None:
    """The sandbox is the pool's hot slot, with the pool's options; the pool refills."""
    before = control_plane.live_ids()
    config = PoolConfig(1, "sdk-base-caps", allow_internet_access=False)
    with SandboxPool(config) as pool:
        wait_until(lambda: pool.ready == 1)
        slot_ids = control_plane.live_ids() - before
        # The other options are the pool's (as in TypeScript): the slot was launched with them.
        with Sandbox.create(pool=pool, template="sdk-base", allow_internet_access=True) as sbx:
            assert {sbx.sandbox_id} == slot_ids
            info = sbx.get_info()
            assert (info.template, info.allow_internet_access) == ("sdk-base-caps", False)
            assert sbx.commands.run("echo pooled").stdout == "pooled\n"
        wait_until(lambda: pool.ready == 1)  # refilled after the take
    assert control_plane.live_ids() == before


@pytest.mark.parametrize("options, field, rule", REFUSED, ids=[case[1] for case in REFUSED])
def test_create_refuses_with_a_pool_before_any_call(
    control_plane: ControlPlane, options: dict[str, Any], field: str, rule: str
) -> None:
    """Refused with the option's field and rule; no slot taken, nothing launched."""
    with SandboxPool(PoolConfig(1, "sdk-base")) as pool:
        wait_until(lambda: pool.ready == 1)
        launched = control_plane.live_ids()
        with pytest.raises(InvalidArgumentException) as refused:
            Sandbox.create(pool=pool, **options)
        assert refused.value.field == field
        assert f"{field}: {rule}" in refused.value.message
        assert (pool.ready, control_plane.live_ids()) == (1, launched)  # no slot taken, nothing launched


def test_create_refuses_what_is_not_its_pool(control_plane: ControlPlane) -> None:
    """``pool`` must be a ``SandboxPool`` (checked before any call)."""
    before = control_plane.live_ids()
    for pool in ("a pool", object()):
        with pytest.raises(InvalidArgumentException) as refused:
            Sandbox.create(pool=pool)  # type: ignore[arg-type]
        assert refused.value.field == "pool"
        assert "pool: must be a SandboxPool" in refused.value.message
    assert control_plane.live_ids() == before


async def test_async_create_with_a_pool(control_plane: ControlPlane) -> None:
    """``AsyncSandbox.create(pool=...)``: the same refusals, an ``AsyncSandboxPool`` only, the slot taken."""
    before = control_plane.live_ids()
    async with AsyncSandboxPool(PoolConfig(1, "sdk-base")) as pool:
        for options, field, _ in REFUSED:
            with pytest.raises(InvalidArgumentException) as refused:
                await AsyncSandbox.create(pool=pool, **options)
            assert refused.value.field == field
        with SandboxPool(PoolConfig(1, "sdk-base")) as sync_pool:
            with pytest.raises(InvalidArgumentException) as wrong:
                await AsyncSandbox.create(pool=sync_pool)  # type: ignore[arg-type]
            assert wrong.value.field == "pool"
            assert "pool: must be an AsyncSandboxPool" in wrong.value.message
            with pytest.raises(InvalidArgumentException) as wrong_sync:
                Sandbox.create(pool=pool)  # type: ignore[arg-type]
            assert "pool: must be a SandboxPool" in wrong_sync.value.message
        async with await AsyncSandbox.create(pool=pool) as sbx:
            assert (await sbx.commands.run("echo pooled")).stdout == "pooled\n"
            assert (await sbx.get_info()).template == "sdk-base"
    assert control_plane.live_ids() == before
