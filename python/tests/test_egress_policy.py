"""The egress policy's rules in the Python SDK (issue 27): ``EgressPolicy`` checked and normalised at
construction with the rules of ``rules/egress-policy.ts`` (every rule, its field, its message, never the
value), frozen and hashable. The SDK's calls with a policy are ``test_egress.py``'s."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import pytest

from sdk import (
    EgressPolicy,
    InvalidArgumentException,
)
from sdk.egress_policy import MAX_EGRESS_ENTRIES, egress_argument, normalise_entry

LABEL_RULE = 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'
IPV6_RULE = "IPv6 is not routed to sandboxes: give IPv4 addresses or domains"
IPV4_RULE = "is not an IPv4 address or CIDR"
SHAPE_RULE = "is a domain or an IPv4 address or CIDR, without a scheme, port or path"
NUMBERS_RULE = "is not an IPv4 address or a domain name"
WILDCARD_RULE = 'a wildcard may only be a leading "*."'
MODE_RULE = "must be one of open, closed, allowlist"


# --- entries: normalisation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("pypi.org", "pypi.org"),
        ("  PyPI.Org.  ", "pypi.org"),  # trimmed, lower case, the trailing dot dropped
        ("*.NPMJS.org.", "*.npmjs.org"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),  # an IDN in its xn-- form
        ("a-b.c0", "a-b.c0"),
        ("1.2.3.4", "1.2.3.4/32"),  # an address is its /32
        ("10.1.2.3/24", "10.1.2.0/24"),  # host bits cleared
        ("10.1.2.3/8", "10.0.0.0/8"),
        ("255.255.255.255/1", "128.0.0.0/1"),
        ("192.168.7.9/0", "0.0.0.0/0"),
        ("0.0.0.0", "0.0.0.0/32"),
        ("1.2.3.4.", "1.2.3.4/32"),
        ("\ufeff1.2.3.4\u3000", "1.2.3.4/32"),  # JavaScript's trim
        ("1.2.3.a", "1.2.3.a"),  # numbers are labels when the last one is not all digits
        ("a.1b", "a.1b"),
        (("a" * 63 + ".") * 3 + "a" * 61, ("a" * 63 + ".") * 3 + "a" * 61),  # 253 characters
    ],
)
def test_entries_are_normalised_as_typescript_normalises_them(raw: str, normal: str) -> None:
    assert normalise_entry(raw) == normal
    assert EgressPolicy("allowlist", allow=[raw]).allow == (normal,)
    assert EgressPolicy("open", deny=[raw]).deny == (normal,)


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("::1", IPV6_RULE),
        ("2001:db8::/32", IPV6_RULE),
        ("fe80::1/64", IPV6_RULE),
        ("::", IPV6_RULE),
        ("ABC::DEF", IPV6_RULE),  # hex digits and colons, two colons at least
        ("pypi.org:443", SHAPE_RULE),  # any other colon: a port, a scheme
        ("1.2.3.4:80", SHAPE_RULE),
        ("a:b", SHAPE_RULE),  # one colon is no IPv6
        ("fe80::1%eth0", SHAPE_RULE),
        ("::ffff:1.2.3.4", SHAPE_RULE),
        ("::1\n.", SHAPE_RULE),  # as JavaScript's $, no match before a final newline
        ("256.1.1.1", IPV4_RULE),
        ("010.1.2.3", IPV4_RULE),  # a leading zero reads as octal to some tools
        ("1.2.3.04", IPV4_RULE),
        ("1.2.3.4/33", IPV4_RULE),
        ("999.1.2.3/8", IPV4_RULE),
        ("1.2.3.4/08", IPV4_RULE),  # no leading zero in the prefix either
        ("1.2.3.4/00", IPV4_RULE),
        ("1.2.3.4/01", IPV4_RULE),
        ("1.2.3", NUMBERS_RULE),  # a last label of digits: a mistyped address, not a name
        ("1.2.3.4.5", NUMBERS_RULE),
        ("*.1.2.3.4", NUMBERS_RULE),
        ("example.123", NUMBERS_RULE),
        ("7", NUMBERS_RULE),
        ("*", WILDCARD_RULE),
        ("*.", WILDCARD_RULE),
        ("*.*.pypi.org", WILDCARD_RULE),
        ("py*.org", WILDCARD_RULE),
        ("pypi.*", WILDCARD_RULE),
        ("", "is not a domain name"),
        ("   ", "is not a domain name"),
        (".", "is not a domain name"),
        ("*." + ("a" * 63 + ".") * 3 + "a" * 62, "is not a domain name"),  # 254 after the wildcard
        ("a..b", LABEL_RULE),
        ("-pypi.org", LABEL_RULE),
        ("pypi-.org", LABEL_RULE),
        ("a" * 64 + ".org", LABEL_RULE),
        ("py_pi.org", LABEL_RULE),
        ("bücher.example", LABEL_RULE),
        ("1.2.3.4/", SHAPE_RULE),  # a slash but no IPv4 CIDR: a path
        ("1.2.3.4/123", SHAPE_RULE),
        ("1.2.3.4/\u0663", SHAPE_RULE),  # ASCII digits only, as JavaScript's \d
        ("10.0.0.0/8/8", SHAPE_RULE),
        ("/8", SHAPE_RULE),
        ("pypi.org/simple", SHAPE_RULE),
        ("https://pypi.org", SHAPE_RULE),
        ("pypi .org", LABEL_RULE),
    ],
)
def test_each_entry_rule_names_the_entry_and_never_its_value(raw: str, rule: str) -> None:
    assert normalise_entry(raw) == (None, rule)
    with pytest.raises(InvalidArgumentException) as caught:
        EgressPolicy("allowlist", allow=["pypi.org", raw])
    error = caught.value
    assert (error.field, error.code) == ("allow[1]", "invalid_argument")
    assert error.message == f"EgressPolicy: allow[1]: {rule}"
    if raw.strip() and raw.strip() not in rule:
        assert raw.strip() not in str(error) and raw.strip() not in repr(error)
    with pytest.raises(InvalidArgumentException) as denied:
        EgressPolicy("open", deny=[raw])
    assert (denied.value.field, denied.value.message) == ("deny[0]", f"EgressPolicy: deny[0]: {rule}")


# --- the policy's rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"mode": "OPEN"}, "mode", MODE_RULE),
        ({"mode": "allow"}, "mode", MODE_RULE),
        ({"mode": 1}, "mode", MODE_RULE),
        ({"mode": None}, "mode", MODE_RULE),
        ({"mode": "open", "allow": ["pypi.org"]}, "allow", "is for mode 'allowlist' only"),
        ({"mode": "closed", "allow": ["pypi.org"]}, "allow", "is for mode 'allowlist' only"),
        ({"mode": "closed", "deny": ["pypi.org"]}, "deny", "means nothing with mode 'closed'"),
        ({"mode": "allowlist", "allow": "pypi.org"}, "allow", "must be a list, got string"),
        ({"mode": "open", "deny": {"pypi.org": 1}}, "deny", "must be a list, got mapping"),
        ({"mode": "allowlist", "allow": [5]}, "allow[0]", "must be a string, got number"),
        ({"mode": "allowlist", "allow": [b"pypi.org"]}, "allow[0]", "must be a string, got bytes"),
    ],
)
def test_each_policy_rule_names_its_field(options: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        EgressPolicy(**options)
    assert (caught.value.field, caught.value.code) == (field, "invalid_argument")
    assert caught.value.message == f"EgressPolicy: {field}: {message}"


def test_the_combinations_are_checked_once_every_field_passed_and_reported_together() -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        EgressPolicy("closed", allow=["pypi.org"], deny=["10.0.0.0/8"])
    assert caught.value.field == "allow"
    assert caught.value.message == (
        "EgressPolicy: allow: is for mode 'allowlist' only; deny: means nothing with mode 'closed'"
    )
    with pytest.raises(InvalidArgumentException) as entry_first:
        EgressPolicy("open", allow=["a..b"])  # as zod: a bad entry stops the refinement
    assert entry_first.value.message == f"EgressPolicy: allow[0]: {LABEL_RULE}"
    with pytest.raises(InvalidArgumentException) as every_field:
        EgressPolicy("vpn", allow=["::1"], deny=["256.0.0.0"])  # type: ignore[arg-type]
    assert every_field.value.field == "mode"
    assert every_field.value.message == (
        f"EgressPolicy: mode: {MODE_RULE}; allow[0]: {IPV6_RULE}; deny[0]: {IPV4_RULE}"
    )


def test_at_most_256_entries_in_allow_and_deny_together() -> None:
    allow = [f"a{i}.example" for i in range(200)]
    deny = [f"10.0.{i}.0/24" for i in range(MAX_EGRESS_ENTRIES - 200)]
    assert len(EgressPolicy("allowlist", allow=allow, deny=deny).deny) == 56
    with pytest.raises(InvalidArgumentException) as caught:
        EgressPolicy("allowlist", allow=allow, deny=[*deny, "10.1.0.0/16"])
    assert caught.value.field is None  # as TypeScript: the rule is of the whole policy
    assert caught.value.message == "EgressPolicy: at most 256 entries in allow and deny"
    with pytest.raises(InvalidArgumentException) as both:
        EgressPolicy("open", allow=[f"a{i}.example" for i in range(257)])
    assert both.value.message == (
        "EgressPolicy: at most 256 entries in allow and deny; allow: is for mode 'allowlist' only"
    )


def test_repeats_are_dropped_after_normalisation_the_first_kept() -> None:
    policy = EgressPolicy(
        "allowlist",
        allow=["PyPI.org", "*.x.org", "pypi.org.", "1.2.3.4", "1.2.3.4/32", " PYPI.ORG"],
        deny=["10.1.2.3/8", "10.0.0.0/8", "pypi.org"],
    )
    assert policy.allow == ("pypi.org", "*.x.org", "1.2.3.4/32")
    assert policy.deny == ("10.0.0.0/8", "pypi.org")  # each list on its own, as TypeScript's unique
    as_mapping = egress_argument("Sandbox", "egress", {"mode": "open", "deny": ["A.org", "a.org."]})
    assert as_mapping == EgressPolicy("open", deny=["a.org"])


def test_the_256_cap_counts_distinct_entries() -> None:
    names = [f"a{i}.example" for i in range(MAX_EGRESS_ENTRIES)]
    doubled = EgressPolicy("allowlist", allow=[*names, *(name.upper() for name in names)])
    assert doubled.allow == tuple(names)
    assert len(EgressPolicy("allowlist", allow=names[:200], deny=names[:56] * 2).deny) == 56
    with pytest.raises(InvalidArgumentException) as caught:
        EgressPolicy("allowlist", allow=names[:200], deny=names[:57])  # in both lists: counted twice
    assert caught.value.message == "EgressPolicy: at most 256 entries in allow and deny"
    with pytest.raises(InvalidArgumentException) as repeated:
        EgressPolicy("open", allow=["a.org", "A.org"])
    assert repeated.value.message == "EgressPolicy: allow: is for mode 'allowlist' only"


@pytest.mark.parametrize("value", ["Bearer sk-live-123", "sk-live-123:x", "sk-live-123*", "sk-live-123\n."])
def test_no_message_carries_the_value(value: str) -> None:
    makers: list[Callable[[], object]] = [
        lambda: EgressPolicy("allowlist", allow=[value]),
        lambda: EgressPolicy("open", deny=["pypi.org", value]),
        lambda: EgressPolicy(value),  # type: ignore[arg-type]
    ]
    for make in makers:
        with pytest.raises(InvalidArgumentException) as caught:
            make()
        assert "sk-live-123" not in str(caught.value) and "sk-live-123" not in repr(caught.value)


def test_a_policy_is_frozen_hashable_and_none_means_absent() -> None:
    policy = EgressPolicy("allowlist", allow=["PyPI.org", "1.2.3.4"], deny=None)
    assert policy == EgressPolicy("allowlist", allow=("pypi.org", "1.2.3.4/32"))
    assert (policy.mode, policy.allow, policy.deny) == ("allowlist", ("pypi.org", "1.2.3.4/32"), ())
    assert hash(policy) == hash(EgressPolicy("allowlist", allow=["pypi.org", "1.2.3.4/32"]))
    assert EgressPolicy("open") == EgressPolicy("open", allow=None, deny=[])
    assert EgressPolicy("allowlist").allow == ()  # an empty allowlist reaches nothing, as TypeScript takes it
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.mode = "open"  # type: ignore[misc]
    with pytest.raises(TypeError):
        EgressPolicy("open", block=["x"])  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        EgressPolicy()  # type: ignore[call-arg]
