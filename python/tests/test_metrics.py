"""``sbx.get_metrics`` and ``Sandbox.get_metrics(sandbox_id)`` through the Python SDK (TypeScript's
``sdk/sandbox-metrics.ts``, ``metricsQuerySchema`` and ``sandboxMetricSchema`` of
``protocol/control-plane-api.ts``): ``GET /v1/sandboxes/:id/metrics`` with the sandbox's token on a handle
and with ``access_token`` or the operator key by id, ``start`` / ``end`` sent as whole ms only when given
(an aware datetime or ms; a naive datetime, a malformed instant or a ``start`` after ``end`` refused before
any call, the integer rules cross-checked with the built TypeScript), the samples parsed as
``SandboxMetric`` oldest first, a handle that knows its sandbox ended still reading them, the async
twins. Against the fake control plane of ``test_egress.py`` with the metrics call added."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from conftest import REPO
from test_egress import PLANE, SBX, TOKEN, FakePlane

from sdk import (
    AsyncSandbox,
    AuthenticationException,
    InvalidArgumentException,
    Sandbox,
    SandboxException,
    SandboxMetric,
)
from sdk._lifecycle_options import metrics_range

OPERATOR_KEY = "operator-key"
OTHER = "fedcba987654"
NOW = 1_899_996_400_000
MIB = 2**20
#: The latest instant a range takes (``Number.MAX_SAFE_INTEGER``, zod's ``int()``).
MAX_SAFE = 2**53 - 1


def sample(at: float, **more: float) -> dict[str, float]:
    """One sample as the control plane sends it."""
    return {
        "timestamp": at, "cpuCount": 1, "cpuUsedPct": 12.5, "memUsedBytes": 40 * MIB, "memTotalBytes": 512 * MIB,
        "diskUsedBytes": 3 * MIB, "diskTotalBytes": 1024 * MIB, "netRxBytes": 1000, "netTxBytes": 2000, **more,
    }  # fmt: skip


SAMPLES = [sample(NOW), sample(NOW + 5000, cpuUsedPct=99.5, cpuCount=0.5, memUsedBytes=88 * MIB)]


class MetricsPlane(FakePlane):
    """``test_egress.FakePlane`` with ``GET /v1/sandboxes/:id/metrics`` (``answer_metrics``, or a 404 for
    another id), refused without a bearer as the control plane refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.answer_metrics: Any = {"metrics": SAMPLES}

    def answer(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if request.method != "GET" or not url.path.endswith("/metrics"):
            return super().answer(request)
        self.requests.append((request.method, str(url), request.headers.get("authorization"), None))
        if request.headers.get("authorization") is None:
            return httpx.Response(401, json={"code": "unauthenticated", "message": "a bearer token is required"})
        if url.path != f"/v1/sandboxes/{SBX}/metrics":
            return httpx.Response(404, json={"code": "sandbox_not_found", "message": "no such sandbox"})
        return httpx.Response(200, json=self.answer_metrics)

    def reads(self) -> list[tuple[str, str | None, list[tuple[str, str]]]]:
        """Each metrics read: its path, authorization and query (decoded)."""
        return [
            (httpx.URL(url).path, auth, parse_qsl(httpx.URL(url).query.decode(), keep_blank_values=True))
            for method, url, auth, _ in self.requests
            if method == "GET" and httpx.URL(url).path.endswith("/metrics")
        ]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> MetricsPlane:
    """The fake control plane behind the sync and async clients."""
    fake = MetricsPlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    return fake


def refused(error: pytest.ExceptionInfo[InvalidArgumentException], field: str) -> None:
    assert error.value.field == field, error.value


PATH = f"/v1/sandboxes/{SBX}/metrics"


# --- the samples --------------------------------------------------------------------------------------


def test_a_sample_is_parsed_strictly() -> None:
    parsed = SandboxMetric.model_validate(sample(NOW), strict=True)
    assert (parsed.timestamp, parsed.cpu_count, parsed.cpu_used_pct) == (NOW, 1, 12.5)
    assert (parsed.mem_used_bytes, parsed.mem_total_bytes) == (40 * MIB, 512 * MIB)
    assert (parsed.disk_used_bytes, parsed.disk_total_bytes) == (3 * MIB, 1024 * MIB)
    assert (parsed.net_rx_bytes, parsed.net_tx_bytes) == (1000, 2000)
    for missing in sample(NOW):
        partial = sample(NOW)
        del partial[missing]
        with pytest.raises(ValueError):
            SandboxMetric.model_validate(partial, strict=True)
    with pytest.raises(ValueError):  # a strict object, as zod's
        SandboxMetric.model_validate({**sample(NOW), "memCache": 0}, strict=True)
    with pytest.raises(ValueError):
        SandboxMetric.model_validate({**sample(NOW), "cpuUsedPct": "12"}, strict=True)


def test_sbx_get_metrics_reads_every_sample_with_the_sandbox_token(plane: MetricsPlane) -> None:
    with Sandbox.create() as sbx:
        samples = sbx.get_metrics()
        assert all(isinstance(s, SandboxMetric) for s in samples)
        assert [(s.timestamp, s.cpu_used_pct, s.cpu_count, s.mem_used_bytes) for s in samples] == [
            (NOW, 12.5, 1, 40 * MIB), (NOW + 5000, 99.5, 0.5, 88 * MIB),
        ]  # fmt: skip
        assert plane.reads() == [(PATH, f"Bearer {TOKEN}", [])]
        plane.answer_metrics = {"metrics": []}
        assert sbx.get_metrics() == []


def test_the_range_is_sent_as_whole_milliseconds_only_when_given(plane: MetricsPlane) -> None:
    at = datetime.fromtimestamp(NOW / 1000, tz=timezone.utc)
    plus_two = timezone(timedelta(hours=2))
    with Sandbox.create() as sbx:
        plane.requests.clear()
        sbx.get_metrics(start=NOW, end=NOW + 60_000)
        sbx.get_metrics(start=at)  # an aware datetime: its instant
        sbx.get_metrics(end=at.astimezone(plus_two) + timedelta(microseconds=1999))  # the same instant's zone
        sbx.get_metrics(NOW, NOW)  # positional, and start == end
        sbx.get_metrics(start=0, end=float(NOW))  # type: ignore[arg-type]  # whole ms, as TypeScript's number
        sbx.get_metrics(start=MAX_SAFE)
        sbx.get_metrics(start=datetime(1970, 1, 1, tzinfo=timezone.utc))
    assert [query for _, _, query in plane.reads()] == [
        [("start", str(NOW)), ("end", str(NOW + 60_000))],
        [("start", str(NOW))],
        [("end", str(NOW + 1))],  # the microseconds below a millisecond dropped
        [("start", str(NOW)), ("end", str(NOW))],
        [("start", "0"), ("end", str(NOW))],
        [("start", str(MAX_SAFE))],
        [("start", "0")],
    ]


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: (start, end, the field named): each refused before any call.
BAD_RANGES: list[tuple[object, object, str]] = [
    (datetime(2030, 1, 1), None, "start"),  # naive: no instant
    (None, datetime(2030, 1, 1), "end"),
    ("1899996400000", None, "start"),
    (True, None, "start"),
    (1.5, None, "start"),
    (float("nan"), None, "start"),
    (float("inf"), None, "start"),
    (-1, None, "start"),
    (None, -1, "end"),
    (EPOCH - timedelta(milliseconds=1), None, "start"),
    (MAX_SAFE + 1, None, "start"),
    (NOW + 1, NOW, "start"),  # start after end
    (EPOCH + timedelta(milliseconds=2), 1, "start"),
    ([NOW], None, "start"),
]


@pytest.mark.parametrize("start,end,field", BAD_RANGES, ids=[str(i) for i in range(len(BAD_RANGES))])
def test_a_bad_range_is_refused_before_any_call(plane: MetricsPlane, start: object, end: object, field: str) -> None:
    with Sandbox.create() as sbx:
        plane.requests.clear()
        with pytest.raises(InvalidArgumentException) as error:
            sbx.get_metrics(start=start, end=end)  # type: ignore[arg-type]
        refused(error, field)
        assert str(error.value).startswith(f"sbx.get_metrics: {field}")
        with pytest.raises(InvalidArgumentException) as error:
            Sandbox.get_metrics(SBX, start=start, end=end)  # type: ignore[arg-type]
        refused(error, field)
        assert str(error.value).startswith(f"Sandbox.get_metrics: {field}")
        assert plane.requests == []


def test_a_naive_datetime_is_named_in_the_message(plane: MetricsPlane) -> None:
    with pytest.raises(InvalidArgumentException, match="naive datetime") as error:
        Sandbox.get_metrics(SBX, end=datetime.now())
    refused(error, "end")


def test_the_integer_rules_are_typescripts() -> None:
    """Whole-ms ranges through the built ``metricsRangeSchema`` (``sdk/sandbox-metrics.ts``, what
    ``sbx.getMetrics`` takes) and ``metricsQuerySchema`` (what the control plane reads from the query this
    SDK sends): refused there exactly when refused here, and read back as the same instants."""
    cases: list[tuple[object, object]] = [
        (0, 0), (5, 10), (None, 10), (10, None), (None, None), (10, 5), (-1, None), (None, -1), (1.5, None),
        (MAX_SAFE, None), (MAX_SAFE + 1, None), (float(NOW), NOW),
    ]  # fmt: skip
    ours: list[bool] = []
    for start, end in cases:
        try:
            metrics_range(start, end)
            ours.append(False)
        except InvalidArgumentException:
            ours.append(True)
    script = (
        "Promise.all([import('./dist/sdk/sandbox-metrics.js'), import('./dist/protocol/control-plane-api.js')])"
        ".then(([m, api]) => process.stdout.write(JSON.stringify("
        "JSON.parse(require('fs').readFileSync(0, 'utf8')).map(([s, e]) => {"
        "  const range = { ...(s === null ? {} : { start: s }), ...(e === null ? {} : { end: e }) };"
        "  const mine = m.metricsRangeSchema.safeParse(range);"
        "  if (!mine.success) return { refused: true };"
        "  const path = m.metricsPath('0123456789ab', mine.data);"
        "  const query = Object.fromEntries(new URL(path, 'http://cp').searchParams);"
        "  const read = api.metricsQuerySchema.safeParse(query);"
        "  return { refused: false, read: read.success ? read.data : null };"
        "}))))"
    )
    out = subprocess.run(
        ["node", "-e", script], cwd=REPO, input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    theirs = json.loads(out.stdout)
    assert [t["refused"] for t in theirs] == ours
    for (start, end), verdict in zip(cases, theirs):
        if not verdict["refused"]:
            given = {"start": start, "end": end}
            assert verdict["read"] == {k: v for k, v in given.items() if v is not None}


# --- Sandbox.get_metrics ------------------------------------------------------------------------------


def test_get_metrics_by_id_with_the_operator_key_or_a_token(plane: MetricsPlane) -> None:
    samples = Sandbox.get_metrics(SBX)
    assert [s.timestamp for s in samples] == [NOW, NOW + 5000]
    Sandbox.get_metrics(SBX, access_token=TOKEN, control_plane_url=PLANE, request_timeout=5, start=NOW, end=NOW)
    assert plane.reads() == [
        (PATH, f"Bearer {OPERATOR_KEY}", []),
        (PATH, f"Bearer {TOKEN}", [("start", str(NOW)), ("end", str(NOW))]),
    ]


def test_get_metrics_without_a_key_or_token_is_refused_by_the_control_plane(
    plane: MetricsPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SDK_API_KEY")
    with pytest.raises(AuthenticationException):
        Sandbox.get_metrics(SBX)


def test_an_unknown_sandbox_and_a_malformed_answer(plane: MetricsPlane) -> None:
    with pytest.raises(SandboxException) as error:
        Sandbox.get_metrics(OTHER)
    assert error.value.code == "sandbox_not_found"
    answers: list[Any] = [[sample(NOW)], {"metrics": [{"timestamp": NOW}]}, {"samples": []}]
    for answer in answers:
        plane.answer_metrics = answer
        with pytest.raises(SandboxException, match="malformed answer"):
            Sandbox.get_metrics(SBX)


@pytest.mark.parametrize(
    "sandbox_id,options,field",
    [
        ("0123456789AB", {}, "sandbox_id"),
        (123, {}, "sandbox_id"),
        (SBX, {"access_token": ""}, "access_token"),
        (SBX, {"access_token": 5}, "access_token"),
        (SBX, {"control_plane_url": "ftp://plane.test"}, "control_plane_url"),
        (SBX, {"request_timeout": 0}, "request_timeout"),
        (SBX, {"start": "yesterday"}, "start"),
        (SBX, {"start": 10, "end": 5}, "start"),
    ],
)
def test_get_metrics_by_id_checks_its_arguments_before_any_call(
    plane: MetricsPlane, sandbox_id: object, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as error:
        Sandbox.get_metrics(sandbox_id, **options)  # type: ignore[arg-type]
    refused(error, field)
    assert str(error.value).startswith("Sandbox.get_metrics: ")
    assert plane.requests == []


def test_a_handle_that_knows_its_sandbox_ended_still_reads_its_samples(plane: MetricsPlane) -> None:
    sbx = Sandbox.create()
    sbx.kill()  # the control plane keeps an ended sandbox's samples for a while
    plane.requests.clear()
    assert len(sbx.get_metrics()) == 2
    assert plane.reads() == [(PATH, f"Bearer {TOKEN}", [])]
    sbx.close()


def test_reading_the_samples_never_reports_activity(plane: MetricsPlane) -> None:
    with Sandbox.create() as sbx:
        plane.requests.clear()
        sbx.get_metrics(start=NOW)
        assert [(method, httpx.URL(url).path) for method, url, _, _ in plane.requests] == [("GET", PATH)]


# --- the async twins ----------------------------------------------------------------------------------


async def test_async_get_metrics_on_a_handle_and_by_id(plane: MetricsPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        plane.requests.clear()
        samples = await sbx.get_metrics(start=datetime.fromtimestamp(NOW / 1000, tz=timezone.utc))
        assert [s.cpu_used_pct for s in samples] == [12.5, 99.5]
        with pytest.raises(InvalidArgumentException) as error:
            await sbx.get_metrics(start=NOW + 1, end=NOW)
        refused(error, "start")
    by_id = await AsyncSandbox.get_metrics(SBX, end=NOW)
    assert [s.timestamp for s in by_id] == [NOW, NOW + 5000]  # the fake does not filter
    with pytest.raises(InvalidArgumentException) as error:
        await AsyncSandbox.get_metrics("nope")
    refused(error, "sandbox_id")
    assert plane.reads() == [
        (PATH, f"Bearer {TOKEN}", [("start", str(NOW))]),
        (PATH, f"Bearer {OPERATOR_KEY}", [("end", str(NOW))]),
    ]
