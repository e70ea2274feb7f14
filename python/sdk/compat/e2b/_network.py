"""E2B's ``network`` option of ``Sandbox.create``, its ``update_network``, and the ``network`` of its
``SandboxInfo``, on the native egress policy (:class:`sdk.EgressPolicy`). E2B's names and types as its
SDK exports them (Python SDK 2.7 to 2.55, ``e2b/sandbox/network.py`` and ``e2b/sandbox/sandbox_api.py``),
with the same rules as the TypeScript shim's ``network.ts``.

E2B's rules: ``deny_out`` blocks, ``allow_out`` takes precedence over ``deny_out``, and ``ALL_TRAFFIC``
(``0.0.0.0/0``) in ``deny_out`` blocks everything ``allow_out`` does not name. So ``deny_out=[ALL_TRAFFIC]``
with ``allow_out`` is mode ``allowlist`` (``allow`` = ``allow_out``); a ``deny_out`` without
``ALL_TRAFFIC`` is mode ``open`` with ``deny`` = ``deny_out`` less what ``allow_out`` covers; ``allow_out``
alone restricts nothing. ``allow_internet_access=False`` is ``deny_out=[ALL_TRAFFIC]`` in E2B: at create it
is mode ``closed`` here, so a ``network`` with it must leave nothing reachable; in ``update_network`` it is
the allowlist above. Entries go through the native checks (IPv6, a port or a path are refused); the
inbound options (``allow_public_traffic=False``, ``mask_request_host``, ``https_ports``) are about E2B's
own proxy to sandbox ports, which the preview URLs here do not copy (a token per port, ``Host:
localhost:<port>``, plain HTTP), and ``rules`` and ``egress_proxy`` are E2B's egress proxy: refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Final, List, Mapping, NotRequired, Sequence, TypedDict, Union

from ..._wire import EgressPolicyWire
from ...egress_policy import EgressPolicy, normalise_entry
from .exceptions import InvalidArgumentException, NotSupportedException, translated

#: E2B's CIDR range of all traffic: in ``deny_out``, everything ``allow_out`` does not name is blocked.
ALL_TRAFFIC: Final = "0.0.0.0/0"


class SandboxNetworkTransform(TypedDict):
    """Headers a rule would set on matching requests (E2B's egress proxy; refused here)."""

    headers: NotRequired[Dict[str, str]]


@dataclass(frozen=True)
class _SandboxNetworkTransformIam:
    """E2B's workload identity placeholders of a transform callable."""

    tokens: Mapping[str, str]


@dataclass(frozen=True)
class SandboxNetworkTransformContext:
    """What a ``transform`` callable receives in E2B."""

    iam: _SandboxNetworkTransformIam


#: A ``transform`` given as a callable.
SandboxNetworkTransformResolver = Callable[[SandboxNetworkTransformContext], SandboxNetworkTransform]


class SandboxNetworkRule(TypedDict):
    """One per-host rule of E2B's egress proxy (refused here)."""

    transform: NotRequired[Union[SandboxNetworkTransform, SandboxNetworkTransformResolver]]


#: Host → rules: only an empty mapping is accepted here.
SandboxNetworkRules = Dict[str, List[SandboxNetworkRule]]


class SandboxNetworkRuleInfo(TypedDict):
    """A rule as E2B's sandbox info shows it."""

    transform: NotRequired[SandboxNetworkTransform]


@dataclass(frozen=True)
class SandboxNetworkSelectorContext:
    """What an ``allow_out`` / ``deny_out`` callable receives: ``all_traffic`` is ``ALL_TRAFFIC``; ``rules``
    is empty here (rules are refused)."""

    all_traffic: str
    rules: Mapping[str, List[SandboxNetworkRule]]


#: Entries (IPv4 addresses, CIDRs, domains, ``*.`` wildcards), or a callable returning them.
SandboxNetworkSelector = Union[List[str], Callable[[SandboxNetworkSelectorContext], List[str]]]


class SandboxEgressProxyOpts(TypedDict):
    """E2B's SOCKS5 egress proxy (refused here)."""

    address: str
    username: NotRequired[str]
    password: NotRequired[str]


class SandboxEgressProxyInfo(TypedDict):
    """E2B's egress proxy as its info shows it (never set here)."""

    address: str
    username: NotRequired[str]


class SandboxNetworkOpts(TypedDict):
    """E2B's ``network`` option of ``Sandbox.create``: ``allow_out`` and ``deny_out`` as the egress policy;
    ``allow_public_traffic=True`` (E2B's default) accepted, though ports stay private until
    ``sbx.native.ports.expose``; the rest refused unless empty."""

    allow_out: NotRequired[SandboxNetworkSelector]
    deny_out: NotRequired[SandboxNetworkSelector]
    rules: NotRequired[SandboxNetworkRules]
    egress_proxy: NotRequired[SandboxEgressProxyOpts]
    allow_public_traffic: NotRequired[bool]
    mask_request_host: NotRequired[str]
    https_ports: NotRequired[List[int]]


class SandboxNetworkUpdate(TypedDict, total=False):
    """What ``update_network`` takes: the whole new configuration (what is left out is cleared, as in
    E2B); ``allow_internet_access=False`` is ``deny_out=[ALL_TRAFFIC]``."""

    allow_out: SandboxNetworkSelector
    deny_out: SandboxNetworkSelector
    rules: SandboxNetworkRules
    egress_proxy: SandboxEgressProxyOpts
    allow_internet_access: bool


class SandboxNetworkInfo(TypedDict, total=False):
    """The ``network`` of E2B's ``SandboxInfo``: here ``allow_out`` / ``deny_out`` from the egress policy."""

    allow_out: List[str]
    deny_out: List[str]
    rules: Dict[str, List[SandboxNetworkRuleInfo]]
    egress_proxy: SandboxEgressProxyInfo
    allow_public_traffic: bool
    mask_request_host: str
    https_ports: List[int]


_CREATE_KEYS: Final = (
    "allow_out", "deny_out", "rules", "egress_proxy", "allow_public_traffic", "mask_request_host", "https_ports",
)  # fmt: skip
_UPDATE_KEYS: Final = ("allow_out", "deny_out", "rules", "egress_proxy", "allow_internet_access")
#: Why E2B's traffic access token (and ``allow_public_traffic=False``, which gives one) is refused.
NO_TRAFFIC_TOKEN: Final = (
    "E2B's traffic access token opens every port of a sandbox; preview tokens here are per port "
    "(sbx.native.ports.token(port), in the x-sdk-preview-token header), and a port is private until "
    "sbx.native.ports.expose(port, public=True)"
)
_NO_HOST_MASK: Final = (
    "the preview proxy sends every request to a port with Host: localhost:<port> (the caller's host in "
    "x-forwarded-host)"
)
_NO_HTTPS_PORTS: Final = "the preview proxy reaches a sandbox port over plain HTTP only"
_NO_EGRESS_PROXY: Final = (
    "E2B's egress proxy rewrites or tunnels requests; the egress policy here only allows and denies"
)
_CARVE_OUT: Final = (
    "an exception inside a range deny_out denies is kept only with deny_out=[ALL_TRAFFIC] (an allowlist); "
    "without it a deny entry here wins over the narrower allow entry"
)


def _options(call: str, network: object, keys: Sequence[str]) -> Mapping[str, object]:
    """``network``'s keys checked, and what cannot be honoured refused (``NotSupportedException`` naming
    ``network.<option>``)."""
    if not isinstance(network, Mapping):
        raise InvalidArgumentException(f"{call}: network: must be a mapping of E2B's network options")
    for key in network:
        if key not in keys:
            raise InvalidArgumentException(f"{call}: network.{key}: is not an option of E2B's network")
    options: Mapping[str, object] = network
    public = options.get("allow_public_traffic")
    if public is not None and public is not True:
        raise NotSupportedException(
            "network.allow_public_traffic", f"only True (E2B's default) is accepted: {NO_TRAFFIC_TOKEN}"
        )
    if options.get("mask_request_host") is not None:
        raise NotSupportedException("network.mask_request_host", _NO_HOST_MASK)
    ports = options.get("https_ports")
    if ports is not None and not (isinstance(ports, (list, tuple)) and len(ports) == 0):
        raise NotSupportedException("network.https_ports", _NO_HTTPS_PORTS)
    rules = options.get("rules")
    if rules is not None and not (isinstance(rules, Mapping) and len(rules) == 0):
        raise NotSupportedException("network.rules", _NO_EGRESS_PROXY)
    if options.get("egress_proxy") is not None:
        raise NotSupportedException("network.egress_proxy", _NO_EGRESS_PROXY)
    access = options.get("allow_internet_access")
    if access is not None and not isinstance(access, bool):
        raise InvalidArgumentException(f"{call}: network.allow_internet_access: must be a bool")
    return options


def _entries(call: str, field: str, selector: object) -> list[str]:
    """``allow_out`` or ``deny_out`` normalised by the native rules (a callable is called as E2B calls it).

    :raises InvalidArgumentException: naming the entry (``network.allow_out[1]``) and the rule, never
        the value
    """
    if selector is None:
        return []
    listed = selector(SandboxNetworkSelectorContext(ALL_TRAFFIC, {})) if callable(selector) else selector
    if not isinstance(listed, (list, tuple)):
        raise InvalidArgumentException(
            f"{call}: network.{field}: must be a list of IPv4 addresses, CIDRs and domains, or a callable "
            "returning one"
        )
    normal: list[str] = []
    for i, raw in enumerate(listed):
        if not isinstance(raw, str):
            raise InvalidArgumentException(f"{call}: network.{field}[{i}]: must be a string")
        entry = normalise_entry(raw)
        if isinstance(entry, tuple):
            raise InvalidArgumentException(f"{call}: network.{field}[{i}]: {entry[1]}")
        normal.append(entry)
    return normal


def _cidr(entry: str) -> tuple[int, int] | None:
    """A normalised CIDR entry as (network, prefix), or None for a domain."""
    if "/" not in entry:
        return None
    address, prefix = entry.split("/")
    value = 0
    for octet in address.split("."):
        value = value * 256 + int(octet)
    return value, int(prefix)


def _covers(outer: str, inner: str) -> bool:
    """True when every destination normalised entry ``inner`` names is one ``outer`` names too."""
    o, i = _cidr(outer), _cidr(inner)
    if o is not None and i is not None:
        size = 2 ** (32 - o[1])
        return o[1] <= i[1] and i[0] // size * size == o[0]
    if o is not None or i is not None:
        return False
    if not outer.startswith("*."):
        return inner == outer
    suffix = outer[2:]
    inner_suffix = inner[2:] if inner.startswith("*.") else inner
    return inner_suffix.endswith(f".{suffix}") or inner == outer


def _policy(allow_out: list[str], deny_out: list[str]) -> EgressPolicy:
    """E2B's ``allow_out`` / ``deny_out`` (normalised) as an egress policy: ``allow_out`` wins.

    :raises NotSupportedException: for an ``allow_out`` entry inside a range ``deny_out`` denies, without
        ``ALL_TRAFFIC`` in ``deny_out`` (an exception mode ``open`` cannot express)
    :raises InvalidArgumentException: past the native rules (more than 256 entries)
    """
    with translated():
        if ALL_TRAFFIC in allow_out:
            return EgressPolicy("open")
        if ALL_TRAFFIC in deny_out:
            return EgressPolicy("allowlist", allow=allow_out)
        deny = [denied for denied in deny_out if not any(_covers(allowed, denied) for allowed in allow_out)]
        for i, allowed in enumerate(allow_out):
            if any(_covers(denied, allowed) for denied in deny):
                raise NotSupportedException(f"network.allow_out[{i}]", _CARVE_OUT)
        return EgressPolicy("open", deny=deny)


def create_egress(call: str, network: object, allow_internet_access: object) -> EgressPolicy:
    """The egress policy of ``Sandbox.create``'s ``network`` (with its ``allow_internet_access``).

    :raises InvalidArgumentException: for a malformed option or entry, or an ``allow_out`` that would
        stay reachable with ``allow_internet_access=False`` (here that is mode ``closed``)
    :raises NotSupportedException: for what cannot be honoured (``network.mask_request_host``...)
    """
    options = _options(call, network, _CREATE_KEYS)
    allow_out = _entries(call, "allow_out", options.get("allow_out"))
    deny_out = _entries(call, "deny_out", options.get("deny_out"))
    if allow_internet_access is not False:
        return _policy(allow_out, deny_out)
    # E2B's allow_internet_access=False is deny_out=[ALL_TRAFFIC]; ours is mode closed: nothing may stay open.
    policy = _policy(allow_out, [*deny_out, ALL_TRAFFIC])
    if policy.mode != "allowlist" or policy.allow:
        raise InvalidArgumentException(
            f"{call}: network.allow_out with allow_internet_access=False: here allow_internet_access=False "
            "closes all egress; for an allowlist give network={'deny_out': [ALL_TRAFFIC], 'allow_out': [...]} "
            "and leave allow_internet_access True"
        )
    return EgressPolicy("closed")


def update_egress(call: str, network: object) -> EgressPolicy:
    """The egress policy of ``update_network(network)``: E2B's update replaces the whole configuration,
    so ``{}`` is open; ``allow_internet_access=False`` is ``deny_out=[ALL_TRAFFIC]``.

    :raises InvalidArgumentException, NotSupportedException: as :func:`create_egress`
    """
    options = _options(call, network, _UPDATE_KEYS)
    allow_out = _entries(call, "allow_out", options.get("allow_out"))
    deny_out = _entries(call, "deny_out", options.get("deny_out"))
    if options.get("allow_internet_access") is False:
        deny_out.append(ALL_TRAFFIC)
    return _policy(allow_out, deny_out)


def network_info(egress: EgressPolicyWire) -> SandboxNetworkInfo | None:
    """E2B's ``network`` of a sandbox's info from its egress policy: an allowlist is
    ``{"allow_out": allow, "deny_out": [ALL_TRAFFIC]}``, closed ``{"deny_out": [ALL_TRAFFIC]}``, open with
    ``deny`` ``{"deny_out": deny}``; None when everything is reachable."""
    if egress.mode == "allowlist":
        return {"allow_out": list(egress.allow), "deny_out": [ALL_TRAFFIC]}
    if egress.mode == "closed":
        return {"deny_out": [ALL_TRAFFIC]}
    return {"deny_out": list(egress.deny)} if egress.deny else None
