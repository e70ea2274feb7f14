"""The E2B shim's lifecycle calls over the native ones (issue 28 item 3), as the TypeScript shim's
(``test/unit/compat-e2b-lifecycle.test.ts``), after E2B's own Python SDK tests
(``tests/sync/sandbox_sync/test_timeout.py``, ``tests/sync/api_sync/test_sbx_list.py``,
``tests/sync/api_sync/test_sbx_info.py`` and their async twins): ``metadata`` at create, in ``get_info``
(with ``started_at``) and matched by ``Sandbox.list(query=SandboxQuery(metadata=...))``; ``set_timeout`` on
a handle and by id shortening and extending the lifetime, refused past 8 h from creation as E2B's
``InvalidArgumentException``; ``connect(timeout=...)`` extending it; the list's state, start, order and
pages; ``beta_pause``. Against a fake control plane (httpx's ``send`` answered here, as in
``test_compat_e2b_network.py``) that keeps sandboxes as the real one answers for them: facts with
``startedAt`` and ``metadata``, the list filtered by ``state`` and ``metadata``, the timeout refused past
8 h from ``startedAt``."""

from __future__ import annotations

import json
import time
import urllib.parse
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator

import httpx
import pytest

from _httpx_fake import answer_httpx_with

from sdk import InvalidArgumentException as NativeInvalidArgumentException
from sdk.compat.e2b import (
    AsyncSandbox,
    InvalidArgumentException,
    NotSupportedException,
    Sandbox,
    SandboxException,
    SandboxInfo,
    SandboxNotFoundException,
    SandboxQuery,
    SandboxState,
)
from sdk.compat.e2b._options import TOKENS

PLANE = "http://plane.test"
DAEMON = "http://daemon.test"
KEY = "operator-key"
HOUR = 3600
#: The longest lifetime, from creation (``LIMITS.sandboxMaxTimeoutMs``).
MAX_MS = 8 * HOUR * 1000


def now_ms() -> float:
    return time.time() * 1000


class FakePlane:
    """Keeps sandboxes as the control plane does: create (started a second apart, an hour ago, so the order
    is by start and 8 h count from it), their facts (ended once past their deadline), the list filtered by
    ``state`` and ``metadata``, the timeout, pause, connect, kill, and sandboxd's ``PUT /v1/secrets``;
    records each request's method, path, query, authorization and body."""

    def __init__(self) -> None:
        self.sandboxes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, str] = {}
        self.requests: list[tuple[str, str, dict[str, list[str]], str | None, Any]] = []

    def facts(self, sandbox_id: str) -> dict[str, Any]:
        info = self.sandboxes[sandbox_id]
        if info["state"] != "ended" and info["deadlineAt"] <= now_ms():
            info.update(state="ended", endReason="timeout")
        return info

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        url = urllib.parse.urlsplit(str(request.url))
        base, path = f"{url.scheme}://{url.netloc}", url.path
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        auth = request.headers.get("authorization")
        self.requests.append((request.method, f"{base}{path}", query, auth, body))

        def refuse(status: int, code: str, message: str, **context: str) -> httpx.Response:
            envelope = {"code": code, "message": message, **({"context": context} if context else {})}
            return httpx.Response(status, json=envelope)

        if (request.method, base, path) == ("PUT", DAEMON, "/v1/secrets"):
            return httpx.Response(200, json={"names": sorted(body["envs"])})
        if base != PLANE:  # sandboxd's gateways, read by connect: refused as a wrong token is
            return refuse(401, "unauthenticated", "not faked")
        if (request.method, path) == ("POST", "/v1/sandboxes"):
            assert auth == f"Bearer {KEY}"
            sandbox_id = f"{len(self.sandboxes) + 1:012x}"
            self.sandboxes[sandbox_id] = {
                "sandboxId": sandbox_id, "template": body.get("template", "sdk-base"), "isolation": "namespace",
                "state": "running", "allowInternetAccess": True, "egress": {"mode": "open", "allow": [], "deny": []},
                "endReason": None, "suspendReason": None, "deadlineAt": now_ms() + body["timeoutMs"],
                "startedAt": now_ms() - HOUR * 1000 + len(self.sandboxes) * 1000,
                "metadata": body.get("metadata", {}), "seq": 1,
            }  # fmt: skip
            self.tokens[sandbox_id] = f"token-{sandbox_id}-" + "x" * 8
            created = {
                **self.sandboxes[sandbox_id], "daemonUrl": DAEMON, "accessToken": self.tokens[sandbox_id],
                "previewKey": "k", "previewUrl": f"{PLANE}/{{port}}/",
            }  # fmt: skip
            return httpx.Response(201, json=created)
        if (request.method, path) == ("GET", "/v1/sandboxes"):
            assert auth == f"Bearer {KEY}"
            states = [s for value in query.get("state", []) for s in value.split(",")]
            wanted = dict(urllib.parse.parse_qsl(query["metadata"][0])) if "metadata" in query else {}
            listed = [self.facts(sandbox_id) for sandbox_id in self.sandboxes]
            listed = [info for info in listed if not states or info["state"] in states]
            listed = [info for info in listed if all(info["metadata"].get(k) == v for k, v in wanted.items())]
            return httpx.Response(200, json=listed)
        parts = path.split("/")  # "", "v1", "sandboxes", id, [verb]
        sandbox_id, verb = parts[3], (parts[4] if len(parts) > 4 else "")
        if sandbox_id not in self.sandboxes:
            return refuse(404, "sandbox_not_found", "no such sandbox")
        assert auth in (f"Bearer {KEY}", f"Bearer {self.tokens[sandbox_id]}")
        info = self.facts(sandbox_id)
        if (request.method, verb) == ("GET", ""):
            return httpx.Response(200, json=info)
        if info["state"] == "ended":
            return refuse(410, "sandbox_ended", "the sandbox has ended")
        if (request.method, verb) == ("POST", "timeout"):
            timeout_ms = body["timeoutMs"]
            if now_ms() + timeout_ms > info["startedAt"] + MAX_MS:
                return refuse(
                    400, "invalid_argument",
                    "timeoutMs: past the sandbox's longest lifetime (8 h from its creation, running plus suspended)",
                    field="timeoutMs",
                )  # fmt: skip
            info["deadlineAt"] = now_ms() + timeout_ms
        elif (request.method, verb) == ("POST", "pause"):
            info.update(state="suspended", suspendReason="paused")
        elif (request.method, verb) == ("POST", "connect"):
            info.update(state="running", suspendReason=None)
            return httpx.Response(200, json={**info, "daemonUrl": DAEMON, "previewUrl": f"{PLANE}/{{port}}/"})
        elif (request.method, verb) == ("DELETE", ""):
            info.update(state="ended", endReason="killed")
        else:
            return refuse(404, "not_found", "not faked")
        return httpx.Response(200, json=info)

    def sent(self, method: str, path: str) -> list[tuple[dict[str, list[str]], str | None, Any]]:
        """Each request to ``path``: query, authorization, body."""
        return [(q, auth, body) for m, url, q, auth, body in self.requests if (m, url) == (method, f"{PLANE}{path}")]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePlane]:
    """The fake control plane behind the sync and async clients, at ``SDK_CONTROL_PLANE_URL``."""
    fake = FakePlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.delenv("E2B_DOMAIN", raising=False)
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    monkeypatch.setenv("SDK_API_KEY", KEY)
    yield fake
    for sandbox_id in fake.sandboxes:
        TOKENS.forget(sandbox_id)


def ids(items: list[SandboxInfo]) -> list[str]:
    return [item.sandbox_id for item in items]


# --- metadata at create, get_info, list (E2B: api_sync/test_sbx_info.py, test_sbx_list.py) ----------------


def test_create_sends_metadata_and_get_info_shows_it_with_started_at(plane: FakePlane) -> None:
    sbx = Sandbox.create(metadata={"sandbox_test_id": "t-1", "role": "web"})
    ((_, _, created),) = plane.sent("POST", "/v1/sandboxes")
    assert created["metadata"] == {"sandbox_test_id": "t-1", "role": "web"}
    info = sbx.get_info()
    assert info.metadata == {"sandbox_test_id": "t-1", "role": "web"}
    assert isinstance(info.started_at, datetime) and info.started_at.tzinfo is not None
    assert info.started_at.timestamp() * 1000 == pytest.approx(plane.sandboxes[sbx.sandbox_id]["startedAt"])
    assert isinstance(info.end_at, datetime) and info.end_at > info.started_at
    assert Sandbox.get_info(sbx.sandbox_id) == info  # E2B's test_get_info
    info.metadata["changed"] = "here"  # a copy: the next read is the control plane's
    assert "changed" not in sbx.get_info().metadata


def test_without_metadata_it_is_empty_and_a_snapshot_or_template_carries_it(plane: FakePlane) -> None:
    plain = Sandbox.create()
    assert "metadata" not in plane.sent("POST", "/v1/sandboxes")[0][2]
    assert plain.get_info().metadata == {}
    Sandbox.create("my-template", metadata={"k": "v"})
    Sandbox.create("snap_0123456789abcdef", metadata={"from": "snapshot"})
    bodies = [body for _, _, body in plane.sent("POST", "/v1/sandboxes")]
    assert (bodies[1]["template"], bodies[1]["metadata"]) == ("my-template", {"k": "v"})
    assert (bodies[2]["snapshot"], bodies[2]["metadata"]) == ("snap_0123456789abcdef", {"from": "snapshot"})


@pytest.mark.parametrize(
    "metadata",
    [{f"k{i}": "v" for i in range(65)}, {"": "v"}, {"k": "a\x00b"}, {"k": "x" * 1025}, {"k": 1}, ["k"]],
)
def test_metadata_past_the_native_rules_is_refused_before_any_call(
    metadata: Any, no_traffic: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDK_API_KEY", KEY)
    with pytest.raises(InvalidArgumentException, match="metadata") as refused:
        Sandbox.create(metadata=metadata)
    assert isinstance(refused.value.__cause__, NativeInvalidArgumentException)
    assert refused.value.__cause__.field is not None and refused.value.__cause__.field.startswith("metadata")
    assert "\x00" not in str(refused.value)
    with pytest.raises(InvalidArgumentException, match="SandboxQuery: metadata"):
        Sandbox.list(SandboxQuery(metadata={"k": "a\x07"}))


def test_list_by_metadata_the_control_plane_filters_with_the_key(plane: FakePlane) -> None:
    mine = Sandbox.create(metadata={"unique_id": "u-1", "team": "a b&c=d"})
    Sandbox.create(metadata={"unique_id": "u-2"})
    plane.requests.clear()
    # E2B's test_list_sandboxes_with_filter
    sandboxes = Sandbox.list(query=SandboxQuery(metadata={"unique_id": "u-1"})).next_items()
    assert ids(sandboxes) == [mine.sandbox_id]
    assert sandboxes[0].metadata == {"unique_id": "u-1", "team": "a b&c=d"}
    assert isinstance(sandboxes[0].started_at, datetime)
    ((query, auth, _),) = plane.sent("GET", "/v1/sandboxes")
    assert auth == f"Bearer {KEY}"
    assert query == {"state": ["running", "suspended"], "metadata": ["unique_id=u-1"]}
    # A value holding E2B's separators is matched exactly (one URL-encoded parameter).
    assert ids(Sandbox.list(query=SandboxQuery(metadata={"team": "a b&c=d"})).next_items()) == [mine.sandbox_id]
    assert Sandbox.list(query=SandboxQuery(metadata={"unique_id": "u-3"})).next_items() == []
    both = SandboxQuery(metadata={"unique_id": "u-1", "team": "other"})  # every entry (AND)
    assert Sandbox.list(query=both).next_items() == []
    with pytest.raises(Exception):  # the api_key option is the key the list is read with
        Sandbox.list(api_key="another-key").next_items()
    assert plane.requests[-1][3] == "Bearer another-key"


def test_list_running_and_paused_as_e2b_names_them(plane: FakePlane) -> None:
    running = Sandbox.create(metadata={"sandbox_test_id": "t"})
    paused = Sandbox.create(metadata={"sandbox_test_id": "t"})
    assert paused.beta_pause() is True  # E2B's deprecated name, which its list tests use
    assert Sandbox.beta_pause(paused.sandbox_id) is False
    plane.requests.clear()

    def listed(*states: SandboxState) -> list[SandboxInfo]:
        query = SandboxQuery(metadata={"sandbox_test_id": "t"}, state=list(states))
        return Sandbox.list(query=query).next_items()

    assert [(s.sandbox_id, s.state) for s in listed(SandboxState.PAUSED)] == [(paused.sandbox_id, "paused")]
    assert plane.sent("GET", "/v1/sandboxes")[0][0]["state"] == ["suspended"]
    assert ids(listed(SandboxState.RUNNING)) == [running.sandbox_id]
    assert ids(listed(SandboxState.RUNNING, SandboxState.PAUSED)) == [paused.sandbox_id, running.sandbox_id]
    assert ids(listed()) == [paused.sandbox_id, running.sandbox_id]  # an empty list: E2B's default, both
    running.kill()
    assert ids(listed(SandboxState.RUNNING, SandboxState.PAUSED)) == [paused.sandbox_id]


def test_list_orders_by_start_pages_and_filters_by_started_after(plane: FakePlane) -> None:
    older = Sandbox.create(metadata={"sandbox_test_id": "p"})
    newer = Sandbox.create(metadata={"sandbox_test_id": "p"})
    Sandbox.create(metadata={"sandbox_test_id": "other"})
    tag = {"sandbox_test_id": "p"}
    # E2B's test_paginate_running_sandboxes
    paginator = Sandbox.list(query=SandboxQuery(metadata=tag, state=[SandboxState.RUNNING]), limit=1)
    assert ids(paginator.next_items()) == [newer.sandbox_id]
    assert paginator.has_next is True and paginator.next_token is not None
    assert ids(paginator.next_items()) == [older.sandbox_id]
    assert paginator.has_next is False and paginator.next_token is None
    with pytest.raises(SandboxException, match="No more items"):
        paginator.next_items()
    assert ids(Sandbox.list(query=SandboxQuery(metadata=tag), order="asc").next_items()) == [
        older.sandbox_id,
        newer.sandbox_id,
    ]
    # E2B's started_after: at or after the start, not a second later; a naive datetime is local time.
    started_at = newer.get_info().started_at
    since = SandboxQuery(metadata=tag, started_after=started_at)
    assert ids(Sandbox.list(query=since).next_items()) == [newer.sandbox_id]
    naive = started_at.astimezone().replace(tzinfo=None)
    assert ids(Sandbox.list(query=SandboxQuery(metadata=tag, started_after=naive)).next_items()) == [newer.sandbox_id]
    later = SandboxQuery(metadata=tag, started_after=started_at + timedelta(seconds=1))
    assert Sandbox.list(query=later).next_items() == []
    with pytest.raises(InvalidArgumentException, match="started_after"):
        Sandbox.list(query=SandboxQuery(started_after="yesterday"))
    # The template filter stays (E2B's base is sdk-base).
    assert len(Sandbox.list(query=SandboxQuery(metadata=tag, template="base")).next_items()) == 2
    assert Sandbox.list(query=SandboxQuery(metadata=tag, template="unknown-template")).next_items() == []


# --- set_timeout (E2B: sandbox_sync/test_timeout.py) -------------------------------------------------------


def test_shorten_timeout_with_the_sandbox_token_then_it_is_not_running(plane: FakePlane) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    before = now_ms()
    assert sbx.set_timeout(1) is None  # E2B's answer: nothing
    ((_, auth, body),) = plane.sent("POST", f"/v1/sandboxes/{sbx.sandbox_id}/timeout")
    assert body == {"timeoutMs": 1000} and auth == f"Bearer {plane.tokens[sbx.sandbox_id]}"
    end_at = sbx.get_info().end_at.timestamp() * 1000
    assert before + 1000 <= end_at <= now_ms() + 1000
    plane.sandboxes[sbx.sandbox_id]["deadlineAt"] = now_ms() - 1  # as if a second went by
    assert sbx.is_running() is False
    with pytest.raises(SandboxNotFoundException):  # E2B's answer for an ended sandbox
        sbx.set_timeout(5)


def test_shorten_then_lengthen_timeout_the_latest_wins(plane: FakePlane) -> None:
    sbx = Sandbox.create()
    sbx.set_timeout(5)
    sbx.set_timeout(2 * HOUR)
    assert sbx.get_info().end_at > datetime.now(timezone.utc) + timedelta(hours=1)
    assert sbx.is_running() is True


def test_set_timeout_by_id_with_the_key(plane: FakePlane) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    Sandbox.set_timeout(sbx.sandbox_id, 60)
    ((_, auth, body),) = plane.sent("POST", f"/v1/sandboxes/{sbx.sandbox_id}/timeout")
    assert (auth, body) == (f"Bearer {KEY}", {"timeoutMs": 60_000})
    Sandbox.set_timeout(sbx.sandbox_id, 30, api_key=KEY, request_timeout=5)
    assert sbx.get_info().end_at.timestamp() * 1000 <= now_ms() + 30_000
    with pytest.raises(SandboxNotFoundException):
        Sandbox.set_timeout("fedcba987654", 60)
    with pytest.raises(SandboxNotFoundException):
        Sandbox.set_timeout("not-an-id", 60)
    with pytest.raises(NotSupportedException) as hosted:
        Sandbox.set_timeout(sbx.sandbox_id, 60, domain="e2b.app")
    assert hosted.value.feature == "domain"


def test_past_8_h_from_creation_is_invalid_argument_and_nothing_changes(plane: FakePlane) -> None:
    sbx = Sandbox.create()  # started an hour ago (the fake's clock)
    end_at = sbx.get_info().end_at
    calls: list[Callable[[], None]] = [
        lambda: sbx.set_timeout(8 * HOUR),
        lambda: Sandbox.set_timeout(sbx.sandbox_id, int(7.5 * HOUR)),
    ]
    for call in calls:
        with pytest.raises(InvalidArgumentException, match="8 h from its creation") as refused:
            call()
        assert isinstance(refused.value, SandboxException)  # E2B programs catching it still do
        assert isinstance(refused.value.__cause__, NativeInvalidArgumentException)
        assert refused.value.__cause__.field == "timeoutMs"
    assert sbx.get_info().end_at == end_at
    sbx.set_timeout(6 * HOUR)  # within 8 h of its start


@pytest.mark.parametrize("timeout", [0, -1, 8 * HOUR + 1, "60", True, None])
def test_a_bad_timeout_is_refused_before_any_call(plane: FakePlane, timeout: Any) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    with pytest.raises(InvalidArgumentException, match="timeout"):
        sbx.set_timeout(timeout)
    with pytest.raises(InvalidArgumentException, match="timeout"):
        Sandbox.set_timeout(sbx.sandbox_id, timeout)
    assert plane.requests == []


# --- connect(timeout=...): extends, never shortens (E2B) -----------------------------------------------------


def test_connect_timeout_extends_and_never_shortens(plane: FakePlane) -> None:
    sbx = Sandbox.create(timeout=300)
    end_at = sbx.get_info().end_at
    plane.requests.clear()
    Sandbox.connect(sbx.sandbox_id, timeout=10)
    sbx.connect(timeout=10)
    assert plane.sent("POST", f"/v1/sandboxes/{sbx.sandbox_id}/timeout") == []
    assert sbx.get_info().end_at == end_at
    sbx.connect(timeout=600)
    assert [body for _, _, body in plane.sent("POST", f"/v1/sandboxes/{sbx.sandbox_id}/timeout")] == [
        {"timeoutMs": 600_000}
    ]
    assert sbx.get_info().end_at > end_at
    again = Sandbox.connect(sbx.sandbox_id, timeout=2 * HOUR)
    assert again.get_info().end_at > datetime.now(timezone.utc) + timedelta(hours=1)
    with pytest.raises(InvalidArgumentException, match="connect: timeout"):
        sbx.connect(timeout=9 * HOUR)


# --- the async handle ---------------------------------------------------------------------------------------


async def test_the_async_shim_answers_the_same(plane: FakePlane) -> None:
    sbx = await AsyncSandbox.create(metadata={"sandbox_test_id": "a"})
    other = await AsyncSandbox.create(metadata={"sandbox_test_id": "b"})
    info = await sbx.get_info()
    assert info.metadata == {"sandbox_test_id": "a"} and isinstance(info.started_at, datetime)
    assert (await AsyncSandbox.get_info(sbx.sandbox_id)) == info
    listed = await AsyncSandbox.list(query=SandboxQuery(metadata={"sandbox_test_id": "a"})).next_items()
    assert ids(listed) == [sbx.sandbox_id]
    assert await other.beta_pause() is True
    paused = await AsyncSandbox.list(query=SandboxQuery(state=[SandboxState.PAUSED])).next_items()
    assert ids(paused) == [other.sandbox_id]
    await sbx.set_timeout(2 * HOUR)
    assert (await sbx.get_info()).end_at > datetime.now(timezone.utc) + timedelta(hours=1)
    await AsyncSandbox.set_timeout(sbx.sandbox_id, 60)
    assert (await sbx.get_info()).end_at < datetime.now(timezone.utc) + timedelta(seconds=61)
    with pytest.raises(InvalidArgumentException, match="8 h from its creation"):
        await sbx.set_timeout(8 * HOUR)
    with pytest.raises(InvalidArgumentException, match="timeout"):
        await AsyncSandbox.set_timeout(sbx.sandbox_id, 0)
    await sbx.connect(timeout=600)
    assert (await sbx.get_info()).end_at > datetime.now(timezone.utc) + timedelta(seconds=500)
    again = await AsyncSandbox.connect(other.sandbox_id, timeout=3 * HOUR)
    assert (await again.get_info()).end_at > datetime.now(timezone.utc) + timedelta(hours=2)
    for handle in (sbx, other, again):
        await handle.close()
