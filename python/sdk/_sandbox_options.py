"""The options of ``Sandbox.create`` and ``Sandbox.connect``, checked before any call with the rules of
``sdk/sandbox-options.ts`` and ``sdk/sandbox-lifecycle.ts``: template, egress, limits, gateways, secrets,
credentials, a pool, a home to persist, a snapshot to start from; a sandbox id and its token.

Python takes durations in seconds (SPEC "Sandbox handle": ``timeout`` in seconds, TypeScript's
``timeoutMs`` in milliseconds); the wire carries milliseconds. A failure is an
``InvalidArgumentException`` whose message names the call, each failed field (snake_case) and its rule,
and whose ``field`` is the first failed one; never a value. The checks of the calls on a sandbox that
exists are in ``sdk._lifecycle_options``, those of commands and terminals in ``sdk._command_options``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Final, Mapping, cast

from ._check import Checker, check_bool, check_int, matches, whole
from ._option_checks import as_number, check_request_timeout, check_sandbox_call, check_seconds, check_url
from ._rules import IDLE_SECONDS, ROLE_ARN, SANDBOX_MAX_TIMEOUT_MS, SNAPSHOT_ID, TEMPLATE_NAME
from ._secret_envs import check_secrets_map
from ._sandbox_metadata import check_metadata
from ._snapshot_facts import SnapshotFacts
from ._wire import ISOLATIONS, CreateSandboxRequest, IdlePolicyBody, Isolation
from .credential_rules import CredentialRule, check_credential_rules
from .egress_policy import EgressPolicy, check_egress
from .errors import AuthenticationException, InvalidArgumentException
from .s3_prefix import S3Prefix
from .secret_cache import SecretCache
from .webhooks import check_webhook_url
from .secret_gateway import SecretGateway, SecretSource, check_gateway_map

#: Sandbox lifetime by default, seconds (``rules/limits.ts``).
DEFAULT_SANDBOX_TIMEOUT: Final = 3600
#: ``Sandbox.create``'s template and egress when not given.
DEFAULT_TEMPLATE: Final = "sdk-base"
DEFAULT_ALLOW_INTERNET_ACCESS: Final = True


def _isolation(check: Checker, value: object) -> Isolation | None:
    """``isolation``: ``namespace``, ``gvisor`` or None (not chosen)."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in ISOLATIONS:
        check.add(("isolation",), f"must be {' or '.join(ISOLATIONS)}")
        return None
    return cast(Isolation, value)


def isolation_from_environment() -> Isolation | None:
    """``SDK_ISOLATION`` (``namespace`` or ``gvisor``), as ``protocol/isolation-environment.ts`` reads it;
    None when unset or empty.

    :raises InvalidArgumentException: (``field`` ``isolation``) for another value
    """
    value = os.environ.get("SDK_ISOLATION", "")
    if value == "":
        return None
    if value not in ISOLATIONS:
        raise InvalidArgumentException(
            f"SDK_ISOLATION: must be {' or '.join(ISOLATIONS)}, not {json.dumps(value, ensure_ascii=False)}",
            "isolation",
        )
    return cast(Isolation, value)


@dataclass(frozen=True)
class CreateOptions:
    """``Sandbox.create``'s options, checked, with defaults applied."""

    template: str
    allow_internet_access: bool
    timeout_ms: int
    memory_mb: int | None
    cpus: float | None
    control_plane_url: str | None
    request_timeout: float
    #: Route name to definition; empty without gateways.
    gateways: Mapping[str, SecretGateway] = field(default_factory=dict)
    #: Environment variable name to secret (``secrets=``).
    secrets: Mapping[str, SecretSource] = field(default_factory=dict)
    #: Where gateway secrets and ``secrets`` are read (a cache of the local default store when None).
    secret_cache: SecretCache | None = None
    keep_on_failure: bool = False
    #: Where the home is restored from and saved (``persist``), with the role that reaches it.
    persist: S3Prefix | None = None
    execution_role_arn: str | None = None
    #: ``namespace`` or ``gvisor`` (the argument, else ``SDK_ISOLATION``); None: the control plane's.
    isolation: Isolation | None = None
    #: The snapshot the sandbox starts from (its id), or None.
    snapshot: str | None = None
    #: Whether the caller gave ``template`` and ``allow_internet_access`` (from a snapshot, those not
    #: given are the snapshot's sandbox's).
    template_given: bool = True
    allow_internet_access_given: bool = True
    #: The egress policy the caller gave (normalised), or None: ``allow_internet_access`` decides.
    egress: EgressPolicy | None = None
    #: The credential broker's rules (``credentials=``), hosts normalised; empty without them.
    credentials: tuple[CredentialRule, ...] = ()
    #: The sandbox's metadata (``metadata=``), or None: not given.
    metadata: Mapping[str, str] | None = None
    #: Where the sandbox's lifecycle events are POSTed, signed (``webhook_url=``), or None: not given.
    webhook_url: str | None = None

    def body(self) -> dict[str, Any]:
        """The body of ``POST /v1/sandboxes`` (the template's memory and CPUs when not given, and
        ``isolation``, ``egress``, ``metadata`` and ``webhook_url`` only when given). From a snapshot,
        ``template`` and ``allow_internet_access`` are sent only when the caller gave them
        (``sdk/sandbox-lifecycle.ts``)."""
        fresh = self.snapshot is None
        return CreateSandboxRequest(
            template=self.template if fresh or self.template_given else None,
            isolation=self.isolation,
            snapshot=self.snapshot,
            allow_internet_access=(
                self.allow_internet_access if fresh or self.allow_internet_access_given else None
            ),
            egress=None if self.egress is None else self.egress._wire(),
            timeout_ms=self.timeout_ms,
            idle_policy=IdlePolicyBody(max_idle_seconds=IDLE_SECONDS, auto_resume=True),
            memory_mb=self.memory_mb,
            cpus=self.cpus,
            metadata=None if self.metadata is None else dict(self.metadata),
            webhook_url=self.webhook_url,
        ).wire()


def resolve_create_options(
    *,
    template: object,
    allow_internet_access: object,
    timeout: object,
    memory_mb: object,
    cpus: object,
    control_plane_url: object,
    request_timeout: object,
    isolation: object = None,
    gateways: object = None,
    secrets: object = None,
    secret_cache: object = None,
    keep_on_failure: object = False,
    persist: object = None,
    execution_role_arn: object = None,
    pool: object = None,
    pool_kind: type[object] | None = None,
    pool_name: str | None = None,
    snapshot: object = None,
    egress: object = None,
    credentials: object = None,
    metadata: object = None,
    webhook_url: object = None,
) -> CreateOptions:
    """Checks every option of ``Sandbox.create``; raises ``InvalidArgumentException`` before any call.
    ``pool`` must be a ``pool_kind`` (the pool class of the calling handle: these checks know no handle;
    a refusal names it ``pool_name``, by default the class's own name) and excludes ``gateways``, ``secrets``, ``credentials``, ``persist``, ``snapshot`` and ``egress``.
    ``egress`` is an ``EgressPolicy`` or a mapping of its options (checked with its rules, the fields
    named ``egress.allow[0]``...); with ``allow_internet_access=False`` only mode ``closed``.
    ``credentials`` is a list of ``CredentialRule`` values or mappings of their options
    (``credentials[0].host``...). ``metadata`` is a mapping of strings (``sdk._sandbox_metadata``);
    ``webhook_url`` an http(s) URL (``sdk.webhooks``), both ignored with ``pool`` as in TypeScript.
    ``template`` and ``allow_internet_access`` None: not given (``sdk-base``, open egress; from a
    ``snapshot``, the snapshot's). Without ``isolation``, ``SDK_ISOLATION`` (read once the options pass,
    as ``sdk/sandbox-options.ts`` does), but not from a snapshot, which fixes the isolation."""
    check = Checker("Sandbox.create")
    if template is not None and not matches(TEMPLATE_NAME, template):
        check.add(("template",), "must be an image name [a-z0-9._-] or an ARN")
    if allow_internet_access is not None:
        check_bool(check, ("allow_internet_access",), allow_internet_access)
    policy = check_egress(check, ("egress",), egress)
    from_snapshot = _snapshot(check, snapshot)
    chosen = _isolation(check, isolation)
    routes = check_gateway_map(check, ("gateways",), {} if gateways is None else gateways)
    envs = check_secrets_map(check, ("secrets",), {} if secrets is None else secrets)
    rules = check_credential_rules(check, ("credentials",), credentials)
    timeout_ms = check_seconds(check, "timeout", timeout, 0.001, SANDBOX_MAX_TIMEOUT_MS / 1000)
    check_bool(check, ("keep_on_failure",), keep_on_failure)
    memory = None
    if memory_mb is not None and check_int(check, ("memory_mb",), memory_mb, 32, 16_384):
        memory = whole(memory_mb)
    cpu = None if cpus is None else as_number(cpus)
    if cpus is not None and cpu is None:
        check.add(("cpus",), "must be a number")
    elif cpu is not None and not 0.05 <= cpu <= 64:
        check.add(("cpus",), "must be at least 0.05" if cpu < 0.05 else "must be at most 64")
    tags = check_metadata(check, ("metadata",), metadata)
    webhook = check_webhook_url(check, ("webhook_url",), webhook_url)
    url = check_url(check, "control_plane_url", control_plane_url)
    if secret_cache is not None and not isinstance(secret_cache, SecretCache):
        check.add(("secret_cache",), "must be a SecretCache")
    seconds = check_request_timeout(check, request_timeout)
    _check_pool(check, pool, pool_kind, pool_name, bool(routes), bool(envs))
    if pool is not None and isinstance(credentials, (list, tuple)) and credentials:
        check.add(("credentials",), "is not accepted with pool")  # pool.take sends none: they would be lost
    _check_persist(check, persist, execution_role_arn)
    if pool is not None and persist is not None:
        check.add(("persist",), "is not accepted with pool")  # a pool's slots have no home to restore
    if pool is not None and snapshot is not None:
        check.add(("snapshot",), "is not accepted with pool")
    if pool is not None and egress is not None:
        check.add(("egress",), "is not accepted with pool")  # a pool's slots have the pool's egress
    if allow_internet_access is False and policy is not None and policy.mode != "closed":
        check.add(("egress",), "must be mode 'closed' with allow_internet_access=False")
    check.done()
    cache = secret_cache if isinstance(secret_cache, SecretCache) else None
    if isolation is not None:
        chosen_isolation = chosen
    else:  # a snapshot fixes the isolation: SDK_ISOLATION is for sandboxes started from their template
        chosen_isolation = isolation_from_environment() if from_snapshot is None else None
    return CreateOptions(
        DEFAULT_TEMPLATE if template is None else str(template),
        DEFAULT_ALLOW_INTERNET_ACCESS if allow_internet_access is None else bool(allow_internet_access),
        timeout_ms, memory, cpu, url, seconds, routes, envs, cache, bool(keep_on_failure),
        persist=persist if isinstance(persist, S3Prefix) else None,
        execution_role_arn=execution_role_arn if isinstance(execution_role_arn, str) else None,
        isolation=chosen_isolation,
        snapshot=from_snapshot,
        template_given=template is not None,
        allow_internet_access_given=allow_internet_access is not None,
        egress=policy,
        credentials=rules,
        metadata=tags,
        webhook_url=webhook,
    )


def _snapshot(check: Checker, value: object) -> str | None:
    """``snapshot``: None, a snapshot id, or a ``Snapshot``/``AsyncSnapshot`` (its id)."""
    if value is None:
        return None
    if isinstance(value, SnapshotFacts):
        return value.id
    if not matches(SNAPSHOT_ID, value):
        check.add(("snapshot",), "must be a snapshot id (snap_ and 16 hex digits) or a Snapshot")
        return None
    return str(value)


def _check_pool(
    check: Checker, pool: object, kind: type[object] | None, name: str | None, gateways: bool, secrets: bool
) -> None:
    """``pool`` is a ``kind`` (``sdk/sandbox-options.ts``): its sandbox comes from ``pool.take()``, so
    ``gateways`` go to ``take`` and a pooled sandbox has no ``secrets``. ``kind`` is the pool class of
    the handle that checks (the slots' class ``SlotPool``, named ``SandboxPool``, for ``Sandbox.create``;
    ``AsyncSandboxPool`` for ``AsyncSandbox.create``), given by the handle: these checks know no handle
    or pool class; None: no pool is accepted. A refusal names the class ``name``, else its own name."""
    if pool is None:
        return
    if kind is None:
        check.add(("pool",), "is not accepted here")
    elif not isinstance(pool, kind):
        name = name or kind.__name__
        check.add(("pool",), f"must be a{'n' if name[0] in 'AEIOU' else ''} {name}")
    if gateways:
        check.add(("gateways",), "is not accepted with pool; use pool.take(gateways=...)")
    if secrets:
        check.add(("secrets",), "is not accepted with pool")


def _check_persist(check: Checker, persist: object, execution_role_arn: object) -> None:
    """``persist`` is an ``S3Prefix`` and needs ``execution_role_arn``, a role ARN (SPEC
    "Authentication" 3)."""
    if persist is not None and not isinstance(persist, S3Prefix):
        check.add(("persist",), "must be an S3Prefix")
    if execution_role_arn is not None and not matches(ROLE_ARN, execution_role_arn):
        check.add(("execution_role_arn",), "must be a role ARN")
    if persist is not None and execution_role_arn is None:
        check.add(("execution_role_arn",), "is required with persist")


@dataclass(frozen=True)
class ConnectOptions:
    """``Sandbox.connect``'s options, checked; the token from the argument or ``SDK_ACCESS_TOKEN``."""

    sandbox_id: str
    access_token: str = field(repr=False)
    control_plane_url: str | None
    request_timeout: float


def resolve_connect_options(
    sandbox_id: object, *, access_token: object, control_plane_url: object, request_timeout: object
) -> ConnectOptions:
    """Checks ``Sandbox.connect``'s arguments.

    :raises InvalidArgumentException: for a malformed one, before any call
    :raises AuthenticationException: without a token (argument or ``SDK_ACCESS_TOKEN``)
    """
    check = Checker("Sandbox.connect")
    url, seconds = check_sandbox_call(check, sandbox_id, access_token, control_plane_url, request_timeout)
    check.done()
    token = access_token if isinstance(access_token, str) else os.environ.get("SDK_ACCESS_TOKEN", "")
    if token == "":
        raise AuthenticationException(
            "Sandbox.connect needs the access token (access_token or SDK_ACCESS_TOKEN)"
        )
    return ConnectOptions(str(sandbox_id), token, url, seconds)
