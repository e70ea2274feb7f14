"""Issue 25's "done when", for the Python E2B shim: programs from E2B's documentation and its SDK's tests
that write outside the home or use ``sudo``, changed only in their import, run against the shim as they
do on E2B. Writes and ``make_dir`` whose parent folders are missing (``/path/to/file``,
``/0/multi_test_file0.txt``, ``/data/x``) make them owned by the calling account, as E2B's envd does;
``user`` has passwordless ``sudo``; ``user="root"`` runs commands and file calls as the sandbox's root.
What stays the user's own limit: writing a file straight into an existing folder only root may write to
(``/etc``) is refused with the shim's class for ``permission_denied``, a ``SandboxException`` with that
``code``. Every test ends the sandboxes it created."""

from __future__ import annotations

import pytest

from conftest import ControlPlane
from sdk.compat.e2b import (
    AsyncSandbox,
    CommandExitException,
    FileType,
    Sandbox,
    SandboxException,
    WriteEntry,
)

from _e2b_fixtures import sandbox  # noqa: F401  (a fixture)


def owners_of(sandbox: Sandbox, *paths: str) -> str:
    """``stat -c "%U %a"`` of each path, one line each, as the sandbox's user sees them."""
    return sandbox.commands.run(f'stat -c "%U %a" {" ".join(paths)}').stdout


def test_write_to_path_to_file_makes_the_users_folders_under_root(sandbox: Sandbox) -> None:
    info = sandbox.files.write("/path/to/file", "content")
    assert (info.name, info.type, info.path) == ("file", FileType.FILE, "/path/to/file")
    assert sandbox.files.read("/path/to/file") == "content"
    assert owners_of(sandbox, "/path", "/path/to", "/path/to/file") == "user 755\nuser 755\nuser 644\n"
    # The folders are the user's own: the user's later writes there need no sudo.
    assert sandbox.commands.run("echo more > /path/to/other && cat /path/to/other").stdout == "more\n"


def test_write_files_into_a_folder_that_does_not_exist_under_root(sandbox: Sandbox) -> None:
    infos = sandbox.files.write_files(
        [
            WriteEntry(path="/0/multi_test_file0.txt", data="x"),
            WriteEntry(path="/0/multi_test_file1.txt", data="y"),
        ]
    )
    assert [info.path for info in infos] == ["/0/multi_test_file0.txt", "/0/multi_test_file1.txt"]
    assert sandbox.files.read("/0/multi_test_file0.txt") == "x"
    assert sandbox.files.read("/0/multi_test_file1.txt") == "y"
    assert owners_of(sandbox, "/0", "/0/multi_test_file0.txt", "/0/multi_test_file1.txt") == (
        "user 755\nuser 644\nuser 644\n"
    )


def test_make_dir_under_root_makes_the_users_folders(sandbox: Sandbox) -> None:
    assert sandbox.files.make_dir("/data/x") is True
    assert sandbox.files.make_dir("/data/x") is False
    entry = sandbox.files.get_info("/data/x")
    assert (entry.name, entry.type, entry.path) == ("x", FileType.DIR, "/data/x")
    assert (entry.owner, entry.group, entry.permissions) == ("user", "user", "drwxr-xr-x")
    assert owners_of(sandbox, "/data", "/data/x") == "user 755\nuser 755\n"
    sandbox.files.write("/data/x/notes.txt", "in the new folder")
    assert sandbox.files.read("/data/x/notes.txt") == "in the new folder"


def test_sudo_whoami_is_root_without_a_password(sandbox: Sandbox) -> None:
    result = sandbox.commands.run("sudo whoami")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "root\n", "")
    # No password is asked for: sudo -n fails where one would be.
    assert sandbox.commands.run("sudo -n true && echo no-password").stdout == "no-password\n"


def test_sudo_makes_a_folder_under_opt_for_the_user(sandbox: Sandbox) -> None:
    result = sandbox.commands.run(
        "sudo mkdir -p /opt/tool && sudo chown user /opt/tool && echo ok > /opt/tool/f && cat /opt/tool/f"
    )
    assert (result.exit_code, result.stdout, result.stderr) == (0, "ok\n", "")
    assert owners_of(sandbox, "/opt/tool", "/opt/tool/f") == "user 755\nuser 644\n"
    assert sandbox.files.read("/opt/tool/f") == "ok\n"


def test_commands_run_as_root(sandbox: Sandbox) -> None:
    result = sandbox.commands.run("whoami", user="root")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "root\n", "")
    assert sandbox.commands.run("id -u; pwd", user="root").stdout == "0\n/root\n"
    assert sandbox.commands.run("whoami").stdout == "user\n"  # the default is still the user


def test_files_write_as_root_into_etc_and_read_back_as_root(sandbox: Sandbox) -> None:
    info = sandbox.files.write("/etc/e2b-test", "x", user="root")
    assert (info.name, info.type, info.path) == ("e2b-test", FileType.FILE, "/etc/e2b-test")
    assert sandbox.files.read("/etc/e2b-test", user="root") == "x"
    entry = sandbox.files.get_info("/etc/e2b-test", user="root")
    assert (entry.owner, entry.group, entry.permissions) == ("root", "root", "-rw-r--r--")
    assert owners_of(sandbox, "/etc/e2b-test") == "root 644\n"
    # Root's missing parents are root's.
    sandbox.files.write("/srv/root-only/f", "r", user="root")
    assert owners_of(sandbox, "/srv/root-only", "/srv/root-only/f") == "root 755\nroot 644\n"


def test_a_users_write_into_roots_etc_is_refused_with_permission_denied(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxException) as refused:
        sandbox.files.write("/etc/x", "x")
    assert type(refused.value) is SandboxException  # not a NotFound- or InvalidArgumentException
    assert refused.value.code == "permission_denied"
    # Nothing was written, and /etc is still root's.
    assert sandbox.files.exists("/etc/x") is False
    assert owners_of(sandbox, "/etc") == "root 755\n"
    # The same write with sudo's help (as a shell program would) works.
    assert sandbox.commands.run("echo x | sudo tee /etc/x > /dev/null && cat /etc/x").stdout == "x\n"
    # The user's own shell is refused the same way: a CommandExitException, as E2B's.
    with pytest.raises(CommandExitException) as shell:
        sandbox.commands.run("echo y > /etc/y")
    assert "Permission denied" in shell.value.stderr


async def test_async_program_writes_outside_the_home_and_uses_sudo(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        info = await sbx.files.write("/path/to/file", "content")
        assert info.path == "/path/to/file"
        assert await sbx.files.read("/path/to/file") == "content"
        stat = await sbx.commands.run('stat -c "%U %a" /path /path/to /path/to/file')
        assert stat.stdout == "user 755\nuser 755\nuser 644\n"
        assert await sbx.files.make_dir("/data/x") is True
        assert (await sbx.files.get_info("/data/x")).owner == "user"
        assert (await sbx.commands.run("sudo whoami")).stdout == "root\n"
        assert (await sbx.commands.run("whoami", user="root")).stdout == "root\n"
        await sbx.files.write("/etc/e2b-test", "x", user="root")
        assert await sbx.files.read("/etc/e2b-test", user="root") == "x"
        with pytest.raises(SandboxException) as refused:
            await sbx.files.write("/etc/x", "x")
        assert type(refused.value) is SandboxException and refused.value.code == "permission_denied"
