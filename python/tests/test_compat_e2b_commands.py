"""The sync E2B shim's ``commands`` running programs written for E2B's SDK (after its docs and SDK tests:
run, exit codes, streaming callbacks, timeouts, ``user``, background commands, stdin, connect) against
the real control plane. Every test ends the sandboxes it created."""

from __future__ import annotations

import pytest

from sdk.compat.e2b import (
    CommandExitException,
    CommandHandle,
    CommandResult,
    InvalidArgumentException,
    NotFoundException,
    Sandbox,
    SandboxException,
    TimeoutException,
)

from _e2b_fixtures import sbx  # noqa: F401  (a fixture)


# --- commands ------------------------------------------------------------------------------------


def test_run_hello_with_create_envs_as_the_sandbox_user_in_home(sbx: Sandbox) -> None:
    result = sbx.commands.run('echo "Hello, World!"; echo "$GREETING"; whoami; pwd; [[ -n "$BASH_VERSION" ]]')
    assert isinstance(result, CommandResult)
    assert result.exit_code == 0 and result.error is None
    assert result.stdout == "Hello, World!\nfrom create\nuser\n/home/user\n"
    assert sbx.commands.run('echo "$GREETING"', envs={"GREETING": "own"}, cwd="/tmp").stdout == "own\n"
    sbx.files.make_dir("work")
    assert sbx.commands.run("pwd", cwd="work").stdout == "/home/user/work\n"  # relative to /home/user


def test_a_non_zero_exit_raises_command_exit_exception(sbx: Sandbox) -> None:
    with pytest.raises(CommandExitException) as failed:
        sbx.commands.run("echo out; echo oops >&2; exit 3")
    error = failed.value
    assert (error.exit_code, error.stdout, error.stderr, error.error) == (3, "out\n", "oops\n", "exit status 3")
    assert isinstance(error, SandboxException) and "exited with code 3" in str(error)


def test_run_streams_output_to_callbacks(sbx: Sandbox) -> None:
    out: list[str] = []
    err: list[str] = []
    sbx.commands.run("echo a; sleep 0.2; echo b; echo c >&2", on_stdout=out.append, on_stderr=err.append)
    assert "".join(out) == "a\nb\n" and "".join(err) == "c\n"


def test_a_command_past_its_timeout_raises_timeout_exception(sbx: Sandbox) -> None:
    with pytest.raises(TimeoutException):
        sbx.commands.run("sleep 10", timeout=1)
    handle = sbx.commands.run("sleep 10", timeout=1, background=True)
    with pytest.raises(TimeoutException):
        for _ in handle:
            pass


def test_user_root_runs_as_the_sandboxs_root_as_in_e2b(sbx: Sandbox) -> None:
    assert sbx.commands.run("id -u; pwd", user="root").stdout == "0\n/root\n"
    sbx.files.write("/etc/sdk-test", "as root", user="root")
    assert sbx.files.read("/etc/sdk-test", user="root") == "as root"
    assert sbx.files.get_info("/etc/sdk-test").owner == "root"
    sbx.files.write("notes.txt", "root's", user="root")  # relative: under /root
    assert sbx.commands.run("cat /root/notes.txt", user="root").stdout == "root's"
    with pytest.raises(InvalidArgumentException, match="user: must be 'user' or 'root'"):
        sbx.commands.run("id", user="nobody")
    assert sbx.commands.run("id -u", user="user").stdout == "1000\n"


def test_background_list_kill(sbx: Sandbox) -> None:
    first = sbx.commands.run("sleep 30", background=True)
    second = sbx.commands.run("sleep 30", background=True)
    assert isinstance(first, CommandHandle)
    pids = [process.pid for process in sbx.commands.list()]
    assert first.pid in pids and second.pid in pids
    assert sbx.commands.kill(first.pid) is True
    with pytest.raises(CommandExitException) as killed:
        first.wait()
    # The whole tree is ended (SIGTERM, then SIGKILL for what remains): a signal, exit code -1 as in E2B.
    assert killed.value.exit_code == -1 and killed.value.error in ("signal: terminated", "signal: killed")
    assert second.kill() is True
    assert first.pid not in [process.pid for process in sbx.commands.list()]
    assert sbx.commands.kill(999_999) is False


def test_stdin_iteration_and_wait(sbx: Sandbox) -> None:
    cat = sbx.commands.run("cat", background=True, stdin=True)
    sbx.commands.send_stdin(cat.pid, "Hello, World!")
    for stdout, stderr, _ in cat:
        assert (stdout, stderr) == ("Hello, World!", None)
        break
    cat.send_stdin(b" again")
    cat.close_stdin()
    assert cat.wait().stdout == "Hello, World! again"
    # Without stdin=True the command's stdin is closed, as in E2B: cat ends at once.
    assert sbx.commands.run("cat", timeout=10).stdout == ""


def test_wait_hands_output_to_callbacks_and_connect_reattaches(sbx: Sandbox) -> None:
    handle = sbx.commands.run("echo one; sleep 1; echo two", background=True)
    attached = sbx.commands.connect(handle.pid)
    assert attached.pid == handle.pid
    seen: list[str] = []
    assert attached.wait(on_stdout=seen.append).stdout == "one\ntwo\n"
    assert "".join(seen) == "one\ntwo\n"
    assert handle.wait().exit_code == 0
    with pytest.raises(NotFoundException):
        sbx.commands.connect(999_999)
