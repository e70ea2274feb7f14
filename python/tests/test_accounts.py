"""Issue 25, without a sandbox: ``user="root"`` is accepted by the native ``commands.run`` and every
``sbx.files`` call and by the E2B shim's, and sent as sandboxd reads it (``user`` in a command's start or
a JSON body, ``&user=root`` in a files call's query); the user's calls are sent as they always were (no
``user``); anything else is ``InvalidArgumentException`` on ``user`` before any call. A recording
transport stands where sandboxd would be: it refuses every daemon call, so a test sees what each call
carried."""

from __future__ import annotations

from typing import Any, Callable, cast

import pytest

from sdk import InvalidArgumentException, SandboxException
from sdk._files_core import FilesCore
from sdk._http import Call, Transport
from sdk._sandbox_core import SandboxCore
from sdk._sandbox_lifecycle import Launched
from sdk._command_options import resolve_run_options
from sdk._secret_text import SecretText
from sdk.compat.e2b import InvalidArgumentException as E2BInvalidArgumentException
from sdk.compat.e2b._command_options import plan_run
from sdk.compat.e2b._files_options import file_call, write_entries
from sdk.compat.e2b.files import Filesystem
from sdk.files import Files

RULE = "must be 'user' or 'root'"


def core() -> SandboxCore:
    launched = Launched("0123456789ab", SecretText("recorded-token"), "http://127.0.0.1:9", "http://127.0.0.1:9", 5.0)
    return SandboxCore(launched)


class Recorder:
    """A transport that records every call and refuses it (no call precedes a daemon call)."""

    request_timeout = 5.0

    def __init__(self) -> None:
        self.calls: list[Call[Any]] = []

    def call(self, call: Call[Any]) -> object:
        self.calls.append(call)
        raise SandboxException("recorded", "sandbox_suspended")

    def open_stream(self, call: Call[Any], timeout: float | None) -> object:
        self.calls.append(call)
        raise SandboxException("recorded", "sandbox_suspended")


def sent(recorder: Recorder, act: Callable[[], object]) -> Call[Any]:
    """The one daemon call ``act`` made (the recorder refuses it)."""
    before = len(recorder.calls)
    with pytest.raises(Exception):
        act()
    assert len(recorder.calls) == before + 1
    return recorder.calls[-1]


def run_start(**options: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = dict(
        envs=None, cwd=None, timeout=None, kill_tree=True, on_stdout=None, on_stderr=None, background=False
    )
    return resolve_run_options("id -u", **{**defaults, **options}).start


def test_commands_run_sends_root_in_the_start_and_nothing_for_the_user() -> None:
    assert run_start(user="root") == {"cmd": "id -u", "envs": {}, "killTree": True, "user": "root"}
    assert run_start(user="user") == {"cmd": "id -u", "envs": {}, "killTree": True}
    assert run_start() == {"cmd": "id -u", "envs": {}, "killTree": True}


@pytest.mark.parametrize("user", ["nobody", "", "ROOT", None, 0, ["root"]])
def test_commands_run_refuses_any_other_user(user: object) -> None:
    with pytest.raises(InvalidArgumentException) as raised:
        run_start(user=user)
    assert raised.value.field == "user"
    assert raised.value.message == f"commands.run: user: {RULE}"


def test_files_send_root_in_the_query_or_the_body() -> None:
    recorder = Recorder()
    files = Files(core(), cast(Transport, recorder))
    for act, path in [
        (lambda: files.read("/etc/hostname", user="root"), "/v1/files/content"),
        (lambda: files.read("/etc/hostname", "bytes", user="root"), "/v1/files/content"),
        (lambda: files.write("/etc/sdk-test", "x", user="root"), "/v1/files/content"),
        (lambda: files.write_files([("/etc/a", b"a")], user="root"), "/v1/files/content"),
        (lambda: files.list("/etc", 2, user="root"), "/v1/files/list"),
        (lambda: files.get_info("/etc", user="root"), "/v1/files/info"),
        (lambda: files.exists("/etc", user="root"), "/v1/files/info"),
    ]:
        call = sent(recorder, act)
        assert call.path.startswith(f"{path}?path=%2Fetc") and "&user=root" in call.path, call.path
    assert sent(recorder, lambda: files.make_dir("/data", user="root")).json_body == {"path": "/data", "user": "root"}
    assert sent(recorder, lambda: files.remove("/data", user="root")).json_body == {"path": "/data", "user": "root"}
    renamed = sent(recorder, lambda: files.rename("/a", "/b", user="root"))
    assert renamed.json_body == {"from": "/a", "to": "/b", "user": "root"}
    watch = FilesCore(core()).watch_call("/etc", True, "root")
    assert watch.path == "/v1/files/watch?path=%2Fetc&user=root&recursive=true"


def test_files_of_the_user_are_sent_as_before() -> None:
    recorder = Recorder()
    files = Files(core(), cast(Transport, recorder))
    assert sent(recorder, lambda: files.read("/home/user/a")).path == "/v1/files/content?path=%2Fhome%2Fuser%2Fa"
    assert sent(recorder, lambda: files.write("/home/user/a", "x", user="user")).path.endswith("%2Fa")
    assert sent(recorder, lambda: files.make_dir("/home/user/d")).json_body == {"path": "/home/user/d"}
    assert sent(recorder, lambda: files.rename("/a", "/b")).json_body == {"from": "/a", "to": "/b"}
    assert all("user=" not in call.path for call in recorder.calls)


def test_files_refuse_any_other_user_before_any_call() -> None:
    recorder = Recorder()
    files = Files(core(), cast(Transport, recorder))
    bad: Any = "nobody"
    acts: list[tuple[str, Callable[[], object]]] = [
        ("files.read", lambda: files.read("/a", user=bad)),
        ("files.write", lambda: files.write("/a", "x", user=bad)),
        ("files.write_files", lambda: files.write_files([("/a", "x")], user=bad)),
        ("files.list", lambda: files.list("/a", user=bad)),
        ("files.exists", lambda: files.exists("/a", user=bad)),
        ("files.get_info", lambda: files.get_info("/a", user=bad)),
        ("files.make_dir", lambda: files.make_dir("/a", user=bad)),
        ("files.remove", lambda: files.remove("/a", user=bad)),
        ("files.rename", lambda: files.rename("/a", "/b", user=bad)),
        ("files.watch_dir", lambda: files.watch_dir("/a", lambda event: None, user=bad)),
    ]
    for call, act in acts:
        with pytest.raises(InvalidArgumentException) as raised:
            act()
        assert raised.value.field == "user" and raised.value.message == f"{call}: user: {RULE}"
    assert recorder.calls == []


def test_the_e2b_shim_passes_root_through_and_resolves_its_paths_under_root() -> None:
    plan = plan_run("id -u", envs=None, user="root", cwd="work", stdin=None, timeout=None)
    assert plan.native["user"] == "root" and plan.native["cwd"] == "/root/work"
    plain = plan_run("id -u", envs=None, user=None, cwd="work", stdin=None, timeout=None)
    assert plain.native["user"] == "user" and plain.native["cwd"] == "/home/user/work"
    assert "cwd" not in plan_run("id -u", envs=None, user="root", cwd=None, stdin=None, timeout=None).native
    assert file_call("notes.txt", "root", "files.read") == ("/root/notes.txt", "root")
    assert file_call("notes.txt", None, "files.read") == ("/home/user/notes.txt", "user")
    assert file_call("/etc/hosts", "root", "files.read") == ("/etc/hosts", "root")
    assert write_entries([{"path": "a", "data": "x"}], "root") == ([("/root/a", "x")], "root")

    recorder = Recorder()
    shim = Filesystem(Files(core(), cast(Transport, recorder)))
    written = sent(recorder, lambda: shim.write("a.txt", "x", user="root"))
    assert written.path == "/v1/files/content?path=%2Froot%2Fa.txt&user=root"
    renamed = sent(recorder, lambda: shim.rename("a", "b", user="root"))
    assert renamed.json_body == {"from": "/root/a", "to": "/root/b", "user": "root"}
    assert sent(recorder, lambda: shim.make_dir("/path/to", user="root")).json_body == {
        "path": "/path/to",
        "user": "root",
    }


@pytest.mark.parametrize("user", ["nobody", "", "ROOT", 0])
def test_the_e2b_shim_refuses_any_other_user_before_any_call(user: object) -> None:
    with pytest.raises(E2BInvalidArgumentException, match=f"commands.run: user: {RULE}"):
        plan_run("id", envs=None, user=user, cwd=None, stdin=None, timeout=None)
    recorder = Recorder()
    shim = Filesystem(Files(core(), cast(Transport, recorder)))
    bad: Any = user
    for act in (
        lambda: shim.read("a", user=bad),
        lambda: shim.write("a", "x", user=bad),
        lambda: shim.write_files([{"path": "a", "data": "x"}], user=bad),
        lambda: shim.list("a", user=bad),
        lambda: shim.make_dir("a", user=bad),
        lambda: shim.rename("a", "b", user=bad),
    ):
        with pytest.raises(E2BInvalidArgumentException):
            act()
    assert recorder.calls == []
