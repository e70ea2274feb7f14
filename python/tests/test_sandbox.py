"""The sync ``Sandbox`` against the real control plane: create, commands (foreground, background, stdin,
envs, cwd, exit codes, signals), pause and connect, a second handle with the token, kill and the
ended-handle rule, options refused before any call, and the access token kept out of reprs and messages.
Every test ends the sandboxes it created."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any, Callable, Iterator

import httpx
import pytest

from conftest import ControlPlane
from sdk import (
    AuthenticationException,
    CommandHandle,
    CommandResult,
    InvalidArgumentException,
    Sandbox,
    SandboxException,
)
from sdk._control_plane import control_plane
from sdk._http import Call, NdjsonDecoder, model_parser, read_answer
from sdk._wire import SandboxInfo


def sandbox_count(plane: ControlPlane) -> int:
    listed = plane._call("GET", "/v1/sandboxes")
    assert isinstance(listed, list)
    return len(listed)


@pytest.fixture(scope="module")
def shared(control_plane: ControlPlane) -> Iterator[Sandbox]:
    """One sandbox for the command tests of this module, killed at the end."""
    with Sandbox.create(template="sdk-base", timeout=600) as sbx:
        yield sbx


# --- commands ---------------------------------------------------------------------------------------


def test_run_gives_stdout_exit_code_and_stderr(shared: Sandbox) -> None:
    assert shared.commands.run("echo hello") == CommandResult("hello\n", "", 0, None)
    failed = shared.commands.run("echo oops >&2; exit 3")
    assert (failed.stdout, failed.stderr, failed.exit_code, failed.signal) == ("", "oops\n", 3, None)


def test_run_takes_envs_and_cwd(shared: Sandbox) -> None:
    result = shared.commands.run('echo "$GREETING"; pwd; id -u', envs={"GREETING": "hi there"}, cwd="/tmp")
    assert result.stdout == "hi there\n/tmp\n1000\n"


def test_run_hands_output_to_callbacks_as_it_comes(shared: Sandbox) -> None:
    out: list[str] = []
    err: list[str] = []
    result = shared.commands.run(
        "printf 'a\\n'; sleep 0.2; printf 'b\\n'; printf 'é' >&2", on_stdout=out.append, on_stderr=err.append
    )
    assert "".join(out) == result.stdout == "a\nb\n"
    assert "".join(err) == result.stderr == "é"


def test_a_background_command_reads_stdin_and_is_waited_for(shared: Sandbox) -> None:
    seen: list[str] = []
    handle = shared.commands.run("read line; echo got:$line", background=True, on_stdout=seen.append)
    assert isinstance(handle, CommandHandle) and handle.pid > 0
    handle.send_stdin("abc\n")
    assert handle.wait() == CommandResult("got:abc\n", "", 0, None)
    assert "".join(seen) == "got:abc\n"
    cat = shared.commands.run("cat", background=True)
    cat.send_stdin(b"bytes ")
    cat.send_stdin("and text")
    cat.close_stdin()
    assert cat.wait().stdout == "bytes and text"
    assert any(p.pid == cat.pid and not p.running for p in shared.commands.list())


def test_a_background_command_is_killed_and_reattached(shared: Sandbox) -> None:
    seen: list[str] = []
    handle = shared.commands.run("echo started; sleep 60", background=True, on_stdout=seen.append)
    again = shared.commands.connect(handle.pid)
    deadline = time.monotonic() + 10
    while "".join(seen) != "started\n" and time.monotonic() < deadline:
        time.sleep(0.01)  # the command is up: killed from here on
    handle.kill()
    result = handle.wait()
    # The tree kill's signal ends it (SIGTERM first, SIGKILL if it still ran): no exit status.
    assert (result.exit_code, result.stdout) == (None, "started\n")
    assert result.signal in ("SIGTERM", "SIGKILL")
    assert again.wait() == result


def test_a_command_timeout_ends_it(shared: Sandbox) -> None:
    started = time.monotonic()
    result = shared.commands.run("sleep 30", timeout=0.5)
    assert time.monotonic() - started < 20
    assert result.exit_code != 0


@pytest.mark.parametrize(
    ("cmd", "options", "field"),
    [
        ("", {}, "cmd"),
        ("echo", {"envs": {"BAD-NAME": "x"}}, "envs.BAD-NAME"),
        ("echo", {"envs": {"A": 5}}, "envs.A"),
        ("echo", {"cwd": "relative"}, "cwd"),
        ("echo", {"timeout": -1}, "timeout"),
        ("echo", {"kill_tree": "yes"}, "kill_tree"),
        ("echo", {"on_stdout": 5}, "on_stdout"),
    ],
)
def test_bad_run_options_raise_before_any_call(
    shared: Sandbox, no_traffic: None, cmd: str, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as raised:
        shared.commands.run(cmd, **options)
    assert raised.value.field == field and raised.value.message.startswith("commands.run: ")


# --- lifecycle --------------------------------------------------------------------------------------


def test_pause_then_connect_resumes_with_processes_kept(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        sleeper = sbx.commands.run("sleep 300", background=True)
        sbx.pause()
        info = sbx.get_info()
        assert (info.state, info.suspend_reason) == ("suspended", "paused")
        assert sbx.connect() is sbx
        assert sbx.get_info().state == "running"
        assert any(p.pid == sleeper.pid and p.running for p in sbx.commands.list())


def test_a_second_handle_connects_with_the_token(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Sandbox.create() as sbx:
        sbx.pause()
        other = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        try:
            assert other.get_info().state == "running"  # connect resumed it
            assert other.commands.run("echo from-other").stdout == "from-other\n"
        finally:
            other.close()
        monkeypatch.setenv("SDK_ACCESS_TOKEN", sbx.access_token)
        from_env = Sandbox.connect(sbx.sandbox_id)
        try:
            assert from_env.sandbox_id == sbx.sandbox_id and from_env.access_token == sbx.access_token
            assert from_env.commands.run("true").exit_code == 0
        finally:
            from_env.close()


def test_connect_without_a_token_raises_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch, no_traffic: None
) -> None:
    monkeypatch.delenv("SDK_ACCESS_TOKEN", raising=False)
    with pytest.raises(AuthenticationException):
        Sandbox.connect("0123456789ab")
    with pytest.raises(InvalidArgumentException) as raised:
        Sandbox.connect("not-an-id", access_token="x")
    assert raised.value.field == "sandbox_id"
    with pytest.raises(InvalidArgumentException) as empty:
        Sandbox.connect("0123456789ab", access_token="")
    assert empty.value.field == "access_token"


def test_a_refused_token_raises_at_the_first_call_without_showing_it(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        wrong = "wrong-token-" + "x" * 20
        other = Sandbox.connect(sbx.sandbox_id, access_token=wrong)
        try:
            with pytest.raises(AuthenticationException) as raised:
                other.commands.run("echo no")
            assert wrong not in str(raised.value) and wrong not in repr(raised.value)
            assert wrong not in repr(other)
        finally:
            other.close()


def test_kill_ends_the_sandbox_and_every_later_call_raises_before_any_traffic(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    sbx = Sandbox.create()
    try:
        running = sbx.commands.run("sleep 300", background=True)
        sbx.kill()
        assert sbx.get_info().state == "ended" and sbx.get_info().end_reason == "killed"
        with pytest.raises(SandboxException):
            running.wait()  # its stream broke with the sandbox
        monkeypatch.setattr(httpx.Client, "send", lambda *a, **k: pytest.fail("an HTTP request was sent"))
        calls: list[Callable[[], object]] = [
            lambda: sbx.commands.run("echo"),
            lambda: sbx.commands.run("echo", background=True),
            lambda: sbx.commands.list(),
            sbx.pause,
            sbx.connect,
            sbx.kill,
            lambda: running.send_stdin("x"),
            running.kill,
        ]
        for call in calls:
            with pytest.raises(SandboxException) as raised:
                call()
            assert raised.value.code == "sandbox_ended"
            assert sbx.access_token not in str(raised.value)
    finally:
        sbx.close()


def test_a_second_handle_learns_the_sandbox_ended(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed through another handle: this one's next daemon call (a command run and followed in one
    stream) is refused by the control plane with ``sandbox_ended``; the handle remembers it, and every
    call after is refused before any request."""
    with Sandbox.create() as sbx:
        other = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        sbx.kill()
        try:
            with pytest.raises(SandboxException) as first:
                other.commands.run("echo")
            assert first.value.code == "sandbox_ended"
            with monkeypatch.context() as patched:
                patched.setattr(httpx.Client, "send", lambda *a, **k: pytest.fail("an HTTP request was sent"))
                calls: list[Callable[[], object]] = [
                    lambda: other.commands.run("echo"),
                    other.commands.list,
                    lambda: other.files.read("/home/user/a"),
                    lambda: other.files.write("/home/user/a", "x"),
                    other.pause,
                ]
                for call in calls:
                    with pytest.raises(SandboxException, match="has ended") as raised:
                        call()
                    assert raised.value.code == "sandbox_ended"
        finally:
            other.close()


def test_a_call_on_a_suspended_sandbox_without_auto_resume_is_refused_and_not_remembered(
    control_plane: ControlPlane,
) -> None:
    """Without auto-resume the control plane refuses a daemon call on a suspended sandbox with
    ``sandbox_suspended`` (no call of the SDK precedes it); the handle does not take that for an end:
    once resumed, the same call goes through."""
    body = {"template": "sdk-base", "timeoutMs": 120_000, "idlePolicy": {"maxIdleSeconds": 300, "autoResume": False}}
    request = urllib.request.Request(
        f"{control_plane.url}/v1/sandboxes", data=json.dumps(body).encode(), method="POST",
        headers={"authorization": f"Bearer {control_plane.operator_key}", "content-type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as answer:
        created = json.loads(answer.read())
    with Sandbox.connect(created["sandboxId"], access_token=created["accessToken"]) as sbx:
        sbx.pause()
        for call in (lambda: sbx.commands.run("echo"), sbx.commands.list):
            with pytest.raises(SandboxException) as refused:
                call()
            assert refused.value.code == "sandbox_suspended"
        assert sbx.get_info().state == "suspended"
        sbx.connect()
        assert sbx.commands.run("echo resumed").stdout == "resumed\n"


def test_with_kills_the_sandbox_at_exit(control_plane: ControlPlane) -> None:
    with Sandbox.create(timeout=120, memory_mb=256, cpus=0.5, isolation="namespace") as sbx:
        sandbox_id = sbx.sandbox_id
        info = sbx.get_info()
        assert (info.template, info.isolation) == ("sdk-base", "namespace")
    answer = control_plane._call("GET", f"/v1/sandboxes/{sandbox_id}")
    assert isinstance(answer, dict) and answer["state"] == "ended"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"template": "Not A Template"}, "template"),
        ({"allow_internet_access": "yes"}, "allow_internet_access"),
        ({"isolation": "kvm"}, "isolation"),
        ({"snapshot": "snap_nope"}, "snapshot"),
        ({"isolation": 1}, "isolation"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": 8 * 3600 + 1}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"memory_mb": 31}, "memory_mb"),
        ({"memory_mb": 512.5}, "memory_mb"),
        ({"cpus": 0.01}, "cpus"),
        ({"cpus": float("nan")}, "cpus"),
        ({"control_plane_url": "ftp://example"}, "control_plane_url"),
        ({"request_timeout": 0}, "request_timeout"),
        ({"timeout": 0, "memory_mb": 1}, "timeout"),
    ],
)
def test_bad_create_options_raise_before_any_call(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], field: str
) -> None:
    before = sandbox_count(control_plane)
    with monkeypatch.context() as patched:
        patched.setattr(httpx.Client, "send", lambda *a, **k: pytest.fail("an HTTP request was sent"))
        with pytest.raises(InvalidArgumentException) as raised:
            Sandbox.create(**options)
    assert raised.value.field == field and raised.value.message.startswith("Sandbox.create: ")
    assert sandbox_count(control_plane) == before


def test_the_token_is_in_no_repr(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        token = sbx.access_token
        handle = sbx.commands.run("sleep 1", background=True)
        assert len(token) >= 16
        for text in (repr(sbx), str(sbx), repr(sbx._core), repr(handle), repr(sbx.get_info())):
            assert token not in text
        handle.kill()


# --- the wire edge ----------------------------------------------------------------------------------


def test_a_malformed_answer_is_a_sandbox_exception_saying_so() -> None:
    call = Call(control_plane("http://127.0.0.1:1"), "GET", "/v1/sandboxes/x", model_parser(SandboxInfo), "t")
    malformed = "malformed answer from the control plane to GET /v1/sandboxes/x"
    with pytest.raises(SandboxException, match=malformed):
        read_answer(call, 200, b'{"sandboxId": "x", "secret": "do-not-echo"}')
    with pytest.raises(SandboxException) as raised:
        read_answer(call, 200, b'{"sandboxId": "x", "accessToken": "do-not-echo"}')
    assert raised.value.__context__ is None and raised.value.__cause__ is None  # no payload anywhere
    with pytest.raises(SandboxException) as not_json:
        read_answer(call, 200, b"not json")
    assert "not json" not in str(not_json.value)
    refusal = b'{"code": "sandbox_not_found", "message": "no such sandbox"}'
    with pytest.raises(SandboxException) as refused:
        read_answer(call, 404, refusal)
    assert refused.value.code == "sandbox_not_found"
    with pytest.raises(AuthenticationException):
        read_answer(call, 401, b'{"code": "unauthenticated", "message": "missing or invalid token"}')


def test_ndjson_lines_split_across_chunks_are_read_whole() -> None:
    decoder = NdjsonDecoder("/v1/x")
    assert decoder.feed(b'{"a": 1}\n{"b"') == [{"a": 1}]
    assert decoder.feed(b': "\xc3') == []
    assert decoder.feed(b'\xa9"}\n') == [{"b": "é"}]
    with pytest.raises(SandboxException, match="malformed line") as raised:
        decoder.feed(b"{sandbox content\n")
    assert raised.value.__context__ is None
    with pytest.raises(SandboxException, match="longer than allowed"):
        NdjsonDecoder("/v1/x", max_line_bytes=4).feed(b"123456")


def test_create_without_the_operator_key_is_refused(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sandbox_count(control_plane)
    monkeypatch.delenv("SDK_API_KEY")
    with pytest.raises(AuthenticationException):
        Sandbox.create()
    assert sandbox_count(control_plane) == before


def test_an_unreachable_control_plane_is_a_sandbox_exception(control_plane: ControlPlane) -> None:
    with pytest.raises(SandboxException, match="did not answer POST /v1/sandboxes") as raised:
        Sandbox.create(control_plane_url="http://127.0.0.1:9", request_timeout=5)
    assert raised.value.__context__ is None  # httpx's error (its request holds a credential) is not kept
