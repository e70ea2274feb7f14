"""What ``SandboxPool`` and ``AsyncSandboxPool`` share (``sdk/sandbox-pool.ts``): the options every slot
is launched with, a slot's launch and warm-up, its end, and ``take``'s options, as operations
(``sdk._http.Op``) that the sync or the async pool drives.

A slot is a launched sandbox without gateways and without a handle; ``take`` opens a handle on one and
its gateways then, so a slot never carries secrets before it is taken.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import _control_plane as plane_calls
from . import _daemon as daemon_calls
from ._check import Checker, check_bool
from ._http import Call, Op, model_parser
from ._sandbox_core import Launched, create_op
from ._sandbox_options import DEFAULT_SANDBOX_TIMEOUT, CreateOptions, resolve_create_options
from ._wire import EmptyAnswer, SandboxInfo
from .errors import InvalidArgumentException, SdkException
from .pool_config import PoolConfig, PoolWarmup
from .secret_cache import SecretCache
from .secret_gateway import check_gateway_map


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


def end_slot_op(launched: Launched) -> Op[SandboxInfo]:
    """Ends a slot no handle was opened on."""
    plane = plane_calls.control_plane(launched.plane_url)
    info: SandboxInfo = yield plane_calls.kill_call(plane, launched.sandbox_id, launched.access_token)
    return info


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
