"""The lifecycle calls through the Python SDK (issue 28 item 3; ``sdk/sandbox.ts``,
``sdk/sandbox-lifecycle.ts``, ``rules/sandbox-metadata.ts``): ``Sandbox.create(metadata=...)`` sending
the map only when given, its rules checked before any call (cross-checked with the built TypeScript
schema); ``sbx.set_timeout(seconds)`` as ``POST /v1/sandboxes/:id/timeout`` with the sandbox's token, a
bad timeout refused before any call, the control plane's refusal past 8 h as
``InvalidArgumentException``, an ended sandbox refused at once; ``Sandbox.get_info(sandbox_id)`` with the
token or the operator key; ``Sandbox.list(metadata=..., state=...)`` with the operator key and the query
the control plane's ``listFilter`` reads; ``started_at`` and ``metadata`` in every ``SandboxInfo``; the
async twins. Against the fake control plane of ``test_egress.py`` with these calls added."""

from __future__ import annotations

import json
import subprocess
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from conftest import REPO
from test_egress import OPEN, PLANE, SBX, TOKEN, FakePlane, info

from sdk import (
    AsyncSandbox,
    AuthenticationException,
    InvalidArgumentException,
    Sandbox,
    SandboxException,
    SandboxInfo,
)
from sdk._sandbox_metadata import MAX_METADATA_ENTRIES

OPERATOR_KEY = "operator-key"
OTHER = "fedcba987654"
META = {"owner": "ci", "role": "web"}
EIGHT_HOURS = 8 * 3600
NOW = 1_899_996_400_000
PAST_8_H = {
    "code": "invalid_argument",
    "message": "timeoutMs: past the sandbox's longest lifetime (8 h from its creation, running plus suspended)",
    "context": {"field": "timeoutMs"},
}


class LifecyclePlane(FakePlane):
    """``test_egress.FakePlane`` with the metadata of create kept and shown, ``POST …/timeout`` (the
    deadline ``timeoutMs`` after ``NOW``, or ``timeout_refusal``), ``GET /v1/sandboxes/:id`` and
    ``GET /v1/sandboxes`` (``listed``) refused without a bearer, as the control plane refuses them."""

    def __init__(self) -> None:
        super().__init__()
        self.metadata: dict[str, str] = {}
        self.timeout_refusal: dict[str, Any] | None = None
        self.listed: Any = [info(OPEN, metadata=META), info(OPEN, sandboxId=OTHER, state="ended", endReason="killed")]

    def answer(self, request: httpx.Request) -> httpx.Response:
        method, url = request.method, request.url
        body: Any = json.loads(request.content) if request.content else None
        if (method, str(url)) == ("POST", f"{PLANE}/v1/sandboxes"):
            self.metadata = dict(body.get("metadata", {}))
            created = json.loads(super().answer(request).content)
            return httpx.Response(201, json={**created, "metadata": self.metadata})
        mine = url.host == "plane.test" and (
            (method, url.path) in (("GET", "/v1/sandboxes"), ("GET", f"/v1/sandboxes/{SBX}"))
            or (method, url.path) == ("POST", f"/v1/sandboxes/{SBX}/timeout")
        )
        if not mine:
            return super().answer(request)
        self.requests.append((method, str(url), request.headers.get("authorization"), body))
        if request.headers.get("authorization") is None:
            return httpx.Response(401, json={"code": "unauthenticated", "message": "a bearer token is required"})
        if url.path == "/v1/sandboxes":
            return httpx.Response(200, json=self.listed)
        if method == "GET":
            return httpx.Response(200, json=info(self.egress, metadata=self.metadata, startedAt=NOW))
        if self.timeout_refusal is not None:
            return httpx.Response(400, json=self.timeout_refusal)
        return httpx.Response(200, json=info(self.egress, metadata=self.metadata, deadlineAt=NOW + body["timeoutMs"]))

    def sent(self, method: str, path: str) -> list[tuple[str | None, Any]]:
        """The authorization and body of each request of ``method`` on ``path`` (query ignored)."""
        return [
            (auth, body) for m, url, auth, body in self.requests if m == method and httpx.URL(url).path == path
        ]

    def queries(self) -> list[list[tuple[str, str]]]:
        """The query of each ``GET /v1/sandboxes``, decoded as ``URLSearchParams`` decodes it."""
        return [
            parse_qsl(httpx.URL(url).query.decode(), keep_blank_values=True)
            for m, url, _, _ in self.requests
            if m == "GET" and httpx.URL(url).path == "/v1/sandboxes"
        ]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> LifecyclePlane:
    """The fake control plane behind the sync and async clients."""
    fake = LifecyclePlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    return fake


def refused(error: pytest.ExceptionInfo[InvalidArgumentException], field: str) -> None:
    assert error.value.field == field, error.value


# --- the facts ----------------------------------------------------------------------------------------


def test_the_facts_have_started_at_and_metadata() -> None:
    parsed = SandboxInfo.model_validate(info(OPEN, startedAt=NOW, metadata=META), strict=True)
    assert (parsed.started_at, parsed.metadata) == (NOW, META)
    for missing in ("startedAt", "metadata"):
        facts = info(OPEN)
        del facts[missing]
        with pytest.raises(ValueError):
            SandboxInfo.model_validate(facts, strict=True)
    with pytest.raises(ValueError):
        SandboxInfo.model_validate(info(OPEN, metadata={"k": 1}), strict=True)


# --- metadata at create -------------------------------------------------------------------------------


def test_create_sends_the_metadata_only_when_given(plane: LifecyclePlane) -> None:
    with Sandbox.create(metadata=META) as sbx:
        assert plane.create_body["metadata"] == META
        assert sbx.get_info().metadata == META
    plane.requests.clear()
    Sandbox.create().close()
    assert "metadata" not in plane.create_body
    plane.requests.clear()
    Sandbox.create(metadata={}).close()
    assert plane.create_body["metadata"] == {}


def test_the_limits_of_metadata_are_accepted(plane: LifecyclePlane) -> None:
    most = {f"k{i}": "v" for i in range(MAX_METADATA_ENTRIES)}
    edges = {"k" * 128: "v" * 1024, "🔑" * 128: "😀" * 1024, "zero\u200bwidth": "é and 😀 and tabs\u2003"}
    for metadata in (most, edges):
        plane.requests.clear()
        Sandbox.create(metadata=metadata).close()
        assert plane.create_body["metadata"] == metadata


SECRET = "s3cret-value"
#: (metadata, the field named): each refused before any call.
BAD_METADATA: list[tuple[object, str]] = [
    ("owner=ci", "metadata"),
    ([("owner", "ci")], "metadata"),
    ({1: "v"}, "metadata"),
    ({"": "v"}, "metadata"),
    ({"k" * 129: "v"}, "metadata"),
    ({"🔑" * 129: "v"}, "metadata"),  # code points, as zod counts (258 UTF-16 code units)
    ({"a\u0000": "v"}, "metadata"),
    ({"a\n": "v"}, "metadata"),
    ({"a\u007f": "v"}, "metadata"),
    ({"a\u0085": "v"}, "metadata"),  # C1 controls are Cc too
    ({"k": 5}, "metadata.k"),
    ({"k": None}, "metadata.k"),
    ({"k": "v" * 1025}, "metadata.k"),
    ({"k": "😀" * 1025}, "metadata.k"),
    ({"k": f"{SECRET}\n"}, "metadata.k"),
    ({"k": f"{SECRET}\u009f"}, "metadata.k"),
    ({f"k{i}": "v" for i in range(MAX_METADATA_ENTRIES + 1)}, "metadata"),
]


@pytest.mark.parametrize("metadata,field", BAD_METADATA, ids=[str(i) for i in range(len(BAD_METADATA))])
def test_bad_metadata_is_refused_before_any_call(plane: LifecyclePlane, metadata: object, field: str) -> None:
    with pytest.raises(InvalidArgumentException) as error:
        Sandbox.create(metadata=metadata)  # type: ignore[arg-type]
    refused(error, field)
    assert str(error.value).startswith("Sandbox.create: metadata")
    assert SECRET not in str(error.value) and "\u0000" not in str(error.value)
    with pytest.raises(InvalidArgumentException) as error:
        Sandbox.list(metadata=metadata)  # type: ignore[arg-type]
    refused(error, field)
    assert plane.requests == []


def test_the_metadata_rules_are_typescripts() -> None:
    """Every case above and the accepted edges, through the built ``sandboxMetadataSchema``: refused
    there exactly when refused here (TypeScript's field names a bad key itself; this SDK never echoes
    one)."""
    accepted: list[object] = [
        {}, {"k" * 128: "v" * 1024}, {"🔑" * 128: "😀" * 1024}, {"e\u0301" * 64: ""}, {"zero\u200bwidth": "😀"},
    ]  # fmt: skip
    cases = [(m, False) for m in accepted] + [(m, True) for m, _ in BAD_METADATA if isinstance(m, (dict, str, list))]
    wire = [m if not isinstance(m, dict) or all(isinstance(k, str) for k in m) else "not a map" for m, _ in cases]
    script = (
        "import('./dist/rules/sandbox-metadata.js').then((m) => process.stdout.write(JSON.stringify("
        "JSON.parse(require('fs').readFileSync(0, 'utf8')).map((c) => !m.sandboxMetadataSchema.safeParse(c).success))))"
    )
    out = subprocess.run(
        ["node", "-e", script], cwd=REPO, input=json.dumps(wire), capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [bad for _, bad in cases]


# --- set_timeout --------------------------------------------------------------------------------------


def test_set_timeout_posts_the_milliseconds_with_the_sandbox_token(plane: LifecyclePlane) -> None:
    with Sandbox.create() as sbx:
        answer = sbx.set_timeout(60)
        assert isinstance(answer, SandboxInfo) and answer.deadline_at == NOW + 60_000
        sbx.set_timeout(0.001)
        sbx.set_timeout(EIGHT_HOURS)
        sbx.set_timeout(1.5)
        assert plane.sent("POST", f"/v1/sandboxes/{SBX}/timeout") == [
            (f"Bearer {TOKEN}", {"timeoutMs": ms}) for ms in (60_000, 1, 28_800_000, 1_500)
        ]


@pytest.mark.parametrize("timeout", [0, -1, 0.0005, EIGHT_HOURS + 1, "60", True, None, float("nan"), float("inf")])
def test_a_bad_timeout_is_refused_before_any_call(plane: LifecyclePlane, timeout: object) -> None:
    with Sandbox.create() as sbx:
        plane.requests.clear()
        with pytest.raises(InvalidArgumentException) as error:
            sbx.set_timeout(timeout)  # type: ignore[arg-type]
        refused(error, "timeout")
        assert str(error.value).startswith("sbx.set_timeout: timeout")
        assert plane.requests == []


def test_past_8_hours_from_creation_is_the_control_planes_invalid_argument(plane: LifecyclePlane) -> None:
    plane.timeout_refusal = PAST_8_H
    with Sandbox.create() as sbx:
        with pytest.raises(InvalidArgumentException) as error:
            sbx.set_timeout(EIGHT_HOURS)
        refused(error, "timeoutMs")
        assert "8 h" in str(error.value)
        assert sbx.get_info().state == "running"  # the handle goes on


def test_an_ended_sandbox_refuses_set_timeout_at_once(plane: LifecyclePlane) -> None:
    sbx = Sandbox.create()
    sbx.kill()
    plane.requests.clear()
    with pytest.raises(SandboxException) as error:
        sbx.set_timeout(60)
    assert error.value.code == "sandbox_ended" and plane.requests == []
    sbx.close()


def test_an_answer_that_says_ended_is_remembered(plane: LifecyclePlane) -> None:
    plane.timeout_refusal = {"code": "sandbox_ended", "message": "sandbox 0123456789ab has ended"}
    sbx = Sandbox.create()
    with pytest.raises(SandboxException):
        sbx.set_timeout(60)
    plane.requests.clear()
    with pytest.raises(SandboxException) as error:
        sbx.set_timeout(60)
    assert error.value.code == "sandbox_ended" and plane.requests == []
    sbx.close()


# --- Sandbox.get_info ---------------------------------------------------------------------------------


def test_get_info_by_id_with_the_operator_key_or_a_token(plane: LifecyclePlane) -> None:
    plane.metadata = META
    facts = Sandbox.get_info(SBX)
    assert isinstance(facts, SandboxInfo)
    assert (facts.sandbox_id, facts.metadata, facts.started_at) == (SBX, META, NOW)
    Sandbox.get_info(SBX, access_token=TOKEN, control_plane_url=PLANE, request_timeout=5)
    assert plane.sent("GET", f"/v1/sandboxes/{SBX}") == [(f"Bearer {OPERATOR_KEY}", None), (f"Bearer {TOKEN}", None)]


def test_get_info_on_a_handle_is_its_own(plane: LifecyclePlane) -> None:
    with Sandbox.create(metadata=META) as sbx:
        plane.requests.clear()
        assert sbx.get_info().metadata == META
        assert plane.sent("GET", f"/v1/sandboxes/{SBX}") == [(f"Bearer {TOKEN}", None)]


def test_get_info_without_a_key_or_token_is_refused_by_the_control_plane(
    plane: LifecyclePlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SDK_API_KEY")
    with pytest.raises(AuthenticationException):
        Sandbox.get_info(SBX)
    with pytest.raises(AuthenticationException):
        Sandbox.list()


@pytest.mark.parametrize(
    "sandbox_id,options,field",
    [
        ("0123456789AB", {}, "sandbox_id"),
        ("0123456789a", {}, "sandbox_id"),
        (123, {}, "sandbox_id"),
        (SBX, {"access_token": ""}, "access_token"),
        (SBX, {"access_token": 5}, "access_token"),
        (SBX, {"control_plane_url": "ftp://plane.test"}, "control_plane_url"),
        (SBX, {"request_timeout": 0}, "request_timeout"),
    ],
)
def test_get_info_checks_its_arguments_before_any_call(
    plane: LifecyclePlane, sandbox_id: object, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as error:
        Sandbox.get_info(sandbox_id, **options)  # type: ignore[arg-type]
    refused(error, field)
    assert str(error.value).startswith("Sandbox.get_info: ")
    assert plane.requests == []


# --- Sandbox.list -------------------------------------------------------------------------------------


def test_list_with_the_operator_key_and_no_filter(plane: LifecyclePlane) -> None:
    listed = Sandbox.list()
    assert [(s.sandbox_id, s.state, s.metadata) for s in listed] == [(SBX, "running", META), (OTHER, "ended", {})]
    assert all(isinstance(s, SandboxInfo) for s in listed)
    assert plane.sent("GET", "/v1/sandboxes") == [(f"Bearer {OPERATOR_KEY}", None)]
    assert plane.queries() == [[]]
    Sandbox.list(state=[])  # no state: every one
    assert plane.queries()[-1] == []


def test_list_sends_each_state_and_the_metadata_in_one_parameter(plane: LifecyclePlane) -> None:
    wanted = {"owner": "ci", "a b": "c&d=e+f", "ключ": "😀"}
    Sandbox.list(metadata=wanted, state=["running", "suspended"], control_plane_url=PLANE)
    Sandbox.list(metadata={}, state=("ended",))
    first, second = plane.queries()
    assert [value for name, value in first if name == "state"] == ["running", "suspended"]
    (metadata,) = [value for name, value in first if name == "metadata"]
    # The control plane reads the parameter as URLSearchParams: the same entries back.
    assert dict(parse_qsl(metadata, keep_blank_values=True)) == wanted
    assert second == [("state", "ended"), ("metadata", "")]


def test_the_list_query_is_what_the_control_planes_filter_reads(plane: LifecyclePlane) -> None:
    """The built ``URLSearchParams`` reading of the query this SDK sends gives the states and entries."""
    wanted = {"owner": "ci", "a b": "c&d=e+f", "ключ": "😀", "pct": "100%"}
    Sandbox.list(metadata=wanted, state=["running", "ended"])
    (url,) = [url for m, url, _, _ in plane.requests if m == "GET"]
    script = (
        "const q = new URL(process.argv[1]).searchParams; process.stdout.write(JSON.stringify({ state: "
        "q.getAll('state'), metadata: Object.fromEntries(new URLSearchParams(q.get('metadata')).entries()) }))"
    )
    out = subprocess.run(["node", "-e", script, url], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == {"state": ["running", "ended"], "metadata": wanted}


@pytest.mark.parametrize(
    "options,field",
    [
        ({"state": "running"}, "state"),
        ({"state": ["running", "paused"]}, "state[1]"),
        ({"state": [None]}, "state[0]"),
        ({"metadata": {"k": 1}}, "metadata.k"),
        ({"control_plane_url": "plane.test"}, "control_plane_url"),
        ({"request_timeout": -1}, "request_timeout"),
    ],
)
def test_list_checks_its_arguments_before_any_call(
    plane: LifecyclePlane, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as error:
        Sandbox.list(**options)
    refused(error, field)
    assert str(error.value).startswith("Sandbox.list: ")
    assert plane.requests == []


def test_a_list_answer_that_is_not_a_list_of_facts_is_malformed(plane: LifecyclePlane) -> None:
    answers: list[Any] = [{"sandboxes": []}, [{"sandboxId": SBX}]]
    for answer in answers:
        plane.listed = answer
        with pytest.raises(SandboxException, match="malformed answer"):
            Sandbox.list()


# --- the async twins ----------------------------------------------------------------------------------


async def test_async_create_set_timeout_get_info_and_list(plane: LifecyclePlane) -> None:
    async with await AsyncSandbox.create(metadata=META) as sbx:
        assert plane.create_body["metadata"] == META
        answer = await sbx.set_timeout(90)
        assert answer.deadline_at == NOW + 90_000
        assert (await sbx.get_info()).metadata == META
        with pytest.raises(InvalidArgumentException) as error:
            await sbx.set_timeout(EIGHT_HOURS + 1)
        refused(error, "timeout")
    assert plane.sent("POST", f"/v1/sandboxes/{SBX}/timeout") == [(f"Bearer {TOKEN}", {"timeoutMs": 90_000})]
    with pytest.raises(SandboxException) as ended:
        await sbx.set_timeout(60)  # the handle killed it at exit
    assert ended.value.code == "sandbox_ended"

    plane.requests.clear()
    facts = await AsyncSandbox.get_info(SBX, access_token=TOKEN)
    assert (facts.sandbox_id, facts.metadata) == (SBX, META)
    listed = await AsyncSandbox.list(metadata={"owner": "ci"}, state=["running"])
    assert [s.sandbox_id for s in listed] == [SBX, OTHER]  # the fake does not filter
    assert plane.sent("GET", f"/v1/sandboxes/{SBX}") == [(f"Bearer {TOKEN}", None)]
    assert plane.sent("GET", "/v1/sandboxes") == [(f"Bearer {OPERATOR_KEY}", None)]
    assert plane.queries() == [[("state", "running"), ("metadata", "owner=ci")]]


async def test_async_refusals_before_any_call(plane: LifecyclePlane) -> None:
    with pytest.raises(InvalidArgumentException) as error:
        await AsyncSandbox.create(metadata={"k": "v\n"})
    refused(error, "metadata.k")
    with pytest.raises(InvalidArgumentException) as error:
        await AsyncSandbox.get_info("nope")
    refused(error, "sandbox_id")
    with pytest.raises(InvalidArgumentException) as error:
        await AsyncSandbox.list(state=["paused"])  # type: ignore[list-item]
    refused(error, "state[0]")
    assert plane.requests == []
    plane.timeout_refusal = PAST_8_H
    async with await AsyncSandbox.create() as sbx:
        with pytest.raises(InvalidArgumentException) as error:
            await sbx.set_timeout(EIGHT_HOURS)
        refused(error, "timeoutMs")
