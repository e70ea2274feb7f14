"""The egress policy (issue 27): ``EgressPolicy`` checked and normalised at construction with the rules
of ``rules/egress-policy.ts`` (every rule, its field, its message, never the value);
``Sandbox.create(egress=...)`` and ``AsyncSandbox.create`` sending exactly the normalised policy (and
nothing without one), ``allow_internet_access=False`` with another mode than ``closed`` refused before
any call; and ``sbx.egress``: ``policy`` from the control plane's answers, ``update`` as ``PUT
/v1/sandboxes/:id/egress`` with the sandbox's token. Against a fake control plane (httpx's ``send``
answered here, as in ``test_isolation.py``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

import httpx
import pytest

from _httpx_fake import answer_httpx_with

from sdk import (
    AsyncSandbox,
    AsyncSandboxEgress,
    EgressPolicy,
    InvalidArgumentException,
    Sandbox,
    SandboxEgress,
    SandboxException,
    SandboxInfo,
    SandboxPool,
)
from sdk.egress_policy import MAX_EGRESS_ENTRIES, egress_argument, normalise_entry

PLANE = "http://plane.test"
DAEMON = "http://daemon.test"
SBX = "0123456789ab"
SNAP = "snap_0123456789abcdef"
TOKEN = "token-" + "x" * 20
OPEN = {"mode": "open", "allow": [], "deny": []}
CLOSED = {"mode": "closed", "allow": [], "deny": []}

LABEL_RULE = 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'
IPV6_RULE = "IPv6 is not routed to sandboxes: give IPv4 addresses or domains"
IPV4_RULE = "is not an IPv4 address or CIDR"
SHAPE_RULE = "is a domain or an IPv4 address or CIDR, without a scheme, port or path"
NUMBERS_RULE = "is not an IPv4 address or a domain name"
WILDCARD_RULE = 'a wildcard may only be a leading "*."'
MODE_RULE = "must be one of open, closed, allowlist"
NOT_A_POLICY = "must be an EgressPolicy or a mapping of mode, allow and deny"


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


# --- a fake control plane ---------------------------------------------------------------------------


def info(egress: dict[str, Any], **more: object) -> dict[str, Any]:
    """A sandbox's facts as the control plane sends them."""
    return {
        "sandboxId": SBX, "template": "sdk-base", "isolation": "namespace", "state": "running",
        "allowInternetAccess": egress["mode"] != "closed", "egress": egress, "endReason": None,
        "suspendReason": None, "deadlineAt": 1_900_000_000_000, "seq": 1, **more,
    }  # fmt: skip


class FakePlane:
    """Answers create (``egress`` as sent, else open or closed as ``allowInternetAccess`` says),
    connect, a sandbox's facts, activity, kill, sandboxd's routes, and ``PUT …/egress`` (the body, or
    ``answer_egress`` when set); keeps each request's method, URL, authorization and body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None, Any]] = []
        self.egress: dict[str, Any] = OPEN
        self.answer_egress: dict[str, Any] | None = None
        #: An error envelope ``PUT …/egress`` answers with (status 400) when set.
        self.refusal: dict[str, Any] | None = None

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        self.requests.append((request.method, str(request.url), request.headers.get("authorization"), body))
        at = (request.method, str(request.url))
        if at == ("POST", f"{PLANE}/v1/sandboxes"):
            self.egress = body.get("egress") or (OPEN if body.get("allowInternetAccess", True) else CLOSED)
            return httpx.Response(201, json=info(self.egress, daemonUrl=DAEMON, accessToken=TOKEN))
        if at == ("POST", f"{PLANE}/v1/sandboxes/{SBX}/connect"):
            return httpx.Response(200, json=info(self.egress, daemonUrl=DAEMON))
        if at in (("GET", f"{PLANE}/v1/sandboxes/{SBX}"), ("POST", f"{PLANE}/v1/sandboxes/{SBX}/activity")):
            return httpx.Response(200, json=info(self.egress))
        if at == ("DELETE", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(self.egress, state="ended", endReason="killed"))
        if at == ("GET", f"{DAEMON}/v1/gateways"):  # a connected handle reads the routes' state
            return httpx.Response(200, json={"routes": {}})
        if at == ("PUT", f"{PLANE}/v1/sandboxes/{SBX}/egress") and self.refusal is not None:
            return httpx.Response(400, json=self.refusal)
        if at == ("PUT", f"{PLANE}/v1/sandboxes/{SBX}/egress"):
            self.egress = self.answer_egress or body
            return httpx.Response(200, json=self.egress)
        return httpx.Response(404, json={"code": "not_found", "message": "not faked"})

    def bodies(self, method: str, path: str) -> list[Any]:
        return [body for m, url, _, body in self.requests if (m, url) == (method, f"{PLANE}{path}")]

    @property
    def create_body(self) -> dict[str, Any]:
        (body,) = self.bodies("POST", "/v1/sandboxes")
        assert isinstance(body, dict)
        return body


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> FakePlane:
    """The fake control plane behind the sync and async clients."""
    fake = FakePlane()

    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


# --- create -----------------------------------------------------------------------------------------


def test_create_sends_exactly_the_normalised_policy(plane: FakePlane) -> None:
    policy = EgressPolicy("allowlist", allow=[" PyPI.org. ", "*.pythonhosted.org", "10.1.2.3/24"])
    with Sandbox.create(egress=policy, control_plane_url=PLANE) as sbx:
        sent = {"mode": "allowlist", "allow": ["pypi.org", "*.pythonhosted.org", "10.1.2.0/24"], "deny": []}
        assert plane.create_body["egress"] == sent
        assert plane.create_body["allowInternetAccess"] is True  # as without egress: the default
        assert isinstance(sbx.egress, SandboxEgress)
        assert sbx.egress.policy == policy
        got = sbx.get_info()
        assert isinstance(got, SandboxInfo) and got.egress.allow == sent["allow"]


def test_create_takes_a_mapping_of_the_options(plane: FakePlane) -> None:
    egress = {"mode": "open", "deny": ["169.254.0.1", "Ads.Example."]}
    with Sandbox.create(egress=egress, control_plane_url=PLANE) as sbx:
        sent = {"mode": "open", "allow": [], "deny": ["169.254.0.1/32", "ads.example"]}
        assert plane.create_body["egress"] == sent
        assert sbx.egress.policy == EgressPolicy("open", deny=["169.254.0.1/32", "ads.example"])


def test_no_egress_is_sent_when_none_is_given(plane: FakePlane) -> None:
    with Sandbox.create(allow_internet_access=False, control_plane_url=PLANE) as sbx:
        assert "egress" not in plane.create_body and plane.create_body["allowInternetAccess"] is False
        assert sbx.egress.policy == EgressPolicy("closed")  # the control plane's answer


def test_closed_is_accepted_with_allow_internet_access_false(plane: FakePlane) -> None:
    Sandbox.create(allow_internet_access=False, egress={"mode": "closed"}, control_plane_url=PLANE).close()
    assert plane.create_body["egress"] == CLOSED and plane.create_body["allowInternetAccess"] is False


def test_create_from_a_snapshot_sends_the_policy_given(plane: FakePlane) -> None:
    Sandbox.create(snapshot=SNAP, egress=EgressPolicy("closed"), control_plane_url=PLANE).close()
    assert plane.create_body["egress"] == CLOSED and "allowInternetAccess" not in plane.create_body


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        (
            {"allow_internet_access": False, "egress": EgressPolicy("open")},
            "egress",
            "must be mode 'closed' with allow_internet_access=False",
        ),
        (
            {"allow_internet_access": False, "egress": {"mode": "allowlist", "allow": ["pypi.org"]}},
            "egress",
            "must be mode 'closed' with allow_internet_access=False",
        ),
        ({"egress": {"mode": "allowlist", "allow": ["pypi.org", "::1"]}}, "egress.allow[1]", IPV6_RULE),
        ({"egress": {"mode": "open", "block": ["x"]}}, "egress.block", "is not an option (mode, allow, deny)"),
        ({"egress": {"allow": []}}, "egress.mode", MODE_RULE),
        ({"egress": {"mode": "closed", "deny": ["x.org"]}}, "egress.deny", "means nothing with mode 'closed'"),
        (
            {"egress": {"mode": "allowlist", "allow": [f"a{i}.example" for i in range(257)]}},
            "egress",
            "at most 256 entries in allow and deny",
        ),
        ({"egress": "closed"}, "egress", f"{NOT_A_POLICY}, got string"),
        ({"egress": ["closed"]}, "egress", f"{NOT_A_POLICY}, got list"),
    ],
)
async def test_a_bad_egress_is_refused_before_any_call(
    no_traffic: None, options: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(control_plane_url=PLANE, **options)
    assert (caught.value.field, caught.value.message) == (field, f"Sandbox.create: {field}: {message}")
    with pytest.raises(InvalidArgumentException) as async_caught:
        await AsyncSandbox.create(control_plane_url=PLANE, **options)
    assert (async_caught.value.field, async_caught.value.message) == (field, caught.value.message)


def test_egress_is_refused_with_a_pool(no_traffic: None) -> None:
    """A pool's slots have its config's egress: a policy given with ``pool`` would be silently lost."""
    pool = SandboxPool.__new__(SandboxPool)  # never started: the check comes first
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(pool=pool, egress={"mode": "closed"})
    assert caught.value.field == "egress"
    assert caught.value.message == "Sandbox.create: egress: is not accepted with pool"


# --- sbx.egress -------------------------------------------------------------------------------------


def test_update_puts_the_normalised_policy_with_the_sandbox_token(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert sbx.egress.policy == EgressPolicy("open")
        new = sbx.egress.update(EgressPolicy("allowlist", allow=["*.NPMJS.org", "1.2.3.4"]))
        sent = {"mode": "allowlist", "allow": ["*.npmjs.org", "1.2.3.4/32"], "deny": []}
        puts = [r for r in plane.requests if r[0] == "PUT"]
        assert [(url, auth, body) for _, url, auth, body in puts] == [
            (f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {TOKEN}", sent)
        ]
        assert new == EgressPolicy("allowlist", allow=["*.npmjs.org", "1.2.3.4/32"])
        assert sbx.egress.policy == new
        assert sbx.egress.update({"mode": "closed"}) == EgressPolicy("closed") == sbx.egress.policy
        assert plane.bodies("PUT", f"/v1/sandboxes/{SBX}/egress")[-1] == CLOSED


def test_policy_is_what_the_control_plane_answered(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.answer_egress = {"mode": "open", "allow": [], "deny": ["10.0.0.0/8"]}
        assert sbx.egress.update({"mode": "closed"}) == EgressPolicy("open", deny=["10.0.0.0/8"])
        assert sbx.egress.policy.deny == ("10.0.0.0/8",)
        plane.egress = CLOSED  # changed by another handle: any facts since tell this one
        sbx.get_info()
        assert sbx.egress.policy == EgressPolicy("closed")


def test_connect_reads_the_policy(plane: FakePlane) -> None:
    plane.egress = {"mode": "allowlist", "allow": ["pypi.org"], "deny": []}
    sbx = Sandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert sbx.egress.policy == EgressPolicy("allowlist", allow=["pypi.org"])
        assert "pypi.org" in repr(sbx.egress)
    finally:
        sbx.close()


def test_a_bad_update_is_refused_before_any_call(plane: FakePlane) -> None:
    too_many = [f"a{i}.example" for i in range(257)]
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        # Named as the control plane names them when it parses the same body (``sbx.egress.update``).
        for policy, field, message in (
            ({"mode": "open", "allow": ["pypi.org"]}, "allow", "allow: is for mode 'allowlist' only"),
            ({"mode": "allowlist", "allow": ["sk-live-123:x"]}, "allow[0]", f"allow[0]: {SHAPE_RULE}"),
            ({"mode": "closed", "extra": 1}, "extra", "extra: is not an option (mode, allow, deny)"),
            ({"mode": "open", "deny": too_many}, None, "at most 256 entries in allow and deny"),
            (None, "policy", f"policy: {NOT_A_POLICY}, got None"),
            ("closed", "policy", f"policy: {NOT_A_POLICY}, got string"),
        ):
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.egress.update(policy)  # type: ignore[arg-type]
            assert (caught.value.field, caught.value.message) == (field, f"sbx.egress.update: {message}")
            assert "sk-live-123" not in str(caught.value)
        assert plane.requests == []
        assert sbx.egress.policy == EgressPolicy("open")


def test_update_on_an_ended_sandbox_is_refused_before_any_call(plane: FakePlane) -> None:
    sbx = Sandbox.create(control_plane_url=PLANE)
    try:
        sbx.kill()
        plane.requests.clear()
        with pytest.raises(SandboxException) as caught:
            sbx.egress.update(EgressPolicy("closed"))
        assert caught.value.code == "sandbox_ended" and plane.requests == []
    finally:
        sbx.close()


def test_a_refusal_of_the_control_plane_keeps_the_policy(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.refusal = {
            "code": "invalid_argument",
            "message": "egress: the template cannot close egress",
            "context": {"field": "egress"},
        }
        with pytest.raises(InvalidArgumentException) as caught:
            sbx.egress.update(EgressPolicy("closed"))
        assert caught.value.field == "egress"
        assert sbx.egress.policy == EgressPolicy("open")


# --- the async handle -------------------------------------------------------------------------------


async def test_the_async_handle_creates_reads_and_updates(plane: FakePlane) -> None:
    egress = {"mode": "allowlist", "allow": ["PyPI.org"]}
    sbx = await AsyncSandbox.create(egress=egress, control_plane_url=PLANE)
    try:
        assert plane.create_body["egress"] == {"mode": "allowlist", "allow": ["pypi.org"], "deny": []}
        assert isinstance(sbx.egress, AsyncSandboxEgress)
        assert sbx.egress.policy == EgressPolicy("allowlist", allow=["pypi.org"])
        new = await sbx.egress.update({"mode": "open", "deny": ["10.1.2.3/16"]})
        assert new == EgressPolicy("open", deny=["10.1.0.0/16"]) == sbx.egress.policy
        (put,) = [r for r in plane.requests if r[0] == "PUT"]
        assert put[1:] == (
            f"{PLANE}/v1/sandboxes/{SBX}/egress",
            f"Bearer {TOKEN}",
            {"mode": "open", "allow": [], "deny": ["10.1.0.0/16"]},
        )
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.egress.update({"mode": "closed", "deny": ["a.example"]})
        assert caught.value.field == "deny"
    finally:
        await sbx.close()
    connected = await AsyncSandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert connected.egress.policy == EgressPolicy("open", deny=["10.1.0.0/16"])
    finally:
        await connected.close()
