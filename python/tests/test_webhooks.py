"""Signed webhooks through the Python SDK (issue 28; ``protocol/webhook-wire.ts``, ``rules/webhook-url.ts``):
``Sandbox.create(webhook_url=...)`` (and ``AsyncSandbox.create``) sending ``webhookUrl`` only when given,
as zod outputs it (trimmed, tabs and newlines removed), a bad one refused before any call, the rules
cross-checked with the built TypeScript schema; ``verify_webhook_signature`` and ``webhook_signature``
equal to TypeScript's ``verifyWebhookSignature`` and ``webhookSignature`` (a fixed vector computed with
Node, and the built ``dist/protocol/webhook-wire.js`` on many cases: bodies with non-ASCII text and
lone surrogates, bytes, several signatures, stale and future timestamps, malformed headers), and
``WebhookEvent`` taking what ``webhookEventSchema`` takes. Against the fake control plane of
``test_egress.py``."""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest

from _httpx_fake import answer_httpx_with
from conftest import REPO
from test_egress import PLANE, FakePlane

import sdk
from sdk import (
    WEBHOOK_EVENT_TYPES,
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
    AsyncSandbox,
    InvalidArgumentException,
    Sandbox,
    WebhookEvent,
    verify_webhook_signature,
)
from sdk._check import Checker
from sdk.webhooks import (
    MAX_WEBHOOK_URL,
    WEBHOOK_TOLERANCE_SECONDS,
    WEBHOOK_URL_PLAIN_RULE,
    WEBHOOK_URL_RULE,
    check_webhook_url,
    webhook_signature,
)

#: ``node -e "const c=require('crypto');console.log('v1='+c.createHmac('sha256','whsec-test-secret-0123')
#: .update('1800000000.{\"id\":\"evt_1\",\"type\":\"sandbox.lifecycle.created\"}').digest('hex'))"``
NODE_VECTOR = (
    "whsec-test-secret-0123",
    1_800_000_000,
    '{"id":"evt_1","type":"sandbox.lifecycle.created"}',
    "v1=f3e99a33217d73926fd79f21598772fa9a4b87cbaf2a01ef111fa98991cab92a",
)
HOOK = "https://hooks.example.com/sdk?route=ci"


def node(script: str, cases: object) -> Any:
    """Runs ``script`` with the built TypeScript (``dist/``), ``cases`` as JSON on its stdin; its JSON."""
    out = subprocess.run(
        ["node", "-e", script], cwd=REPO, input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> FakePlane:
    """The fake control plane behind the sync and async clients."""
    fake = FakePlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


# --- webhook_url at create ----------------------------------------------------------------------------


def test_create_sends_the_webhook_url_only_when_given(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE):
        assert "webhookUrl" not in plane.create_body
    plane.requests.clear()
    with Sandbox.create(webhook_url=HOOK, metadata={"owner": "ci"}, control_plane_url=PLANE):
        assert plane.create_body["webhookUrl"] == HOOK
        assert plane.create_body["metadata"] == {"owner": "ci"}
    plane.requests.clear()
    # As zod outputs it: trimmed, ASCII tabs and newlines removed (the URL parser ignores them too).
    with Sandbox.create(webhook_url=" http://127.0.0.1:9/\thook\n ", control_plane_url=PLANE):
        assert plane.create_body["webhookUrl"] == "http://127.0.0.1:9/hook"


async def test_async_create_sends_the_webhook_url(plane: FakePlane) -> None:
    async with await AsyncSandbox.create(webhook_url=HOOK, control_plane_url=PLANE):
        assert plane.create_body["webhookUrl"] == HOOK
    plane.requests.clear()
    with pytest.raises(InvalidArgumentException) as caught:
        await AsyncSandbox.create(webhook_url="ftp://x.example/", control_plane_url=PLANE)
    assert caught.value.field == "webhook_url"
    assert plane.requests == []


BAD_URLS: list[object] = [
    "", "hooks.example.com/in", "ftp://x.example/", "http:x.example", "http://", "http://x:99999/",
    "http://1.2.3.256/", "http://ex ample.com/", "http://user:pass@x.example/", "http://user@x.example/",
    "http://:pass@x.example/", "https://x.example/#frag", "https://x.example/?a=b#", "javascript:alert(1)",
    "https://x.example/" + "a" * (MAX_WEBHOOK_URL - len("https://x.example/") + 1), 5, True, ["https://x/"],
    {"url": HOOK},
]  # fmt: skip


@pytest.mark.parametrize("url", BAD_URLS, ids=lambda url: repr(url)[:40])
def test_a_bad_webhook_url_is_refused_before_any_call(plane: FakePlane, url: object) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(webhook_url=url, control_plane_url=PLANE)  # type: ignore[arg-type]
    assert caught.value.field == "webhook_url"
    assert caught.value.message.startswith("Sandbox.create: webhook_url: ")
    if isinstance(url, str) and len(url) > 12:
        assert url not in caught.value.message  # a URL may carry a credential: never echoed
    assert plane.requests == []


def test_the_longest_webhook_url_and_loopback_are_accepted(plane: FakePlane) -> None:
    longest = "https://x.example/" + "a" * (MAX_WEBHOOK_URL - len("https://x.example/"))
    for url in (longest, "http://127.0.0.1:8080/hook", "http://[::1]:8080/", "HTTPS://X.EXAMPLE", "http://@x.example/"):
        plane.requests.clear()
        with Sandbox.create(webhook_url=url, control_plane_url=PLANE):
            assert plane.create_body["webhookUrl"] == url


#: Destinations the rules are cross-checked on (zod's guard, the WHATWG parser's hosts and ports, user
#: info, fragments, lengths in code points, spaces JavaScript trims, tabs and newlines removed).
URL_CASES: list[object] = [
    5, None, True, [], "http://a:b@x", "http://@x/", "http://:@x", "http://a:@x", "http://:p@x", "http://x/#",
    " http://x/ ", "http://x\t/y", "h\ttp://x/", "http://x/\n", "ftp://x", "http:x", "http:///x", "http:\\\\x\\y",
    "http://x:99999", "https://x.com:0/", "https://x.com:65535/", "https://x.com:/", "http://x.com:80a/",
    "http://1.2.3.256/", "http://0x7f.1/", "http://1.2.3/", "http://x.1/", "http://0/", "http://4294967296/",
    "http://ex ample/", "http://x\u0001", "HTTP://X", "http://[::1]:80/", "http://[::1/", "http://[1::]/",
    "http://[::1]x/", "http://x?a=b#", "http://\u00e9.com/", "https://\u00fc.example/#f", "http://\u00df.de/",
    "http://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com", "http://ex\uff0fample", "http://a\u3002b/",
    "http://x%41.com/", "http://x%2541.com", "http://x%20y.com", "http://%zz/", "http://%E2%98%83.com/",
    "http://x..com/", "http://-x.com/", "http://x_y.com/", "http://xn--zz/", "http://xn--a/", "http://xn----/",
    "http://x\u200d.com/", "http://\u00ad.com", "http://\u0301x.com/", "http://a@b@c/", "http://x/p?q=@",
    "not a url", "", " ", "https://", "\u00a0http://x/\u3000", "javascript:alert(1)", "mailto:a@b",
    "xhttps://u@h/", "https://hooks.example.com/in?key=abc", "http://127.0.0.1:8080/hook",
    "http://" + "a" * 2040, "http://" + "a" * 2041, "http://" + "a" * 2042, "http://x.com/" + "a" * 2035,
    "http://x.com/" + "\U0001f600" * 2035, "http://" + "\u00e9" * 2041, "\t" + "http://x.com/" + "a" * 2035,
]  # fmt: skip
CHECK_URLS = (
    "import('./dist/rules/webhook-url.js').then(({ webhookUrlSchema }) => {"
    " const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    " process.stdout.write(JSON.stringify(cases.map((v) => { const r = webhookUrlSchema.safeParse(v);"
    " return r.success ? { ok: r.data } : { issues: r.error.issues.map((i) => i.message) }; }))); })"
)


def python_verdict(url: object) -> dict[str, Any]:
    check = Checker("Sandbox.create")
    given = check_webhook_url(check, ("webhook_url",), url)
    return {"ok": given} if check.ok else {"issues": [message for _, message, _ in check.issues]}


def test_the_webhook_url_rules_are_typescripts() -> None:
    cases = [url for url in URL_CASES if url is not None]
    typescript = node(CHECK_URLS, cases)
    assert [python_verdict(url) for url in cases] == typescript
    assert check_webhook_url(Checker("x"), ("webhook_url",), None) is None  # not given


def test_the_webhook_url_rules_agree_with_typescript_on_random_urls() -> None:
    """Random strings of URL pieces: the same verdict, the same first message and the same URL sent."""
    rng = random.Random(28)
    pieces = list("ab.-:/@#?%[]\\ \t19xX_~\u00e9\u00a0\u00df\uff21\u3002") + ["xn--", "http://", "::", "%41", "%2e"]
    starts = ["http://", "https://", "HTTP://", "http:", ""]
    cases = [
        rng.choice(starts) + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(600)
    ]
    for url, typescript in zip(cases, node(CHECK_URLS, cases)):
        python = python_verdict(url)
        assert python.get("ok") == typescript.get("ok"), url
        assert python.get("issues", [None])[0] == typescript.get("issues", [None])[0], url


def test_the_rule_messages_are_typescripts() -> None:
    assert python_verdict("ftp://x")["issues"] == [WEBHOOK_URL_RULE]
    assert python_verdict("http://a:b@x/")["issues"] == [WEBHOOK_URL_PLAIN_RULE]
    assert python_verdict("https://x/" + "a" * 2048)["issues"] == [f"must be at most {MAX_WEBHOOK_URL} characters"]


# --- the signature ------------------------------------------------------------------------------------


def test_the_signature_is_typescripts() -> None:
    secret, timestamp, body, signature = NODE_VECTOR
    assert webhook_signature(secret, timestamp, body) == signature
    assert webhook_signature(secret, timestamp, body.encode()) == signature  # the raw bytes, the same
    now = timestamp + 10
    assert verify_webhook_signature(secret, str(timestamp), body, signature, now=now)
    assert verify_webhook_signature(secret, str(timestamp), body.encode(), signature, now=now)
    assert not verify_webhook_signature(secret, str(timestamp), body + " ", signature, now=now)
    assert not verify_webhook_signature("another-secret-0123", str(timestamp), body, signature, now=now)


SIGN = (
    "import('./dist/protocol/webhook-wire.js').then((m) => {"
    " const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    " process.stdout.write(JSON.stringify(cases.map(([s, t, b]) => m.webhookSignature(s, t, b)))); })"
)
VERIFY = (
    "import('./dist/protocol/webhook-wire.js').then((m) => {"
    " const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    " process.stdout.write(JSON.stringify(cases.map(([secret, timestamp, body, signature, now, tolerance]) =>"
    " m.verifyWebhookSignature({ secret, body, timestamp: timestamp ?? undefined, signature: signature ?? undefined,"
    " now: now * 1000, ...(tolerance === null ? {} : { toleranceSeconds: tolerance }) })))); })"
)


def test_signatures_match_the_built_typescript() -> None:
    bodies = [
        "", "{}", '{"id":"e","metadata":{"owner":"ci"}}', "caf\u00e9 \u2603 \U0001f600", "a\nb\r\n",
        "\ud800 lone", "pair \ud83d\ude00", "x" * 100_000,
    ]  # fmt: skip
    cases = [
        (secret, ts, body)
        for secret in ("s", "whsec-\u00e9\U0001f511-0123456789", "x" * 200)
        for ts in (0, 1_800_000_000, 999_999_999_999)
        for body in bodies
    ]
    assert node(SIGN, cases) == [webhook_signature(s, t, b) for s, t, b in cases]


def test_verification_matches_the_built_typescript() -> None:
    secret, ts, body = "whsec-test-secret-0123", 1_800_000_000, '{"id":"evt_1"}'
    good = webhook_signature(secret, ts, body)
    other = webhook_signature("another-secret-012345", ts, body)
    cases: list[tuple[str, str | None, str, str | None, float, float | None]] = [
        (secret, str(ts), body, good, ts, None),
        (secret, str(ts), body, good, ts + 300, None),  # exactly at the tolerance: taken
        (secret, str(ts), body, good, ts + 300.001, None),
        (secret, str(ts), body, good, ts - 300, None),
        (secret, str(ts), body, good, ts - 301, None),
        (secret, str(ts), body, good, ts + 3600, 3600),
        (secret, str(ts), body, good, ts + 3601, 3600),
        (secret, str(ts), body, good, ts, 0),
        (secret, str(ts), body + " ", good, ts, None),
        (secret, str(ts + 1), body, good, ts, None),
        (secret, str(ts), body, other, ts, None),
        (secret, str(ts), body, f"{other} {good}", ts, None),  # several: any may match
        (secret, str(ts), body, f"{good} {other}", ts, None),
        (secret, str(ts), body, f"  {good}", ts, None),
        (secret, str(ts), body, f"{good}\t", ts, None),
        (secret, str(ts), body, good.upper(), ts, None),
        (secret, str(ts), body, good.removeprefix("v1="), ts, None),
        (secret, str(ts), body, "v0=" + good[3:], ts, None),
        (secret, str(ts), body, "", ts, None),
        (secret, None, body, good, ts, None),
        (secret, str(ts), body, None, ts, None),
        (secret, "", body, good, ts, None),
        (secret, " " + str(ts), body, good, ts, None),
        (secret, str(ts) + "\n", body, good, ts, None),
        (secret, "1.8e9", body, good, ts, None),
        (secret, "-1", body, good, ts, None),
        (secret, "\u0661\u0668\u0660\u0660", body, good, ts, None),  # Arabic-Indic digits: not \d in JS
        (secret, "00" + str(ts), body, good, ts, None),  # 12 digits: signed over the number, 1800000000
        (secret, "000" + str(ts), body, good, ts, None),  # 13 digits: refused
        (secret, "1", body, webhook_signature(secret, 1, body), 1, None),
        (secret, "0", body, webhook_signature(secret, 0, body), 0, None),
        ("\u00e9\U0001f511", str(ts), "\u2603", webhook_signature("\u00e9\U0001f511", ts, "\u2603"), ts, None),
    ]
    typescript = node(VERIFY, cases)
    python = [
        verify_webhook_signature(s, t, b, sig, WEBHOOK_TOLERANCE_SECONDS if tol is None else tol, now=now)
        for s, t, b, sig, now, tol in cases
    ]
    assert python == typescript
    assert typescript[:3] == [True, True, False]  # the corpus exercises both answers


def test_verification_defaults_to_the_clock_and_never_raises() -> None:
    import time

    secret, body = "whsec-test-secret-0123", "{}"
    now = int(time.time())
    assert verify_webhook_signature(secret, str(now), body, webhook_signature(secret, now, body))
    stale = now - WEBHOOK_TOLERANCE_SECONDS - 5
    assert not verify_webhook_signature(secret, str(stale), body, webhook_signature(secret, stale, body))
    assert verify_webhook_signature(secret, str(stale), body, webhook_signature(secret, stale, body), 3600)
    for timestamp, signature in ((5, "v1=x"), (str(now), 5), (b"1", "v1=x"), (str(now), b"v1=x")):
        assert verify_webhook_signature(secret, timestamp, body, signature) is False  # type: ignore[arg-type]


def test_the_names_are_typescripts() -> None:
    exported = node(
        "import('./dist/control-plane/index.js').then((m) => process.stdout.write(JSON.stringify(["
        "m.WEBHOOK_ID_HEADER, m.WEBHOOK_TIMESTAMP_HEADER, m.WEBHOOK_SIGNATURE_HEADER, m.WEBHOOK_EVENT_TYPES,"
        " typeof m.verifyWebhookSignature])))",
        None,
    )
    assert exported == [
        WEBHOOK_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_SIGNATURE_HEADER, list(WEBHOOK_EVENT_TYPES), "function",
    ]  # fmt: skip
    assert sdk.verify_webhook_signature is verify_webhook_signature
    assert WEBHOOK_TOLERANCE_SECONDS == 300


# --- the event ----------------------------------------------------------------------------------------


def test_the_event_model_takes_what_the_schema_takes() -> None:
    event = {
        "id": "whk_1", "type": "sandbox.lifecycle.paused", "sandboxId": "0123456789ab", "seq": 4,
        "at": 1_800_000_000_123, "state": "suspended", "reason": "idle", "template": "sdk-base",
        "metadata": {"owner": "ci"},
    }  # fmt: skip
    variants = [event, {**event, "reason": None, "type": "sandbox.lifecycle.created", "state": "running"}]
    bad = [{**event, "extra": 1}, {**event, "type": "sandbox.created"}, {**event, "seq": -1}, {**event, "reason": "x"}]
    typescript = node(
        "import('./dist/protocol/webhook-wire.js').then((m) => {"
        " const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        " process.stdout.write(JSON.stringify(cases.map((c) => m.webhookEventSchema.safeParse(c).success))); })",
        variants + bad,
    )
    python = []
    for case in variants + bad:
        try:
            WebhookEvent.model_validate_json(json.dumps(case))
            python.append(True)
        except ValueError:
            python.append(False)
    assert python == typescript == [True, True, False, False, False, False]
    parsed = WebhookEvent.model_validate_json(json.dumps(event))
    assert (parsed.type, parsed.sandbox_id, parsed.state, parsed.reason, parsed.metadata) == (
        "sandbox.lifecycle.paused", "0123456789ab", "suspended", "idle", {"owner": "ci"},
    )  # fmt: skip
