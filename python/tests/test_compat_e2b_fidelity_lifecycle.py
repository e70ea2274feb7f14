"""Programs as E2B's documentation and its Python SDK's own tests write them, run through the sync E2B shim
against the real control plane with only the import changed, asserting what E2B says the program
observes: result shapes, field names and types, enum members, exception classes, defaults. This
module: the sandbox lifecycle (info, list by metadata, state, start and template, set_timeout, pause,
connect, kill, ended sandboxes, the no-internet template), metrics in E2B's shape, a port reached through
``get_host``, and the
stand-ins that refuse any use. Where this control plane differs on purpose (8 h from creation at most) the
test asserts the documented answer. Every test ends the sandboxes it created."""

from __future__ import annotations

import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from conftest import ControlPlane
from sdk.compat.e2b import (
    AsyncSecret,
    AsyncTemplate,
    AsyncVolume,
    CommandExitException,
    InvalidArgumentException,
    NotFoundException,
    NotSupportedException,
    Sandbox,
    SandboxInfo,
    SandboxMetrics,
    SandboxNotFoundException,
    SandboxQuery,
    SandboxState,
    Secret,
    Template,
    TimeoutException,
    Volume,
)

from _e2b_fixtures import sandbox  # noqa: F401  (a fixture)

UNKNOWN_ID = "0123456789ab"


# --- lifecycle (docs: sandbox lifecycle, list, connect, pause/resume; SDK tests test_*.py, api/*) ---


def test_info_list_pause_connect_and_kill(sandbox: Sandbox) -> None:
    sbx = Sandbox.create("base", 300)  # E2B's positional template and timeout
    try:
        oldest_first = [item.sandbox_id for item in Sandbox.list(order="asc").next_items()]
        assert oldest_first.index(sandbox.sandbox_id) < oldest_first.index(sbx.sandbox_id)
        newest_first = [item.sandbox_id for item in Sandbox.list(order="desc").next_items()]
        assert newest_first == oldest_first[::-1]
        assert [item.sandbox_id for item in Sandbox.list().next_items()] == newest_first  # E2B's default
        first_page = Sandbox.list(limit=1)
        assert [item.sandbox_id for item in first_page.next_items()] == [sbx.sandbox_id]
        assert first_page.has_next and first_page.next_token is not None
        with pytest.raises(InvalidArgumentException, match="order"):
            Sandbox.list(order="newest")  # type: ignore[arg-type]
        assert sbx.is_running(request_timeout=5) is True
        info = sbx.get_info()
        assert isinstance(info, SandboxInfo) and info.sandbox_id == sbx.sandbox_id
        assert info.state == SandboxState.RUNNING and str(info.state) == "running"
        assert info.state == "running"  # type: ignore[comparison-overlap]  # a str enum, as E2B's
        assert isinstance(info.end_at, datetime) and info.end_at.tzinfo is not None
        assert (info.network, info.lifecycle, info.volume_mounts) == (None, None, [])  # none set here
        running = Sandbox.list(query=SandboxQuery(state=[SandboxState.RUNNING])).next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in running]
        by_template = Sandbox.list(query=SandboxQuery(template="base")).next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in by_template]
        assert Sandbox.list(query=SandboxQuery(template="no-such-template")).next_items() == []
        # E2B's started_after: at or after the start, not a second later
        since = Sandbox.list(query=SandboxQuery(started_after=info.started_at)).next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in since]
        assert sandbox.sandbox_id not in [item.sandbox_id for item in since]  # started before it
        later = SandboxQuery(started_after=info.started_at + timedelta(seconds=1))
        assert sbx.sandbox_id not in [item.sandbox_id for item in Sandbox.list(query=later).next_items()]
        # connect never shortens a lifetime: a shorter timeout changes nothing, as in E2B; a longer one extends it
        Sandbox.connect(sbx.sandbox_id, timeout=10)
        assert Sandbox.get_info(sbx.sandbox_id).end_at == info.end_at
        Sandbox.connect(sbx.sandbox_id, timeout=600)
        assert Sandbox.get_info(sbx.sandbox_id).end_at > datetime.now(timezone.utc) + timedelta(seconds=500)
        sbx.pause()
        assert sbx.is_running() is False
        assert sbx.get_info().state == SandboxState.PAUSED
        paused = Sandbox.list(SandboxQuery(state=[SandboxState.PAUSED])).next_items()
        assert sbx.sandbox_id in [item.sandbox_id for item in paused]
        resumed = Sandbox.connect(sbx.sandbox_id)
        assert resumed.is_running() is True and resumed.sandbox_id == sbx.sandbox_id
    finally:
        assert sbx.kill() is True
    assert sbx.is_running() is False
    listed = Sandbox.list(query=SandboxQuery(state=[SandboxState.RUNNING])).next_items()
    assert sbx.sandbox_id not in [item.sandbox_id for item in listed]
    assert Sandbox.kill(sbx.sandbox_id) is False
    with pytest.raises(SandboxNotFoundException):
        Sandbox.get_info(sbx.sandbox_id)
    with pytest.raises(SandboxNotFoundException):
        Sandbox.connect(sbx.sandbox_id)


# --- metadata and timeouts (docs: sandbox metadata, timeout; SDK tests test_timeout.py, test_sbx_list.py) ---


def test_metadata_list_by_it_set_timeout_and_get_info(control_plane: ControlPlane) -> None:
    unique_id = str(uuid.uuid4())
    extra = Sandbox.create(metadata={"unique_id": unique_id}, timeout=60)
    try:
        # E2B's test_list_sandboxes_with_filter
        sandboxes = Sandbox.list(query=SandboxQuery(metadata={"unique_id": unique_id})).next_items()
        assert [item.sandbox_id for item in sandboxes] == [extra.sandbox_id]
        assert sandboxes[0].metadata == {"unique_id": unique_id}
        running = SandboxQuery(metadata={"unique_id": unique_id}, state=[SandboxState.RUNNING])
        assert [item.sandbox_id for item in Sandbox.list(query=running).next_items()] == [extra.sandbox_id]
        # E2B's test_shorten_then_lengthen_timeout, read from end_at rather than waited for
        extra.set_timeout(5)
        assert extra.get_info().end_at <= datetime.now(timezone.utc) + timedelta(seconds=5)
        extra.set_timeout(600)
        info = extra.get_info()
        assert info.metadata == {"unique_id": unique_id} and isinstance(info.started_at, datetime)
        assert info.end_at > datetime.now(timezone.utc) + timedelta(seconds=500)
        Sandbox.set_timeout(extra.sandbox_id, 300)  # by id, with the API key
        assert Sandbox.get_info(extra.sandbox_id).end_at < info.end_at
        with pytest.raises(InvalidArgumentException, match="8 h from its creation"):  # E2B's cap is 24 h
            extra.set_timeout(8 * 3600)
        # E2B's test_shorten_timeout: past it the sandbox is no longer running
        extra.set_timeout(1)
        # The sandbox's own state feed ends with its end: waited for, not timed.
        assert [event.state for event in extra.native.events()][-1] == "ended"
        assert not extra.is_running()
        assert Sandbox.list(query=SandboxQuery(metadata={"unique_id": unique_id})).next_items() == []
    finally:
        extra.kill()


# --- metrics (docs: sandbox metrics; SDK tests sandbox_sync/test_metrics.py) ------------------------------


def test_get_metrics_in_e2b_s_shape_on_the_handle_and_by_id(sandbox: Sandbox) -> None:
    # E2B's test_sbx_metrics, as written: wait for the sandbox to have some metrics
    metrics: list[SandboxMetrics] = []
    for _ in range(15):
        metrics = sandbox.get_metrics()
        if len(metrics) > 0:
            break
        time.sleep(1)
    assert len(metrics) > 0
    metric = metrics[0]
    assert metric.cpu_count is not None and metric.cpu_used_pct is not None
    assert metric.mem_used is not None and metric.mem_total is not None
    assert metric.disk_used is not None and metric.disk_total is not None
    # What E2B's SandboxMetrics says of its fields: an int CPU count, bytes as ints, an aware timestamp
    latest = metrics[-1]
    assert isinstance(latest, SandboxMetrics) and isinstance(latest.cpu_count, int)
    assert (latest.cpu_count, latest.mem_total) == (1, 512 * 2**20)  # the template's limits
    assert all(isinstance(n, int) for n in (latest.mem_used, latest.mem_total, latest.disk_used, latest.disk_total))
    # Disk here is what the sandbox wrote over its template (0 for a fresh one), not the image's size.
    assert 0 < latest.mem_used <= latest.mem_total and 0 <= latest.disk_used < latest.disk_total
    assert isinstance(latest.timestamp, datetime) and latest.timestamp.tzinfo is not None
    assert [m.timestamp for m in metrics] == sorted(m.timestamp for m in metrics)  # oldest first
    # By id with the API key, up to the latest one read (a sample merged into an older history since
    # keeps its time and figures, its CPU share averaged)
    by_id = Sandbox.get_metrics(sandbox.sandbox_id, end=latest.timestamp)
    assert by_id and all(m.timestamp <= latest.timestamp for m in by_id)
    assert (by_id[-1].timestamp, by_id[-1].mem_used, by_id[-1].disk_used) == (
        latest.timestamp, latest.mem_used, latest.disk_used,
    )  # fmt: skip
    assert sandbox.get_metrics(start=datetime.now() + timedelta(hours=1)) == []  # naive: local time, as E2B's
    with pytest.raises(InvalidArgumentException, match="start must not be after end"):
        sandbox.get_metrics(latest.timestamp, latest.timestamp - timedelta(seconds=1))


# --- a public URL (docs: sandbox public URL; SDK tests sandbox_sync/test_host.py) ------------------------


def test_get_host_reaches_a_port_over_http_once_public_or_with_its_token(
    sandbox: Sandbox, control_plane: ControlPlane
) -> None:
    listening = threading.Event()
    app = sandbox.commands.run(
        "node -e \"require('http').createServer((q, s) => s.end('hello ' + q.url))"
        ".listen(3000, '127.0.0.1', () => console.log('listening'))\"",
        background=True,
        timeout=0,
        on_stdout=lambda line: listening.set() if "listening" in line else None,
    )
    try:
        host = sandbox.get_host(3000)
        plane = urllib.parse.urlsplit(control_plane.url).netloc
        assert host == f"{plane}/v1/sandboxes/{sandbox.sandbox_id}/ports/3000"
        token = {"x-sdk-preview-token": sandbox.native.ports.token(3000)}
        listening.wait()  # the server's own word that it takes connections
        answer = httpx.get(f"http://{host}/", headers=token)
        assert (answer.status_code, answer.text) == (200, "hello /")
        assert httpx.get(f"http://{host}/").status_code == 401  # private until exposed
        sandbox.native.ports.expose(3000, public=True)  # E2B's default: public
        page = httpx.get(f"http://{host}/api?x=1")
        assert (page.status_code, page.text) == (200, "hello /api?x=1")
        bare = httpx.get(f"http://{host}", follow_redirects=True)  # a 308 to the slash
        assert (bare.status_code, bare.text, len(bare.history)) == (200, "hello /", 1)
    finally:
        sandbox.native.ports.expose(3000, public=False)
        app.kill()


def test_an_unknown_sandbox_id(control_plane: ControlPlane) -> None:
    assert Sandbox.kill(UNKNOWN_ID) is False
    with pytest.raises(SandboxNotFoundException):
        Sandbox.connect(UNKNOWN_ID)
    with pytest.raises(SandboxNotFoundException):
        Sandbox.get_info(UNKNOWN_ID)
    # An id this control plane never makes names no sandbox either (E2B's tests use such ids).
    assert Sandbox.kill("nonexistingsandbox") is False
    for call in (Sandbox.get_info, Sandbox.connect, Sandbox.pause):
        with pytest.raises(SandboxNotFoundException):
            call("nonexistingsandbox")
    assert isinstance(SandboxNotFoundException(), NotFoundException)


def test_killing_the_sandbox_under_a_command_raises_timeout_exception(control_plane: ControlPlane) -> None:
    sbx = Sandbox.create()
    command = sbx.commands.run("sleep 60", background=True)
    watch = sbx.files.watch_dir(".")
    sbx.kill()
    with pytest.raises(TimeoutException, match="sandbox was killed or reached its end of life"):
        command.wait()
    # The watch's stream broke with its sandbox: polling it says so, as E2B's envd call does then.
    deadline = time.monotonic() + 10
    with pytest.raises(TimeoutException, match="reached its end of life while the request was in flight"):
        while time.monotonic() < deadline:
            watch.get_new_events()


def test_calls_into_an_ended_sandbox_raise_timeout_exception(control_plane: ControlPlane) -> None:
    short = Sandbox.create(timeout=3)
    killed = Sandbox.create()
    try:
        killed.kill()
        time.sleep(4.5)
        assert short.is_running() is False
        for sbx in (short, killed):  # E2B: envd unreachable, its words
            with pytest.raises(TimeoutException, match="reached its end of life while the request was in flight"):
                sbx.commands.run("echo hi")
            with pytest.raises(TimeoutException):
                sbx.files.read("anything.txt")
            with pytest.raises(TimeoutException):
                sbx.files.write("anything.txt", "x")
        with pytest.raises(SandboxNotFoundException):  # the API's answer stays "not found", as E2B's
            short.get_info()
        assert Sandbox.kill(short.sandbox_id) is False
    finally:
        short.kill()


def test_base_without_internet_access_is_the_caps_template(control_plane: ControlPlane) -> None:
    with Sandbox.create(allow_internet_access=False, timeout=60) as closed:
        info = closed.get_info()
        assert (info.template_id, info.allow_internet_access) == ("sdk-base-caps", False)
        assert closed.commands.run('echo "$HOME"').stdout == "/home/user\n"
        assert closed.commands.run("echo $E2B_TEMPLATE_ID").stdout == "sdk-base-caps\n"
        with pytest.raises(CommandExitException) as curl:
            closed.commands.run("curl --connect-timeout 3 --max-time 5 -Is http://1.1.1.1")
        assert curl.value.exit_code != 0
        listed = Sandbox.list(query=SandboxQuery(template="base")).next_items()
        assert closed.sandbox_id in [item.sandbox_id for item in listed]


def test_template_volume_and_secret_import_and_refuse_any_use() -> None:
    with pytest.raises(NotSupportedException, match="sdk template build") as build:
        Template.build("template", alias="mine")
    assert build.value.feature == "Template.build"
    with pytest.raises(NotSupportedException) as made:
        Template()
    assert made.value.feature == "Template"
    with pytest.raises(NotSupportedException) as create:
        Volume.create("data")
    assert create.value.feature == "Volume.create"
    stand_ins = ((Secret, "list"), (AsyncTemplate, "build"), (AsyncVolume, "create"), (AsyncSecret, "list"))
    for stand_in, member in stand_ins:
        with pytest.raises(NotSupportedException):
            getattr(stand_in, member)()
