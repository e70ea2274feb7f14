"""The options of ``Sandbox.create``, ``Sandbox.connect``, ``Sandbox.get_info``, ``Sandbox.list``,
``sbx.set_timeout``, ``get_metrics``, ``commands.run`` and ``pty.create``, checked before any call with
the rules of ``sdk/sandbox-options.ts``, ``sdk/sandbox-lifecycle.ts``, ``sdk/sandbox.ts``,
``sdk/sandbox-metrics.ts``, ``sdk/commands.ts`` and ``sdk/pty.ts``.

Python takes durations in seconds (SPEC "Sandbox handle": ``timeout`` in seconds, TypeScript's
``timeoutMs`` in milliseconds); the wire carries milliseconds. A failure is an
``InvalidArgumentException`` whose message names the call, each failed field (snake_case) and its rule,
and whose ``field`` is the first failed one; never a value.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Final, Mapping, cast

import httpx

from ._accounts import ACCOUNT_RULE, account_field, check_account, is_account
from ._check import Checker, check_bool, check_int, is_number, is_whole, matches, whole
from ._http import DEFAULT_REQUEST_TIMEOUT
from ._rules import ENV_NAME, ENV_NAME_RULE, IDLE_SECONDS, SANDBOX_MAX_TIMEOUT_MS, SNAPSHOT_ID, TEMPLATE_NAME
from ._secret_envs import check_secrets_map
from ._sandbox_metadata import check_metadata
from ._snapshot_facts import SnapshotFacts
from ._wire import ISOLATIONS, CreateSandboxRequest, IdlePolicyBody, Isolation, SandboxState
from .credential_rules import CredentialRule, check_credential_rules
from .egress_policy import EgressPolicy, check_egress
from .errors import AuthenticationException, InvalidArgumentException
from .s3_prefix import S3Prefix
from .secret_cache import SecretCache
from .webhooks import check_webhook_url
from .secret_gateway import SecretGateway, SecretSource, check_gateway_map

#: A sandbox id: 12 hex characters.
SANDBOX_ID: Final = re.compile(r"[a-f0-9]{12}")

#: Sandbox lifetime by default, seconds (``rules/limits.ts``).
DEFAULT_SANDBOX_TIMEOUT: Final = 3600
#: ``Sandbox.create``'s template and egress when not given.
DEFAULT_TEMPLATE: Final = "sdk-base"
DEFAULT_ALLOW_INTERNET_ACCESS: Final = True

#: A callback of command output: each chunk as text.
OutputCallback = Callable[[str], object]


def _number(value: object) -> float | None:
    """``value`` as a float when it is a finite number (never a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and is_number(value) else None


def _seconds(check: Checker, name: str, value: object, least: float, most: float | None = None) -> int:
    """Seconds ``value`` as whole milliseconds (the wire's unit), within ``least`` .. ``most`` seconds."""
    seconds = _number(value)
    if seconds is None:
        check.add((name,), "must be a number of seconds")
        return 0
    if seconds < least:
        check.add((name,), f"must be at least {least:g}")
    elif most is not None and seconds > most:
        check.add((name,), f"must be at most {most:g}")
    return int(round(seconds * 1000))


def _url(check: Checker, name: str, value: object) -> str | None:
    if value is None:
        return None
    try:
        url = httpx.URL(value) if isinstance(value, str) else None
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        check.add((name,), "must be an http(s) URL")
        return None
    return str(value)


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


def _request_timeout(check: Checker, value: object) -> float:
    if value is None:
        return DEFAULT_REQUEST_TIMEOUT
    seconds = _number(value)
    if seconds is None or seconds <= 0:
        check.add(("request_timeout",), "must be a positive number of seconds")
        return DEFAULT_REQUEST_TIMEOUT
    return seconds


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
    snapshot: object = None,
    egress: object = None,
    credentials: object = None,
    metadata: object = None,
    webhook_url: object = None,
) -> CreateOptions:
    """Checks every option of ``Sandbox.create``; raises ``InvalidArgumentException`` before any call.
    ``pool`` must be a ``pool_kind`` (the pool class of the calling handle: these checks know no handle)
    and excludes ``gateways``, ``secrets``, ``credentials``, ``persist``, ``snapshot`` and ``egress``.
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
    timeout_ms = _seconds(check, "timeout", timeout, 0.001, SANDBOX_MAX_TIMEOUT_MS / 1000)
    check_bool(check, ("keep_on_failure",), keep_on_failure)
    memory = None
    if memory_mb is not None and check_int(check, ("memory_mb",), memory_mb, 32, 16_384):
        memory = whole(memory_mb)
    cpu = None if cpus is None else _number(cpus)
    if cpus is not None and cpu is None:
        check.add(("cpus",), "must be a number")
    elif cpu is not None and not 0.05 <= cpu <= 64:
        check.add(("cpus",), "must be at least 0.05" if cpu < 0.05 else "must be at most 64")
    tags = check_metadata(check, ("metadata",), metadata)
    webhook = check_webhook_url(check, ("webhook_url",), webhook_url)
    url = _url(check, "control_plane_url", control_plane_url)
    if secret_cache is not None and not isinstance(secret_cache, SecretCache):
        check.add(("secret_cache",), "must be a SecretCache")
    seconds = _request_timeout(check, request_timeout)
    _check_pool(check, pool, pool_kind, bool(routes), bool(envs))
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
    check: Checker, pool: object, kind: type[object] | None, gateways: bool, secrets: bool
) -> None:
    """``pool`` is a ``kind`` (``sdk/sandbox-options.ts``): its sandbox comes from ``pool.take()``, so
    ``gateways`` go to ``take`` and a pooled sandbox has no ``secrets``. ``kind`` is the pool class of
    the handle that checks (``SandboxPool`` for ``Sandbox.create``, ``AsyncSandboxPool`` for
    ``AsyncSandbox.create``), given by the handle: these checks know no handle or pool class; None: no
    pool is accepted."""
    if pool is None:
        return
    if kind is None:
        check.add(("pool",), "is not accepted here")
    elif not isinstance(pool, kind):
        name = kind.__name__
        check.add(("pool",), f"must be a{'n' if name[0] in 'AEIOU' else ''} {name}")
    if gateways:
        check.add(("gateways",), "is not accepted with pool; use pool.take(gateways=...)")
    if secrets:
        check.add(("secrets",), "is not accepted with pool")


#: An IAM role ARN (``rules/names.ts`` ``ROLE_ARN``).
ROLE_ARN: Final = re.compile(r"arn:[a-z0-9-]+:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}")


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
    if not matches(SANDBOX_ID, sandbox_id):
        check.add(("sandbox_id",), "must be a sandbox id (12 hex characters)")
    if access_token is not None and (not isinstance(access_token, str) or access_token == ""):
        check.add(("access_token",), "must not be empty" if access_token == "" else "must be a string")
    url = _url(check, "control_plane_url", control_plane_url)
    seconds = _request_timeout(check, request_timeout)
    check.done()
    token = access_token if isinstance(access_token, str) else os.environ.get("SDK_ACCESS_TOKEN", "")
    if token == "":
        raise AuthenticationException(
            "Sandbox.connect needs the access token (access_token or SDK_ACCESS_TOKEN)"
        )
    return ConnectOptions(str(sandbox_id), token, url, seconds)


def set_timeout_ms(timeout: object) -> int:
    """``sbx.set_timeout(timeout)``: seconds from now (at least 0.001, at most 8 h: the control plane
    also refuses past 8 h from the sandbox's creation) as the whole milliseconds of the wire, checked
    before any call."""
    check = Checker("sbx.set_timeout")
    timeout_ms = _seconds(check, "timeout", timeout, 0.001, SANDBOX_MAX_TIMEOUT_MS / 1000)
    check.done()
    return timeout_ms


@dataclass(frozen=True)
class InfoOptions:
    """``Sandbox.get_info``'s options, checked: the token is ``access_token``, else the operator key."""

    sandbox_id: str
    access_token: str | None = field(repr=False)
    control_plane_url: str | None
    request_timeout: float


def resolve_info_options(
    sandbox_id: object, *, access_token: object, control_plane_url: object, request_timeout: object
) -> InfoOptions:
    """Checks ``Sandbox.get_info``'s arguments (as ``Sandbox.connect``'s, the token optional: without it
    the operator key, ``SDK_API_KEY``).

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.get_info")
    if not matches(SANDBOX_ID, sandbox_id):
        check.add(("sandbox_id",), "must be a sandbox id (12 hex characters)")
    if access_token is not None and (not isinstance(access_token, str) or access_token == ""):
        check.add(("access_token",), "must not be empty" if access_token == "" else "must be a string")
    url = _url(check, "control_plane_url", control_plane_url)
    seconds = _request_timeout(check, request_timeout)
    check.done()
    token = access_token if isinstance(access_token, str) else None
    return InfoOptions(str(sandbox_id), token, url, seconds)


#: The latest instant a metrics range takes, ms since the epoch (JavaScript's largest safe integer).
MAX_INSTANT_MS: Final = 2**53 - 1
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS: Final = timedelta(milliseconds=1)
_INSTANT_RULE: Final = "must be an aware datetime or whole milliseconds since the epoch"


@dataclass(frozen=True)
class MetricsRange:
    """The samples ``get_metrics`` asks for: taken at or after ``start`` and at or before ``end``, whole
    milliseconds since the epoch, each None when not given (the sandbox's start; now)."""

    start: int | None = None
    end: int | None = None


def _instant(check: Checker, name: str, value: object) -> int | None:
    """``start`` / ``end`` of a metrics range as whole ms since the epoch: an aware ``datetime`` (its
    milliseconds, the microseconds below them dropped) or a whole number of ms, 0 or more. A naive
    datetime is refused: it names no instant, and nothing else in this SDK reads one as local time."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            check.add((name,), f"{_INSTANT_RULE} (a naive datetime has no time zone)")
            return None
        ms = (value - _EPOCH) // _ONE_MS
    elif is_whole(value):
        ms = whole(value)
    else:
        check.add((name,), _INSTANT_RULE)
        return None
    if ms < 0:
        check.add((name,), "must not be before the epoch")
        return None
    if ms > MAX_INSTANT_MS:
        check.add((name,), f"must be at most {MAX_INSTANT_MS} ms since the epoch")
        return None
    return ms


def _range(check: Checker, start: object, end: object) -> MetricsRange:
    """``start`` and ``end`` checked (``metricsRangeSchema``): each an instant, ``start`` not after ``end``."""
    first, last = _instant(check, "start", start), _instant(check, "end", end)
    if first is not None and last is not None and first > last:
        check.add(("start",), "must not be after end")
    return MetricsRange(first, last)


def metrics_range(start: object, end: object) -> MetricsRange:
    """``sbx.get_metrics(start, end)``'s range, checked before any call.

    :raises InvalidArgumentException: (``field`` ``start`` or ``end``) for a malformed instant or a
        ``start`` after ``end``
    """
    check = Checker("sbx.get_metrics")
    checked = _range(check, start, end)
    check.done()
    return checked


@dataclass(frozen=True)
class MetricsOptions:
    """``Sandbox.get_metrics``'s options, checked: the token is ``access_token``, else the operator key."""

    sandbox_id: str
    access_token: str | None = field(repr=False)
    control_plane_url: str | None
    request_timeout: float
    range: MetricsRange


def resolve_metrics_options(
    sandbox_id: object,
    *,
    access_token: object,
    control_plane_url: object,
    request_timeout: object,
    start: object,
    end: object,
) -> MetricsOptions:
    """Checks ``Sandbox.get_metrics``'s arguments: ``Sandbox.get_info``'s, and the range.

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.get_metrics")
    if not matches(SANDBOX_ID, sandbox_id):
        check.add(("sandbox_id",), "must be a sandbox id (12 hex characters)")
    if access_token is not None and (not isinstance(access_token, str) or access_token == ""):
        check.add(("access_token",), "must not be empty" if access_token == "" else "must be a string")
    url = _url(check, "control_plane_url", control_plane_url)
    seconds = _request_timeout(check, request_timeout)
    checked = _range(check, start, end)
    check.done()
    token = access_token if isinstance(access_token, str) else None
    return MetricsOptions(str(sandbox_id), token, url, seconds, checked)


#: Every sandbox state, as ``Sandbox.list(state=...)`` takes them.
SANDBOX_STATES: Final[tuple[SandboxState, ...]] = ("running", "suspended", "ended")


@dataclass(frozen=True)
class ListOptions:
    """``Sandbox.list``'s options, checked: the states wanted (empty: any) and the metadata entries every
    sandbox listed must hold (None: any)."""

    states: tuple[SandboxState, ...]
    metadata: Mapping[str, str] | None
    control_plane_url: str | None
    request_timeout: float


def resolve_list_options(
    *, metadata: object, state: object, control_plane_url: object, request_timeout: object
) -> ListOptions:
    """Checks ``Sandbox.list``'s arguments: ``metadata`` with the rules of a sandbox's metadata, ``state``
    a list of ``running``, ``suspended`` and ``ended``.

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.list")
    url = _url(check, "control_plane_url", control_plane_url)
    wanted = check_metadata(check, ("metadata",), metadata)
    states: list[SandboxState] = []
    if state is not None and not isinstance(state, (list, tuple)):
        check.add(("state",), "must be a list of states (running, suspended, ended)")
    for i, one in enumerate(state if isinstance(state, (list, tuple)) else ()):
        if not isinstance(one, str) or one not in SANDBOX_STATES:
            check.add(("state", i), f"must be {', '.join(SANDBOX_STATES[:-1])} or {SANDBOX_STATES[-1]}")
        else:
            states.append(cast(SandboxState, one))
    seconds = _request_timeout(check, request_timeout)
    check.done()
    return ListOptions(tuple(states), wanted, url, seconds)


@dataclass(frozen=True)
class RunOptions:
    """``commands.run``'s options, checked: ``start`` is the wire body of the command."""

    start: dict[str, Any] = field(repr=False)
    on_stdout: OutputCallback | None
    on_stderr: OutputCallback | None
    background: bool


def check_output_callbacks(
    check: Checker, on_stdout: object, on_stderr: object
) -> tuple[OutputCallback | None, OutputCallback | None]:
    """``on_stdout`` and ``on_stderr`` of ``commands.run`` and ``commands.connect``: each None or
    callable (a problem is added to ``check``)."""
    callbacks: list[OutputCallback | None] = []
    for name, callback in (("on_stdout", on_stdout), ("on_stderr", on_stderr)):
        if callback is not None and not callable(callback):
            check.add((name,), "must be callable")
        callbacks.append(callback if callable(callback) else None)
    return callbacks[0], callbacks[1]


def _envs(check: Checker, envs: object) -> dict[str, str]:
    """``envs`` of a command: None or a mapping of variable names to strings (a copy)."""
    env: dict[str, str] = {}
    if envs is not None and not isinstance(envs, Mapping):
        check.add(("envs",), "must be a mapping of names to strings")
    for name, value in envs.items() if isinstance(envs, Mapping) else []:
        if not isinstance(name, str):
            check.add(("envs",), ENV_NAME_RULE)
        elif not matches(ENV_NAME, name):
            check.add(("envs", name), ENV_NAME_RULE)
        elif not isinstance(value, str):
            check.add(("envs", name), "must be a string")
        else:
            env[name] = value
    return env


def _cwd(check: Checker, cwd: object) -> None:
    """``cwd`` of a command: None or an absolute path."""
    if cwd is not None and (not isinstance(cwd, str) or not cwd.startswith("/")):
        check.add(("cwd",), "must be an absolute path")


def resolve_run_options(
    cmd: object,
    *,
    envs: object,
    cwd: object,
    timeout: object,
    kill_tree: object,
    on_stdout: object,
    on_stderr: object,
    background: object,
    user: object = "user",
) -> RunOptions:
    """Checks ``commands.run``'s arguments; raises ``InvalidArgumentException`` before any call."""
    check = Checker("commands.run")
    if not isinstance(cmd, str):
        check.add(("cmd",), "must be a string")
    elif cmd == "":
        check.add(("cmd",), "must not be empty")
    if not is_account(user):
        check.add(("user",), ACCOUNT_RULE)
    env = _envs(check, envs)
    _cwd(check, cwd)
    timeout_ms = None if timeout is None else _seconds(check, "timeout", timeout, 0)
    check_bool(check, ("kill_tree",), kill_tree)
    check_bool(check, ("background",), background)
    stdout_callback, stderr_callback = check_output_callbacks(check, on_stdout, on_stderr)
    check.done()
    start: dict[str, Any] = {"cmd": cmd, "envs": env, "killTree": kill_tree}
    start.update(account_field(check_account(user, "commands.run")))
    if cwd is not None:
        start["cwd"] = cwd
    if timeout_ms is not None:
        start["timeoutMs"] = timeout_ms
    return RunOptions(start, stdout_callback, stderr_callback, bool(background))


#: A terminal's program by default (``sdk/pty.ts``): a login shell, bash when the template has it.
DEFAULT_PTY_CMD: Final = "command -v bash >/dev/null && exec bash -l; exec sh -l"
#: A terminal's largest width and height, characters (``terminalSizeSchema``).
MAX_PTY_SIZE: Final = 1000

#: A terminal's output callback: each chunk as the bytes the terminal showed.
DataCallback = Callable[[bytes], object]


def check_pty_size(check: Checker, cols: object, rows: object) -> tuple[int, int]:
    """``cols`` and ``rows`` of a terminal: whole numbers from 1 to 1000 (a problem is added to
    ``check``; the pair is then meaningless)."""
    wide = check_int(check, ("cols",), cols, 1, MAX_PTY_SIZE)
    high = check_int(check, ("rows",), rows, 1, MAX_PTY_SIZE)
    return (whole(cols) if wide else 0), (whole(rows) if high else 0)


def check_on_data(check: Checker, on_data: object) -> DataCallback | None:
    """``on_data`` of ``pty.create`` and ``pty.connect``: required, callable."""
    if not callable(on_data):
        check.add(("on_data",), "must be callable")
        return None
    return cast(DataCallback, on_data)


@dataclass(frozen=True)
class PtyOptions:
    """``pty.create``'s options, checked: ``start`` is the wire body of the terminal's command."""

    start: dict[str, Any] = field(repr=False)
    on_data: DataCallback


def resolve_pty_options(
    *,
    cols: object,
    rows: object,
    cwd: object,
    envs: object,
    user: object,
    cmd: object,
    timeout: object,
    on_data: object,
) -> PtyOptions:
    """Checks ``pty.create``'s arguments in ``sdk/pty.ts``'s order; raises ``InvalidArgumentException``
    before any call. The body is a background command's with ``pty: {cols, rows}`` and ``killTree``."""
    check = Checker("pty.create")
    size = check_pty_size(check, cols, rows)
    _cwd(check, cwd)
    env = _envs(check, envs)
    if not is_account(user):
        check.add(("user",), ACCOUNT_RULE)
    if not isinstance(cmd, str):
        check.add(("cmd",), "must be a string")
    elif cmd == "":
        check.add(("cmd",), "must not be empty")
    timeout_ms = None if timeout is None else _seconds(check, "timeout", timeout, 0)
    callback = check_on_data(check, on_data)
    check.done()
    assert callback is not None
    start: dict[str, Any] = {"cmd": cmd, "pty": {"cols": size[0], "rows": size[1]}}
    start.update(account_field(check_account(user, "pty.create")))
    start.update({"envs": env, "killTree": True})
    if cwd is not None:
        start["cwd"] = cwd
    if timeout_ms is not None:
        start["timeoutMs"] = timeout_ms
    return PtyOptions(start, callback)
