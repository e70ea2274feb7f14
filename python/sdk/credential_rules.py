"""``CredentialRule``: one rule of the credential broker (issue 27 item 2), with the rules of
``rules/credential-rules.ts`` and ``credentialRulesSchema`` of ``sdk/sandbox-credentials.ts``.

A rule binds headers, each naming a secret (or a ``SecretRef``), to one host. The host is an exact
domain name, normalised as an egress entry is (``sdk.egress_policy``: trimmed, lower case, no trailing
dot), never a wildcard, an address, a port or a path: a credential goes to the one name it was made for,
which TLS can certify. Header names follow the gateway's rules (RFC 9110 tokens, no transport header,
unique ignoring case, ``_`` and ``.``). At most 32 rules per sandbox, one per host.

The issues come in the order TypeScript's zod 4 schema reports them: more than 32 rules is the only
issue of the list; else each rule's ``host``, its ``headers`` (the values, then, when every value is a
secret name or a ``SecretRef``, the count and the names), its unknown keys; then, when every rule has a
host and headers of the right kinds, a host given twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Mapping, Sequence, cast

from ._check import Checker, Path, check_list, expected, items, matches
from ._paths import duplicate_header_names, header_name_problem
from ._rules import HEADERS_PER_ROUTE, SECRET_NAME, SECRET_NAME_RULE
from .egress_policy import normalise_entry
from .secret_gateway import SecretSource
from .secret_ref import SecretRef

#: Most credential rules per sandbox (``MAX_CREDENTIAL_RULES``).
MAX_CREDENTIAL_RULES: Final = 32

#: The options of a rule, in the order the rules check them.
_OPTIONS: Final = ("host", "headers")

_ADDRESS_RULE: Final = "is an address: a credential is bound to a domain name, which TLS can certify"
_WILDCARD_RULE: Final = "is a wildcard: a credential is bound to one exact host"
_NOT_A_RULE: Final = "a CredentialRule or a mapping of host and headers"


def parse_credential_host(raw: str) -> str | tuple[None, str]:
    """The normalised host of a rule (``parseCredentialHost``), or ``(None, rule)`` naming why ``raw`` is
    not one; the rule never contains ``raw``."""
    entry = normalise_entry(raw)
    if isinstance(entry, tuple):
        return entry
    if "/" in entry:  # an egress entry is an IPv4 address exactly when it is normalised to a CIDR
        return None, _ADDRESS_RULE
    if entry.startswith("*."):
        return None, _WILDCARD_RULE
    return entry


def _check_host(check: Checker, path: Path, value: object) -> str | None:
    """``host``: the normalised host, or None after an issue (which stops the duplicate check)."""
    if not isinstance(value, str):
        check.add(path, expected("a string", value))
        return None
    host = parse_credential_host(value)
    if isinstance(host, tuple):
        check.add(path, host[1])
        return None
    return host


def _check_headers(check: Checker, path: Path, value: object) -> dict[str, SecretSource] | None:
    """``headers``: header name to secret name or ``SecretRef``. A value of another kind stops the checks
    of the count and the names, and (returning None) the duplicate check of the hosts; a string that is
    no secret name stops neither, as in zod 4."""
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        check.add(path, expected("a mapping of header names to secret names", value))
        return None
    headers: dict[str, SecretSource] = {}
    kinds_ok = True
    for name, source in items(value):
        if isinstance(source, SecretRef):
            headers[name] = source
        elif isinstance(source, str):
            if not matches(SECRET_NAME, source):
                check.add((*path, name), SECRET_NAME_RULE)
            headers[name] = source
        else:
            check.add((*path, name), expected("a secret name or a SecretRef", source))
            kinds_ok = False
    if not kinds_ok:
        return None
    if not headers:
        check.add(path, "give at least one header")
    if len(headers) > HEADERS_PER_ROUTE:
        check.add(path, f"at most {HEADERS_PER_ROUTE} headers")
    for name in headers:
        problem = header_name_problem(name)
        if problem is not None:
            check.add((*path, name), f"header name {problem}")
    for name in duplicate_header_names(list(headers)):
        check.add((*path, name), "duplicates another header ignoring case, _ and .")
    return headers


def _check_rule(
    check: Checker, path: Path, host: object, headers: object, unknown: Sequence[object] = ()
) -> tuple[str | None, dict[str, SecretSource] | None]:
    """One rule's fields, issues under ``path``: ``host``, ``headers``, then the ``unknown`` keys of a
    mapping. Returns the host and the headers, each None when its kind was wrong."""
    checked_host = _check_host(check, (*path, "host"), host)
    checked_headers = _check_headers(check, (*path, "headers"), headers)
    for key in unknown:
        check.add((*path, key) if isinstance(key, str) else path, "is not an option (host, headers)")
    return checked_host, checked_headers


def _made(host: str, headers: Mapping[str, SecretSource]) -> CredentialRule:
    rule = object.__new__(CredentialRule)
    object.__setattr__(rule, "host", host)
    object.__setattr__(rule, "headers", MappingProxyType(dict(headers)))
    return rule


@dataclass(frozen=True, init=False)
class CredentialRule:
    """One rule of the credential broker: the headers sandboxd's proxy adds to every HTTPS request
    sandbox code sends ``host`` through ``HTTPS_PROXY``, each header's whole value read from a secret
    (``Sandbox.create(credentials=[...])``). It names secrets, never holds their values.

    Example: ``CredentialRule("api.github.com", {"authorization": "github-token"})``

    :param host: the exact host (``api.github.com``), kept normalised (lower case, no trailing dot):
        never a wildcard, an address, a port or a path
    :param headers: header name to secret name or ``SecretRef`` (1 to 16; RFC 9110 tokens, no transport
        header such as ``host``, unique ignoring case, ``_`` and ``.``)
    :raises InvalidArgumentException: naming the field (``host``, ``headers``, ``headers.<name>``) and
        the rule, never the value
    """

    #: The exact host, normalised.
    host: str
    #: Header name to secret name (or ``SecretRef``); never a value.
    headers: Mapping[str, SecretSource]

    def __init__(self, host: str, headers: Mapping[str, SecretSource]) -> None:
        check = Checker("CredentialRule")
        checked_host, checked_headers = _check_rule(check, (), host, headers)
        check.done()
        assert checked_host is not None and checked_headers is not None
        object.__setattr__(self, "host", checked_host)
        object.__setattr__(self, "headers", MappingProxyType(checked_headers))


def check_credential_rules(check: Checker, path: Path, value: object) -> tuple[CredentialRule, ...]:
    """``credentials`` of ``Sandbox.create``: None (none) or a list of ``CredentialRule`` values or
    mappings of their options (``{"host": ..., "headers": {...}}``), checked with the rules of
    ``credentialRulesSchema``, issues under ``path`` (``credentials[1].headers.host``). Returns the
    rules, hosts normalised (empty after an issue)."""
    if value is None:
        return ()
    if not check_list(check, path, value):
        return ()
    given = cast(Sequence[object], value)
    if len(given) > MAX_CREDENTIAL_RULES:  # zod 4 checks an array's length before its elements
        check.add(path, f"at most {MAX_CREDENTIAL_RULES} rules")
        return ()
    before = check.count()
    rules: list[CredentialRule] = []
    hosts: list[str] | None = []
    for i, item in enumerate(given):
        if isinstance(item, CredentialRule):
            rules.append(item)
            if hosts is not None:
                hosts.append(item.host)
            continue
        if not isinstance(item, Mapping):
            check.add((*path, i), expected(_NOT_A_RULE, item))
            hosts = None
            continue
        unknown = [key for key in item if key not in _OPTIONS]
        host, headers = _check_rule(check, (*path, i), item.get("host"), item.get("headers"), unknown)
        if host is None or headers is None:
            hosts = None
        else:
            if hosts is not None:
                hosts.append(host)
            rules.append(_made(host, headers))
    if hosts is not None:
        seen: set[str] = set()
        for i, host in enumerate(hosts):
            if host in seen:
                check.add((*path, i, "host"), "is given twice")
            seen.add(host)
    return tuple(rules) if check.count() == before else ()

