"""The credential broker's rules in the Python SDK (issue 27 item 2): ``CredentialRule`` and
``Sandbox.create(credentials=...)`` checked with the rules of ``rules/credential-rules.ts`` and
``credentialRulesSchema`` (every rule, its field, its message, never the value), hosts normalised as
egress entries are. Cross-checked against the built TypeScript SDK (``dist/``, run with node) on random
hosts and random rule lists. The SDK's calls with rules are ``test_credentials.py``'s."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
from typing import Any

import pytest

from conftest import REPO
from sdk import AsyncSandbox, CredentialRule, InvalidArgumentException, Sandbox, SandboxPool, SecretRef
from sdk._check import Checker
from sdk.credential_rules import MAX_CREDENTIAL_RULES, check_credential_rules, parse_credential_host

ADDRESS_RULE = "is an address: a credential is bound to a domain name, which TLS can certify"
WILDCARD_RULE = "is a wildcard: a credential is bound to one exact host"
SHAPE_RULE = "is a domain or an IPv4 address or CIDR, without a scheme, port or path"
LABEL_RULE = 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'
IPV6_RULE = "IPv6 is not routed to sandboxes: give IPv4 addresses or domains"
SECRET_RULE = "must name a secret (1-2048 characters A-Z a-z 0-9 / _ + = . @ : -), never hold its value"
TRANSPORT_RULE = "header name is a transport header the gateway sets itself"
TOKEN_RULE = "header name must be an RFC 9110 token"
DUPLICATE_RULE = "duplicates another header ignoring case, _ and ."
NOT_A_RULE = "must be a CredentialRule or a mapping of host and headers"


def ok(host: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"host": host, "headers": {"authorization": "api-token"} if headers is None else headers}


# --- hosts ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "host"),
    [
        ("api.example.com", "api.example.com"),
        ("API.Example.", "api.example"),  # lower case, the trailing dot dropped: as egress entries
        ("  registry.npmjs.org \t", "registry.npmjs.org"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("localhost", "localhost"),  # one label is a name (the egress policy decides whether it is reached)
    ],
)
def test_hosts_are_normalised_as_egress_entries(raw: str, host: str) -> None:
    assert parse_credential_host(raw) == host
    assert CredentialRule(raw, {"authorization": "api-token"}).host == host


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("*.example.com", WILDCARD_RULE),
        ("*.Example.com.", WILDCARD_RULE),
        ("1.2.3.4", ADDRESS_RULE),
        ("10.0.0.0/8", ADDRESS_RULE),
        ("api.example.com:443", SHAPE_RULE),  # a port
        ("https://api.example.com", SHAPE_RULE),
        ("api.example.com/v1", SHAPE_RULE),
        ("::1", IPV6_RULE),
        ("a..b", LABEL_RULE),
        ("", "is not a domain name"),
        ("1.2.3", "is not an IPv4 address or a domain name"),
        ("api.*.com", 'a wildcard may only be a leading "*."'),
    ],
)
def test_each_host_rule_names_the_host_and_never_its_value(no_traffic: None, raw: str, rule: str) -> None:
    assert parse_credential_host(raw) == (None, rule)
    with pytest.raises(InvalidArgumentException) as caught:
        CredentialRule(raw, {"authorization": "api-token"})
    assert (caught.value.field, caught.value.code) == ("host", "invalid_argument")
    assert caught.value.message == f"CredentialRule: host: {rule}"
    with pytest.raises(InvalidArgumentException) as created:
        Sandbox.create(credentials=[ok("a.example"), ok(raw)])
    assert (created.value.field, created.value.message) == (
        "credentials[1].host",
        f"Sandbox.create: credentials[1].host: {rule}",
    )


# --- headers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "issues"),
    [
        ({}, [("headers", "give at least one header")]),
        (
            {"host": "t", "Content_Length": "t"},
            [("headers.host", TRANSPORT_RULE), ("headers.Content_Length", TRANSPORT_RULE)],
        ),
        ({"Proxy-Authorization": "t"}, [("headers.Proxy-Authorization", TRANSPORT_RULE)]),
        ({"bad header": "t"}, [("headers.bad header", TOKEN_RULE)]),
        (
            {"X-Api-Key": "t", "x_api_key": "t", "X.API.KEY": "t"},
            [("headers.x_api_key", DUPLICATE_RULE), ("headers.X.API.KEY", DUPLICATE_RULE)],
        ),
        ({f"x-h{i}": "t" for i in range(17)}, [("headers", "at most 16 headers")]),
        ({"authorization": "Bearer sk-live-123"}, [("headers.authorization", SECRET_RULE)]),
        # A value that is no secret name does not stop the name checks (zod 4: the refinement runs) ...
        (
            {"authorization": "sk live", "host": "t"},
            [("headers.authorization", SECRET_RULE), ("headers.host", TRANSPORT_RULE)],
        ),
        # ... a value of another kind does.
        (
            {"authorization": 5, "host": "t"},
            [("headers.authorization", "must be a secret name or a SecretRef, got number")],
        ),
        ("api-token", [("headers", "must be a mapping of header names to secret names, got string")]),
        (None, [("headers", "must be a mapping of header names to secret names, got None")]),
    ],
)
def test_each_header_rule_names_its_header(
    no_traffic: None, headers: Any, issues: list[tuple[str, str]]
) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        CredentialRule("api.example.com", headers)
    assert caught.value.field == issues[0][0]
    shown = "; ".join(f"{field}: {message}" for field, message in issues[:5])
    assert caught.value.message == f"CredentialRule: {shown}"
    assert "sk-live-123" not in str(caught.value) and "sk-live-123" not in repr(caught.value)
    with pytest.raises(InvalidArgumentException) as created:
        Sandbox.create(credentials=[{"host": "api.example.com", "headers": headers}])
    assert created.value.field == f"credentials[0].{issues[0][0]}"


def test_sixteen_headers_and_secret_refs_are_accepted() -> None:
    headers: dict[str, str | SecretRef] = {f"x-h{i}": f"secret-{i}" for i in range(15)}
    headers["authorization"] = SecretRef("gh-token", region="eu-west-1")
    rule = CredentialRule("api.github.com", headers)
    assert dict(rule.headers) == headers and len(rule.headers) == 16


# --- the list ---------------------------------------------------------------------------------------


def test_a_host_is_given_once_after_normalisation(no_traffic: None) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(
            credentials=[ok("api.example"), CredentialRule("API.example.", {"x-key": "k"}), ok(" api.EXAMPLE")]
        )
    assert caught.value.field == "credentials[1].host"
    assert caught.value.message == (
        "Sandbox.create: credentials[1].host: is given twice; credentials[2].host: is given twice"
    )


def test_at_most_32_rules_which_is_the_only_issue_then(no_traffic: None) -> None:
    rules = [ok(f"h{i}.example") for i in range(MAX_CREDENTIAL_RULES)]
    check = Checker("Sandbox.create")
    assert len(check_credential_rules(check, ("credentials",), rules)) == 32 and check.ok
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(credentials=[ok("*.bad"), *rules])  # zod 4 checks the length before any element
    assert caught.value.field == "credentials"
    assert caught.value.message == "Sandbox.create: credentials: at most 32 rules"


@pytest.mark.parametrize(
    ("credentials", "field", "message"),
    [
        ("api.example", "credentials", "must be a list, got string"),
        ({"host": "api.example"}, "credentials", "must be a list, got mapping"),
        (["api.example"], "credentials[0]", f"{NOT_A_RULE}, got string"),
        ([{"headers": {"a": "t"}}], "credentials[0].host", "must be a string, got None"),
        ([{**ok("api.example"), "value": "x"}], "credentials[0].value", "is not an option (host, headers)"),
    ],
)
async def test_the_list_and_its_items_are_checked_before_any_call(
    no_traffic: None, credentials: object, field: str, message: str
) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(credentials=credentials)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.message) == (field, f"Sandbox.create: {field}: {message}")
    with pytest.raises(InvalidArgumentException) as async_caught:
        await AsyncSandbox.create(credentials=credentials)  # type: ignore[arg-type]
    assert (async_caught.value.field, async_caught.value.message) == (field, caught.value.message)


def test_a_bad_host_or_item_stops_the_duplicate_check_and_header_issues_do_not(no_traffic: None) -> None:
    """As zod 4: an aborted rule (a host or headers of no use) hides a repeated host; a header issue
    does not."""
    with pytest.raises(InvalidArgumentException) as hidden:
        Sandbox.create(credentials=[ok("a.example"), ok("a.example"), ok("1.2.3.4")])
    assert hidden.value.message == f"Sandbox.create: credentials[2].host: {ADDRESS_RULE}"
    with pytest.raises(InvalidArgumentException) as shown:
        Sandbox.create(credentials=[ok("a.example", {}), ok("A.example")])
    assert shown.value.message == (
        "Sandbox.create: credentials[0].headers: give at least one header; credentials[1].host: is given twice"
    )


def test_credentials_are_refused_with_a_pool(no_traffic: None) -> None:
    pool = SandboxPool.__new__(SandboxPool)  # never started: the check comes first
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(pool=pool, credentials=[ok("api.example")])
    assert caught.value.field == "credentials"
    assert caught.value.message == "Sandbox.create: credentials: is not accepted with pool"


def test_a_rule_is_frozen_and_equal_by_value() -> None:
    rule = CredentialRule("API.example.", {"authorization": "api-token"})
    assert rule == CredentialRule("api.example", {"authorization": "api-token"})
    assert (rule.host, dict(rule.headers)) == ("api.example", {"authorization": "api-token"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.host = "other.example"  # type: ignore[misc]
    with pytest.raises(TypeError):
        rule.headers["x"] = "y"  # type: ignore[index]
    with pytest.raises(TypeError):
        CredentialRule("api.example")  # type: ignore[call-arg]


# --- against the TypeScript checker -----------------------------------------------------------------

#: Runs ``parseCredentialHost`` on each host and ``credentialRulesSchema`` (through ``parseOptions``, as
#: ``Sandbox.create`` does) on each list, from the built package.
SCRIPT = """
import { readFileSync } from 'node:fs';
const load = (m) => import(`${process.argv[1]}/dist/${m}.js`);
const [{ parseCredentialHost }, { credentialRulesSchema }, { parseOptions }] = await Promise.all(
  ['rules/credential-rules', 'sdk/sandbox-credentials', 'rules/parse-options'].map(load));
const { hosts, lists } = JSON.parse(readFileSync(0, 'utf8'));
const outcome = (list) => {
  try {
    return { rules: parseOptions(credentialRulesSchema, list, 'Sandbox.create', ['credentials']) };
  } catch (error) {
    return { field: error.field ?? null, message: error.message, code: error.code };
  }
};
console.log(JSON.stringify({ hosts: hosts.map(parseCredentialHost), lists: lists.map(outcome) }));
"""

_PIECES = [
    "a", "b", "z9", "api", "Example", "COM", "xn--bcher-kva", "-", "_", "*", "*.", ".", "..", ":", ":443",
    "/", "/8", "1", "10", "255", "256", "0", " ", "\t", "ü", "\u212a", "::", "http://", "%", "a-b",
    "x" * 63, "y" * 64,
]
_HEADER_NAMES = [
    "authorization", "Authorization", "x-api-key", "X_API_KEY", "x.api.key", "host", "Host", "te", "Upgrade",
    "proxy-authorization", "bad header", "", "x-ok", "cookie", "X-Token", "ü",
]
_SOURCES = ["api-token", "gh/token", "path/to:key@v1", "Bearer sk-live-123", "", "x" * 2049, "a=b+c"]


def random_host(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.25:  # an IPv4 address or CIDR, sometimes malformed
        octets = [str(rng.choice([0, 1, 10, 127, 255, 256, 300])) for _ in range(rng.choice([3, 4, 4, 5]))]
        host = ".".join(octets)
        return host + rng.choice(["", "", "/8", "/32", "/33", ":80", "."])
    if kind < 0.5:  # a well-formed name in other spellings
        words = ["api", "registry", "x1", "a-b", "npmjs", "xn--bcher-kva"]
        labels = [rng.choice(words) for _ in range(rng.randint(1, 4))]
        name = ".".join(labels) + rng.choice([".com", ".org", ".test", ""])
        name = "".join(c.upper() if rng.random() < 0.3 else c for c in name)
        return rng.choice(["", "*.", " "]) + name + rng.choice(["", ".", " ", ":443"])
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6)))


def random_list(rng: random.Random, hosts: list[str]) -> list[dict[str, Any]]:
    size = rng.choice([0, 1, 1, 2, 2, 3, 4, 33]) if rng.random() < 0.98 else 40
    rules = []
    for _ in range(size):
        count = rng.choice([0, 1, 1, 1, 2, 3, 17])
        if count == 17:
            headers = {f"x-h{i}": "api-token" for i in range(17)}
        else:
            headers = {rng.choice(_HEADER_NAMES): rng.choice(_SOURCES) for _ in range(count)}
        rules.append({"host": rng.choice(hosts), "headers": headers})
    return rules


def test_python_checks_as_typescript_does_on_random_hosts_and_lists() -> None:
    rng = random.Random(27)
    hosts = [random_host(rng) for _ in range(3000)]
    # Lists drawn from a few hosts, good ones mostly, so that repeats (after normalisation) are common.
    pool = ["api.example", "API.Example.", " api.example", "b.test", "registry.npmjs.org", "*.x.org", "1.2.3.4"]
    lists = [random_list(rng, pool) for _ in range(1000)]
    answer = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT, str(REPO)],
        input=json.dumps({"hosts": hosts, "lists": lists}),
        check=True,
        capture_output=True,
        text=True,
    )
    expected = json.loads(answer.stdout)
    for raw, typescript in zip(hosts, expected["hosts"], strict=True):
        same = typescript["host"] if "host" in typescript else (None, typescript["error"])
        assert parse_credential_host(raw) == same, raw
    outcomes = {"ok": 0, "refused": 0}
    for rules, typescript in zip(lists, expected["lists"], strict=True):
        check = Checker("Sandbox.create")
        try:
            checked = check_credential_rules(check, ("credentials",), rules)
            check.done()
        except InvalidArgumentException as error:
            outcomes["refused"] += 1
            assert {"field": error.field, "message": error.message, "code": error.code} == typescript, rules
        else:
            outcomes["ok"] += 1
            assert "rules" in typescript, (rules, typescript)
            assert [{"host": r.host, "headers": dict(r.headers)} for r in checked] == typescript["rules"]
    assert outcomes["ok"] > 100 and outcomes["refused"] > 100  # both sides exercised
