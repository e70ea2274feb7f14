"""The E2B shim's ``get_metrics`` over the native ``sbx.get_metrics()`` (as the TypeScript shim's, in
``test/unit/compat-e2b.test.ts`` and ``test/integration/compat/e2b.test.ts``), after E2B's Python SDK
(``sandbox_sync/main.py`` ``get_metrics`` on a handle and by id, ``sandbox/sandbox_api.py``
``SandboxMetrics``): E2B's shape (``cpu_count``, ``cpu_used_pct``, ``disk_total``, ``disk_used``,
``mem_total``, ``mem_used`` in bytes, an aware ``timestamp``), the handle's read with the sandbox's token
and the class's with the key, ``start`` / ``end`` as datetimes (a naive one local time, as E2B's
``timestamp()`` reads it) sent as whole ms, every malformed argument refused before any call, a paused
sandbox read without resuming it, the async twins. Against the fake control plane of
``test_compat_e2b_lifecycle_calls.py`` with the metrics call added."""

from __future__ import annotations

import dataclasses
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from test_compat_e2b_lifecycle_calls import KEY, PLANE, FakePlane

from sdk.compat.e2b import (
    AsyncSandbox,
    InvalidArgumentException,
    NotSupportedException,
    Sandbox,
    SandboxMetrics,
    SandboxNotFoundException,
)
from sdk.compat.e2b._options import TOKENS
from sdk.compat.e2b._sandbox_plan import Unsupported

NOW = 1_899_996_400_000
MIB = 2**20
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def sample(at: float, **more: float) -> dict[str, float]:
    """One native sample as the control plane sends it."""
    return {
        "timestamp": at, "cpuCount": 1, "cpuUsedPct": 12.5, "memUsedBytes": 40 * MIB, "memTotalBytes": 512 * MIB,
        "diskUsedBytes": 3 * MIB, "diskTotalBytes": 1024 * MIB, "netRxBytes": 1000, "netTxBytes": 2000, **more,
    }  # fmt: skip


class MetricsPlane(FakePlane):
    """The lifecycle fake with ``GET /v1/sandboxes/:id/metrics``: ``samples`` for a sandbox it made
    (whatever its state: the control plane keeps them), 404 for another id; the range is not applied."""

    def __init__(self) -> None:
        super().__init__()
        self.samples = [sample(NOW), sample(NOW + 5000, cpuUsedPct=99.5, cpuCount=0.5, memUsedBytes=88 * MIB)]

    def answer(self, request: httpx.Request) -> httpx.Response:
        if request.method != "GET" or not request.url.path.endswith("/metrics"):
            return super().answer(request)
        sandbox_id = request.url.path.split("/")[3]
        query: dict[str, list[str]] = {}
        for name, value in request.url.params.multi_items():
            query.setdefault(name, []).append(value)
        self.requests.append(("GET", f"{PLANE}{request.url.path}", query, request.headers.get("authorization"), None))
        if sandbox_id not in self.sandboxes:
            return httpx.Response(404, json={"code": "sandbox_not_found", "message": "no such sandbox"})
        return httpx.Response(200, json={"metrics": self.samples})

    def reads(self, sandbox_id: str) -> list[tuple[dict[str, list[str]], str | None]]:
        """The query and authorization of each metrics read of ``sandbox_id``."""
        return [(query, auth) for query, auth, _ in self.sent("GET", f"/v1/sandboxes/{sandbox_id}/metrics")]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> Iterator[MetricsPlane]:
    """The fake control plane behind the sync and async clients, at ``SDK_CONTROL_PLANE_URL``."""
    fake = MetricsPlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.delenv("E2B_DOMAIN", raising=False)
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    monkeypatch.setenv("SDK_API_KEY", KEY)
    yield fake
    for sandbox_id in fake.sandboxes:
        TOKENS.forget(sandbox_id)


def utc(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)


def token_of(plane: MetricsPlane, sbx: Sandbox | AsyncSandbox) -> str:
    return f"Bearer {plane.tokens[sbx.sandbox_id]}"


# --- E2B's shape --------------------------------------------------------------------------------------


def test_the_samples_in_e2b_s_shape_with_the_sandbox_token(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    metrics = sbx.get_metrics()
    assert [type(m) for m in metrics] == [SandboxMetrics, SandboxMetrics]
    first, second = metrics
    assert first == SandboxMetrics(
        cpu_count=1, cpu_used_pct=12.5, disk_total=1024 * MIB, disk_used=3 * MIB, mem_total=512 * MIB,
        mem_used=40 * MIB, timestamp=utc(NOW),
    )  # fmt: skip
    # E2B's types: a whole CPU count and the bytes are ints, the time an aware datetime
    assert isinstance(first.cpu_count, int) and isinstance(first.mem_used, int) and isinstance(first.disk_total, int)
    assert first.timestamp.tzinfo is not None and first.timestamp.timestamp() * 1000 == NOW
    assert (second.cpu_count, second.cpu_used_pct, second.mem_used) == (0.5, 99.5, 88 * MIB)  # cpus=0.5: a fraction
    assert second.timestamp - first.timestamp == timedelta(seconds=5)  # oldest first
    # E2B's fields (its newer mem_cache is not measured here); the native network bytes are left out
    names = [f.name for f in dataclasses.fields(SandboxMetrics)]
    assert names == ["cpu_count", "cpu_used_pct", "disk_total", "disk_used", "mem_total", "mem_used", "timestamp"]
    assert plane.reads(sbx.sandbox_id) == [({}, token_of(plane, sbx))]
    plane.samples = []
    assert sbx.get_metrics() == []


def test_start_and_end_are_sent_as_whole_milliseconds(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    sbx.get_metrics(start=utc(NOW), end=utc(NOW + 60_000))
    sbx.get_metrics(utc(NOW) + timedelta(microseconds=1999))  # positional as E2B's; below a ms dropped
    sbx.get_metrics(end=utc(NOW).astimezone(timezone(timedelta(hours=-7))))  # another zone, the same instant
    sbx.get_metrics(start=utc(NOW), end=utc(NOW))
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "XYZ+05"  # local time five hours behind UTC (POSIX form, no tz database)
    time.tzset()
    try:
        naive = datetime(2030, 3, 1, 12, 0, 0)  # local time, as E2B's timestamp() reads it
        sbx.get_metrics(start=naive)
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        time.tzset()
    local_noon = int(datetime(2030, 3, 1, 17, 0, 0, tzinfo=timezone.utc).timestamp()) * 1000
    assert [query for query, _ in plane.reads(sbx.sandbox_id)] == [
        {"start": [str(NOW)], "end": [str(NOW + 60_000)]},
        {"start": [str(NOW + 1)]},
        {"end": [str(NOW)]},
        {"start": [str(NOW)], "end": [str(NOW)]},
        {"start": [str(local_noon)]},
    ]


def test_get_metrics_by_id_with_the_key(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    metrics = Sandbox.get_metrics(sbx.sandbox_id, utc(NOW), utc(NOW + 1))  # E2B's positional start, end
    assert metrics == sbx.get_metrics()
    Sandbox.get_metrics(sbx.sandbox_id, end=utc(NOW), api_key="another-key", request_timeout=5)
    assert plane.reads(sbx.sandbox_id) == [
        ({"start": [str(NOW)], "end": [str(NOW + 1)]}, f"Bearer {KEY}"),
        ({}, token_of(plane, sbx)),
        ({"end": [str(NOW)]}, "Bearer another-key"),
    ]


def test_an_unknown_sandbox_is_not_found(plane: MetricsPlane) -> None:
    with pytest.raises(SandboxNotFoundException):
        Sandbox.get_metrics("0123456789ab")
    with pytest.raises(SandboxNotFoundException):  # no id this control plane makes: no call
        Sandbox.get_metrics("nonexistingsandbox")
    assert [url for _, url, _, _, _ in plane.requests] == [f"{PLANE}/v1/sandboxes/0123456789ab/metrics"]


def test_a_paused_sandbox_is_read_without_resuming_it(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    sbx.pause()
    plane.requests.clear()
    assert len(sbx.get_metrics()) == 2 and len(Sandbox.get_metrics(sbx.sandbox_id)) == 2
    assert [(method, url) for method, url, _, _, _ in plane.requests] == [
        ("GET", f"{PLANE}/v1/sandboxes/{sbx.sandbox_id}/metrics")
    ] * 2
    assert plane.sandboxes[sbx.sandbox_id]["state"] == "suspended"


def test_get_metrics_is_no_longer_refused() -> None:
    assert not hasattr(Unsupported, "get_metrics")


#: (start, end, the words of the refusal): each refused before any call.
BAD: list[tuple[object, object, str]] = [
    (NOW, None, "start: must be a datetime"),
    ("2030-01-01T00:00:00Z", None, "start: must be a datetime"),
    (None, NOW, "end: must be a datetime"),
    (utc(NOW + 1), utc(NOW), "start must not be after end"),
    (EPOCH - timedelta(seconds=1), None, "start: must not be before the epoch"),
]


@pytest.mark.parametrize("start,end,words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_bad_range_is_refused_before_any_call(plane: MetricsPlane, start: Any, end: Any, words: str) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    with pytest.raises(InvalidArgumentException, match=f"^get_metrics: {words}"):
        sbx.get_metrics(start, end)
    with pytest.raises(InvalidArgumentException, match=f"^Sandbox.get_metrics: {words}"):
        Sandbox.get_metrics(sbx.sandbox_id, start, end)
    assert plane.requests == []


def test_options_are_checked_before_any_call(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    plane.requests.clear()
    with pytest.raises(InvalidArgumentException, match="bogus: is not an option of E2B's SDK"):
        sbx.get_metrics(bogus=1)
    with pytest.raises(InvalidArgumentException, match="bogus"):
        Sandbox.get_metrics(sbx.sandbox_id, bogus=1)
    with pytest.raises(NotSupportedException) as refused:
        Sandbox.get_metrics(sbx.sandbox_id, domain="e2b.app")
    assert refused.value.feature == "domain"
    with pytest.raises(InvalidArgumentException, match="sandbox_id"):
        Sandbox.get_metrics(5)  # type: ignore[arg-type]
    assert plane.requests == []


# --- the async shim -----------------------------------------------------------------------------------


async def test_the_async_shim_answers_the_same(plane: MetricsPlane) -> None:
    sbx = await AsyncSandbox.create()
    plane.requests.clear()
    metrics = await sbx.get_metrics(start=utc(NOW))
    assert [m.timestamp for m in metrics] == [utc(NOW), utc(NOW + 5000)]
    by_id = await AsyncSandbox.get_metrics(sbx.sandbox_id, end=utc(NOW + 5000))
    assert by_id == metrics
    with pytest.raises(InvalidArgumentException, match="^get_metrics: start must not be after end"):
        await sbx.get_metrics(utc(NOW + 1), utc(NOW))
    with pytest.raises(InvalidArgumentException, match="^AsyncSandbox.get_metrics: end: must be a datetime"):
        await AsyncSandbox.get_metrics(sbx.sandbox_id, end="now")  # type: ignore[arg-type]
    assert plane.reads(sbx.sandbox_id) == [
        ({"start": [str(NOW)]}, token_of(plane, sbx)),
        ({"end": [str(NOW + 5000)]}, f"Bearer {KEY}"),
    ]
    await sbx.close()
