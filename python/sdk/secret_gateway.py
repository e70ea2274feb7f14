"""``SecretGateway``: one gateway route's definition (SPEC "SecretGateway"). It names secrets, never holds
their values; every rule is checked at construction, before any call."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence, Union

from ._check import (
    ALLOW_PATH_CODE,
    Checker,
    Path,
    check_int,
    check_list,
    check_mapping,
    expected,
    items,
    matches,
    whole,
)
from ._paths import allow_rule_problem, duplicate_header_names, header_name_problem
from ._rules import (
    ALLOW_RULES_PER_ROUTE,
    DEFAULT_RATE_PER_MINUTE,
    HEADERS_PER_ROUTE,
    MAX_RATE_PER_MINUTE,
    ROUTE_NAME,
    ROUTE_RULE,
    ROUTES_PER_SANDBOX,
    SECRET_NAME,
    SECRET_NAME_RULE,
)
from ._upstream import parse_upstream
from .secret_ref import SecretRef

#: A header's secret: a secret name or a ``SecretRef``.
SecretSource = Union[str, SecretRef]

RATE_RULE = f"must be 0 (= {DEFAULT_RATE_PER_MINUTE}) or 1..{MAX_RATE_PER_MINUTE}"


@dataclass(frozen=True)
class PresetBinding:
    """What a preset builder records about the gateway it made (to check an ``AgentModel`` against it)."""

    #: Preset key in the catalogue, such as ``vendor_d``.
    preset: str
    #: The ``AgentModel.provider`` this gateway serves.
    provider: str
    #: The ``AgentModel.base_path`` the preset implies (``compatible`` only; empty otherwise).
    base_path: str
    #: Model ids the gateway restricts to, for presets with the model in the path.
    models: tuple[str, ...] | None


def check_secret_source(check: Checker, path: Path, value: object) -> bool:
    """A secret name or a ``SecretRef``; records an issue at ``path`` otherwise."""
    if isinstance(value, SecretRef):
        return True
    if isinstance(value, str):
        if matches(SECRET_NAME, value):
            return True
        check.add(path, SECRET_NAME_RULE)
        return False
    check.add(path, expected("a secret name or a SecretRef", value))
    return False


def check_rate_per_minute(check: Checker, path: Path, value: object) -> int:
    """``rate_per_minute``: 0 (the default 600) or 1..6000."""
    return whole(value) if check_int(check, path, value, 0, MAX_RATE_PER_MINUTE, RATE_RULE) else 0


def _check_headers(check: Checker, value: object) -> dict[str, SecretSource]:
    if not check_mapping(check, ("headers",), value):
        return {}
    headers: dict[str, SecretSource] = {}
    for name, source in items(value):
        if check_secret_source(check, ("headers", name), source):
            headers[name] = source  # type: ignore[assignment]
    if len(headers) < len(list(items(value))):
        return headers
    if len(headers) > HEADERS_PER_ROUTE:
        check.add(("headers",), f"at most {HEADERS_PER_ROUTE} headers")
    for name in headers:
        problem = header_name_problem(name)
        if problem is not None:
            check.add(("headers", name), f"header name {problem}")
    for name in duplicate_header_names(list(headers)):
        check.add(("headers", name), "duplicates another header ignoring case, _ and .")
    return headers


def _check_allow(check: Checker, value: object) -> list[tuple[str, str]]:
    if not check_list(check, ("allow",), value):
        return []
    assert isinstance(value, (list, tuple))
    if len(value) > ALLOW_RULES_PER_ROUTE:
        check.add(("allow",), f"at most {ALLOW_RULES_PER_ROUTE} allow rules")
        return []
    rules: list[tuple[str, str]] = []
    for i, rule in enumerate(value):
        if not isinstance(rule, (list, tuple)):
            check.add(("allow", i), expected("a (method, path) pair", rule))
            continue
        if len(rule) != 2:
            check.add(("allow", i), "must be a (method, path) pair")
            continue
        kinds = [j for j in (0, 1) if not isinstance(rule[j], str)]
        for j in kinds:
            check.add(("allow", i, j), expected("a string", rule[j]))
        if kinds:
            continue
        method, path = str(rule[0]), str(rule[1])
        problem = allow_rule_problem(method, path)
        if problem is not None:
            check.add(("allow", i), problem, ALLOW_PATH_CODE)
        rules.append((method, path))
    return rules


@dataclass(frozen=True, init=False)
class SecretGateway:
    """One gateway route: the fixed https upstream, the headers to inject (each naming a secret), the
    method/path allowlist and the per-minute rate.

    Example::

        llm = SecretGateway(
            "https://api.vendor-b.example",
            headers={"x-api-key": "vendor-b-key"},
            allow=[("POST", "/v1/messages")],
        )

    Raises ``InvalidArgumentException`` naming the field (``upstream``, ``headers.<name>``,
    ``allow[i]`` with code ``invalid_allow_path`` for a path no request could match, ``allow[i][j]``,
    ``rate_per_minute``) and the rule, never a value.
    """

    #: Canonical upstream origin, ``https://host[:port]``.
    upstream: str
    #: Header name to secret name (or ``SecretRef``); never a value.
    headers: Mapping[str, SecretSource]
    #: Allowed (METHOD, path) pairs; a path is exact or ends with ``/*``; none (the default) admits
    #: no request.
    allow: tuple[tuple[str, str], ...]
    #: As given: 0 means the default (600).
    rate_per_minute: int
    #: The preset that built this gateway, if any.
    preset: PresetBinding | None

    def __init__(
        self,
        upstream: str,
        *,
        headers: Mapping[str, SecretSource] | None = None,
        allow: Sequence[tuple[str, str]] = (),
        rate_per_minute: int = 0,
    ) -> None:
        check = Checker("SecretGateway")
        parsed = parse_upstream(upstream)
        if isinstance(parsed, str):
            check.add(("upstream",), parsed)
        checked_headers = _check_headers(check, {} if headers is None else headers)
        rules = _check_allow(check, allow)
        rate = check_rate_per_minute(check, ("rate_per_minute",), rate_per_minute)
        check.done()
        assert not isinstance(parsed, str)
        object.__setattr__(self, "upstream", parsed.origin)
        object.__setattr__(self, "headers", MappingProxyType(checked_headers))
        object.__setattr__(self, "allow", tuple(rules))
        object.__setattr__(self, "rate_per_minute", rate)
        object.__setattr__(self, "preset", None)

    @classmethod
    def _of_preset(
        cls,
        binding: PresetBinding,
        upstream: str,
        headers: Mapping[str, SecretSource],
        allow: Sequence[tuple[str, str]],
        rate_per_minute: int,
    ) -> SecretGateway:
        gateway = cls(upstream, headers=headers, allow=allow, rate_per_minute=rate_per_minute)
        object.__setattr__(gateway, "preset", binding)
        return gateway

    @property
    def effective_rate_per_minute(self) -> int:
        """Requests per minute the token bucket admits: ``rate_per_minute``, or 600 when it is 0."""
        return DEFAULT_RATE_PER_MINUTE if self.rate_per_minute == 0 else self.rate_per_minute


def check_gateway_map(
    check: Checker, path: Path, value: object
) -> dict[str, SecretGateway]:
    """A sandbox's ``gateways``: route name (1-64 ``[a-z0-9-]``) to ``SecretGateway``, at most 8 routes;
    records issues at ``path`` (for ``Sandbox.create`` and ``pool.take``)."""
    if not check_mapping(check, path, value):
        return {}
    gateways: dict[str, SecretGateway] = {}
    for name, gateway in items(value):
        if not matches(ROUTE_NAME, name):
            check.add(path + (name,), f"route name must be {ROUTE_RULE}")
        elif not isinstance(gateway, SecretGateway):
            check.add(path + (name,), expected("a SecretGateway", gateway))
        else:
            gateways[name] = gateway
    if len(list(items(value))) > ROUTES_PER_SANDBOX:
        check.add(path, f"at most {ROUTES_PER_SANDBOX} routes")
    return gateways
