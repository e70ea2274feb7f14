"""The sync E2B shim (``sdk.compat.e2b``) refusing before any call, without a server: E2B's hosted-service
options, ``gateways``, a missing API key, malformed arguments, unknown ids, unsupported methods and
features; and its pure parts: list pages, native errors mapped to E2B's classes, listed commands and
signal names as E2B shows them. The shim reads ``SDK_CONTROL_PLANE_URL`` and ``SDK_API_KEY``/``E2B_API_KEY``
as the session's control plane sets them."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from sdk import InvalidArgumentException as NativeInvalidArgumentException
from sdk import SandboxException as NativeSandboxException
from sdk.compat.e2b import (
    AuthenticationException,
    FileNotFoundException,
    InvalidArgumentException,
    NotEnoughSpaceException,
    NotFoundException,
    Sandbox,
    SandboxException,
    SandboxNotFoundException,
    SandboxInfo,
    SandboxPaginator,
    SandboxQuery,
    SandboxState,
    NotSupportedException,
)
from sdk.compat.e2b.command_result import _SIGNAL_WORDS, bash_command, signal_error, to_process_info
from sdk.compat.e2b._sandbox_plan import Unsupported
from sdk.compat.e2b.exceptions import from_native
from sdk._wire import ProcessInfo as NativeProcessInfo


# --- refusals before any call (no server) --------------------------------------------------------


def test_hosted_service_options_are_refused_naming_them(
    no_traffic: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SDK_API_KEY", "key")
    with pytest.raises(NotSupportedException, match="`domain` is E2B's hosted service") as refused:
        Sandbox.create(domain="e2b.app")
    assert refused.value.feature == "domain" and refused.value.code == "not_supported"
    assert isinstance(refused.value, SandboxException) and not isinstance(refused.value, InvalidArgumentException)
    hosted: dict[str, Any] = {"api_url": "https://api.e2b.app", "sandbox_url": "https://x", "proxy": "http://p"}
    for name, value in hosted.items():
        with pytest.raises(NotSupportedException, match=f"^{name} is not supported by the E2B shim"):
            Sandbox.create(**{name: value})
    unsupported: dict[str, Any] = {
        "mcp": {"github": {}}, "iam": {"tokens": {}},
        "lifecycle": {"on_timeout": "pause"}, "volume_mounts": {"/mnt": "v"},
    }  # fmt: skip
    for option, value in unsupported.items():
        with pytest.raises(NotSupportedException, match=f"^{option} is not supported"):
            Sandbox.create(**{option: value})
    with pytest.raises(NotSupportedException, match="^debug"):
        Sandbox.create(debug=True)


def test_e2b_domain_needs_sdk_control_plane_url(no_traffic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_DOMAIN", "e2b.app")
    monkeypatch.delenv("SDK_CONTROL_PLANE_URL", raising=False)
    with pytest.raises(NotSupportedException, match="set SDK_CONTROL_PLANE_URL") as refused:
        Sandbox.create()
    assert refused.value.feature == "E2B_DOMAIN"


def test_gateways_are_refused_pointing_at_the_native_sdk(no_traffic: None) -> None:
    with pytest.raises(InvalidArgumentException, match=r"gateways is not accepted.*native SDK"):
        Sandbox.create(gateways={"llm": object()})
    assert not hasattr(Sandbox, "agent")


def test_a_missing_api_key_is_an_authentication_error_before_any_call(
    no_traffic: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SDK_API_KEY", "E2B_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AuthenticationException, match="api_key option or SDK_API_KEY$"):
        Sandbox.create()
    with pytest.raises(AuthenticationException):
        Sandbox.kill("0123456789ab")
    # E2B's connect takes an id; sandboxd takes the sandbox's own token, which this process lacks.
    monkeypatch.delenv("SDK_ACCESS_TOKEN", raising=False)
    with pytest.raises(AuthenticationException, match="access token"):
        Sandbox.connect("0123456789ab")


def test_malformed_arguments_raise_before_any_call(no_traffic: None) -> None:
    with pytest.raises(InvalidArgumentException, match="timeout"):
        Sandbox.create(timeout=-1)
    with pytest.raises(InvalidArgumentException, match="envs"):
        Sandbox.create(envs={"1BAD": "x"})
    with pytest.raises(InvalidArgumentException, match="sandbox_id"):
        Sandbox.connect(12)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException, match="connect: timeout"):
        Sandbox.connect("0123456789ab", timeout=-1)
    with pytest.raises(InvalidArgumentException, match="SandboxQuery.state"):
        Sandbox.list(SandboxQuery(state=["stopped"]))  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentException, match="bogus: is not an option of E2B's SDK"):
        Sandbox.create(bogus=1)


def test_an_id_this_control_plane_never_makes_names_no_sandbox(no_traffic: None) -> None:
    # E2B answers an unknown id so: kill is False, the rest SandboxNotFoundException (before any call here).
    assert Sandbox.kill("not-an-id") is False
    for call in (Sandbox.get_info, Sandbox.connect, Sandbox.pause):
        with pytest.raises(SandboxNotFoundException, match="not-an-id not found"):
            call("not-an-id")


def test_list_pages_hold_e2b_s_hundred_by_default(no_traffic: None) -> None:
    end = datetime.now(timezone.utc)
    listed = [SandboxInfo(f"{n:012x}", "sdk-base", "sdk-base", SandboxState.RUNNING, end, end) for n in range(150)]
    paginator = SandboxPaginator(lambda: listed, None, None)
    assert paginator.next_items() == listed[:100] and paginator.has_next
    assert paginator.next_items() == listed[100:] and not paginator.has_next


def test_unsupported_methods_name_the_feature(no_traffic: None) -> None:
    # get_metrics, set_timeout and listing by metadata are offered (test_compat_e2b_metrics.py,
    # test_compat_e2b_lifecycle_calls.py), their arguments checked first.
    with pytest.raises(InvalidArgumentException, match="start must not be after end"):
        Sandbox.get_metrics("0123456789ab", datetime(2030, 1, 2, tzinfo=timezone.utc), datetime(2030, 1, 1))
    with pytest.raises(InvalidArgumentException, match="timeout"):
        Sandbox.set_timeout("0123456789ab", 0)
    with pytest.raises(InvalidArgumentException, match="SandboxQuery: metadata"):
        Sandbox.list(SandboxQuery(metadata={"": "v"}))
    # sbx.pty is offered too (test_compat_e2b_pty.py); git is not.
    with pytest.raises(NotSupportedException) as refused:
        Unsupported().git
    assert refused.value.feature == "git"


def test_native_errors_become_e2b_classes() -> None:
    cases = {
        "file_not_found": FileNotFoundException,
        "sandbox_not_found": SandboxNotFoundException,
        "sandbox_ended": SandboxNotFoundException,
        "process_not_found": NotFoundException,
        "no_space": NotEnoughSpaceException,
        "is_a_directory": InvalidArgumentException,
        "permission_denied": SandboxException,
    }
    for code, kind in cases.items():
        error = from_native(NativeSandboxException("files.read: failed", code))
        assert type(error) is kind and error.code == code and str(error) == "files.read: failed"
    refused = from_native(NativeInvalidArgumentException("commands.run: cmd: must not be empty", "cmd"))
    assert type(refused) is InvalidArgumentException
    assert issubclass(FileNotFoundException, NotFoundException)
    assert issubclass(NotFoundException, SandboxException)
    assert not issubclass(AuthenticationException, SandboxException)  # as in E2B


def test_listed_commands_show_as_e2b_runs_them() -> None:
    # The same line the TypeScript shim builds (test/unit/compat-e2b.test.ts), so either lists the other's.
    assert bash_command("sleep 'a b'", False) == "exec /bin/bash -l -c 'sleep '\"'\"'a b'\"'\"'' </dev/null"
    assert bash_command("ls", True) == "exec /bin/bash -l -c ls"
    for cmd in ("sleep 'a b'", 'echo "$HOME" \\ done', "ls", "it's"):
        for stdin in (False, True):
            started = NativeProcessInfo(pid=7, cmd=bash_command(cmd, stdin), running=True)
            assert (to_process_info(started).cmd, to_process_info(started).args) == ("/bin/bash", ["-l", "-c", cmd])
    other = to_process_info(NativeProcessInfo(pid=8, cmd="echo x", running=True))
    assert (other.cmd, other.args) == ("/bin/sh", ["-c", "echo x"])
    # A terminal the shim opened (either shim: TypeScript's PTY_SHELL is the same line) is E2B's bash -i -l.
    terminal = to_process_info(NativeProcessInfo(pid=9, cmd="exec /bin/bash -i -l", running=True, pty=True))
    assert (terminal.pid, terminal.cmd, terminal.args, terminal.envs) == (9, "/bin/bash", ["-i", "-l"], {})


def test_a_signal_reads_as_go_names_it() -> None:
    # The same table as the TypeScript shim's GO_SIGNAL_NAMES (31 signals), and the same fallback.
    assert len(_SIGNAL_WORDS) == 31
    assert signal_error("SIGKILL") == "signal: killed" and signal_error("SIGTERM") == "signal: terminated"
    assert signal_error("SIGSEGV") == "signal: segmentation fault"
    assert signal_error("SIGRTMIN") == "signal: SIGRTMIN" and signal_error(None) == "signal: unknown"
