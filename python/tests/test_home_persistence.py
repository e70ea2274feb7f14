"""Home persistence end to end (``Sandbox.create(persist=..., execution_role_arn=...)``,
``checkpoint_files``): real sandboxes, and a moto server of this module's own with IAM enforced (as
``test/integration/support/moto-iam.ts``), so the SDK's caller can only assume roles and every S3 call
must come from the execution role's temporary credentials. Only loopback is called. Every test ends
the sandboxes it created."""

from __future__ import annotations

import json
import os
import secrets
import urllib.request
from typing import Any, Iterator

import boto3  # type: ignore[import-untyped]
import pytest

from _world import Moto
from conftest import ControlPlane
from sdk import AsyncSandbox, InvalidArgumentException, S3Prefix, Sandbox, SandboxException

REGION = "us-east-1"
BUCKET = "sdk-homes"
ACCOUNT = "123456789012"


class Iam:
    """What :func:`iam` made: keys of the caller (may only assume roles) and an admin, and three roles."""

    def __init__(self, endpoint: str) -> None:
        kw: dict[str, Any] = dict(
            endpoint_url=endpoint, region_name=REGION, aws_access_key_id="setup", aws_secret_access_key="setup"
        )
        self._iam = boto3.client("iam", **kw)
        boto3.client("s3", **kw).create_bucket(Bucket=BUCKET)
        self.caller = self._user("sdk-caller", ["sts:AssumeRole"])
        self.admin = self._user("test-admin", ["*"])
        me = f"arn:aws:iam::{ACCOUNT}:user/sdk-caller"
        self.home_role = self._role("sandbox-home", me, ["s3:*"])
        self.untrusting_role = self._role("someone-elses", f"arn:aws:iam::{ACCOUNT}:user/someone-else", ["s3:*"])
        self.no_s3_role = self._role("no-s3", me, [])

    @staticmethod
    def _policy(actions: list[str]) -> str:
        return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})

    def _user(self, name: str, actions: list[str]) -> tuple[str, str]:
        self._iam.create_user(UserName=name)
        self._iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=self._policy(actions))
        key = self._iam.create_access_key(UserName=name)["AccessKey"]
        return str(key["AccessKeyId"]), str(key["SecretAccessKey"])

    def _role(self, name: str, trusted: str, actions: list[str]) -> str:
        trust = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": trusted}, "Action": "sts:AssumeRole"}]}
        arn = str(self._iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"])
        if actions:
            self._iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=self._policy(actions))
        return arn


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane) -> Iterator[tuple[Moto, Iam, Any]]:
    """moto with IAM enforced; the caller's key in the environment; an admin S3 client for looking."""
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    saved = {name: os.environ.get(name) for name in names}
    server = Moto()
    try:
        made = Iam(server.endpoint)
        urllib.request.urlopen(urllib.request.Request(
            f"{server.endpoint}/moto-api/reset-auth", data=b"0", method="POST",
            headers={"content-type": "text/plain"}), timeout=10).close()
        os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = made.caller
        os.environ.pop("AWS_SESSION_TOKEN", None)
        admin = boto3.client("s3", endpoint_url=server.endpoint, region_name=REGION,
                             aws_access_key_id=made.admin[0], aws_secret_access_key=made.admin[1])
        yield server, made, admin
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def place(world: tuple[Moto, Iam, Any], bucket: str = BUCKET) -> S3Prefix:
    return S3Prefix(bucket, "teams/a", f"home-{secrets.token_hex(4)}", region=REGION, endpoint=world[0].endpoint)


def head(admin: Any, key: str) -> dict[str, Any] | None:
    try:
        return dict(admin.head_object(Bucket=BUCKET, Key=key))
    except Exception:
        return None


def test_persist_needs_the_role_before_any_call(world: tuple[Moto, Iam, Any]) -> None:
    with pytest.raises(InvalidArgumentException) as refused:
        Sandbox.create(persist=place(world))
    assert refused.value.context["field"] == "execution_role_arn"


def test_saves_the_home_and_a_new_sandbox_starts_with_it(world: tuple[Moto, Iam, Any]) -> None:
    persist = place(world)
    role = world[1].home_role
    with Sandbox.create(persist=persist, execution_role_arn=role) as first:
        assert first.commands.run("ls -A ~ | wc -l").stdout == "0\n"
        first.commands.run("cd ~ && mkdir -p notes && printf hello > notes/a.txt && chmod 640 notes/a.txt")
        first.checkpoint_files()
    saved = head(world[2], persist.key)
    assert persist.key == f"teams/a/{persist.name}/home.tar.gz"
    assert saved is not None and saved["ContentType"] == "application/gzip"
    with Sandbox.create(persist=persist, execution_role_arn=role) as second:
        out = second.commands.run('cd ~ && cat notes/a.txt && echo && stat -c "%a %u" notes/a.txt').stdout
        assert out == "hello\n640 1000\n"


async def test_async_saves_and_restores(world: tuple[Moto, Iam, Any]) -> None:
    persist = place(world)
    role = world[1].home_role
    async with await AsyncSandbox.create(persist=persist, execution_role_arn=role) as first:
        await first.commands.run("printf async > ~/kept")
        await first.checkpoint_files()
    async with await AsyncSandbox.create(persist=persist, execution_role_arn=role) as second:
        assert (await second.commands.run("cat ~/kept")).stdout == "async"


def test_a_failed_save_leaves_the_previous_archive(world: tuple[Moto, Iam, Any]) -> None:
    persist = place(world)
    admin = world[2]
    with Sandbox.create(persist=persist, execution_role_arn=world[1].home_role) as sbx:
        sbx.commands.run("printf v1 > ~/kept")
        sbx.checkpoint_files()
        saved = head(admin, persist.key)
        assert saved is not None
        # An unreadable file: tar writes a well-formed archive without it and exits 2 (the trailer says so).
        sbx.commands.run("printf v2 > ~/kept && printf x > ~/locked && chmod 000 ~/locked")
        with pytest.raises(SandboxException) as failed:
            sbx.checkpoint_files()
        assert failed.value.message == (
            "checkpoint_files: the home archive failed in the sandbox (tar ended with 2); "
            "the saved home was left as it was"
        )
        after = head(admin, persist.key)
        assert after is not None and after["ETag"] == saved["ETag"]
        assert admin.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []


def test_checkpoint_on_a_connected_handle_is_refused(world: tuple[Moto, Iam, Any]) -> None:
    with Sandbox.create(persist=place(world), execution_role_arn=world[1].home_role) as sbx:
        connected = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        try:
            with pytest.raises(InvalidArgumentException):
                connected.checkpoint_files()
        finally:
            connected.close()


def created_fails(control_plane: ControlPlane, persist: S3Prefix, role: str, message: str) -> None:
    before = control_plane.live_ids()
    with pytest.raises(SandboxException) as failed:
        Sandbox.create(persist=persist, execution_role_arn=role)
    assert failed.value.message == message
    assert control_plane.live_ids() == before  # the new sandbox was ended


def test_missing_bucket(world: tuple[Moto, Iam, Any], control_plane: ControlPlane) -> None:
    created_fails(control_plane, place(world, "no-such-bucket"), world[1].home_role,
                  "persist: bucket no-such-bucket does not exist")


def test_role_the_caller_may_not_assume(world: tuple[Moto, Iam, Any], control_plane: ControlPlane) -> None:
    role = world[1].untrusting_role
    created_fails(control_plane, place(world), role,
                  f"persist: the caller's credentials could not assume the execution role {role} (AccessDenied)")


def test_role_without_s3_access(world: tuple[Moto, Iam, Any], control_plane: ControlPlane) -> None:
    persist, role = place(world), world[1].no_s3_role
    created_fails(control_plane, persist, role,
                  f"persist: the execution role {role} may not read s3://{BUCKET}/{persist.key} (AccessDenied)")


def test_denied_role_at_checkpoint(world: tuple[Moto, Iam, Any], control_plane: ControlPlane) -> None:
    """A save under a role that may not write: the error names the role and the object."""
    persist = place(world)
    # Created with the good role, then its persistence points at a role without S3 (as a revoked one).
    with Sandbox.create(persist=persist, execution_role_arn=world[1].home_role) as sbx:
        assert sbx._creating is not None
        sbx._creating = type(sbx._creating)(**{**sbx._creating.__dict__, "execution_role_arn": world[1].no_s3_role})
        with pytest.raises(SandboxException) as failed:
            sbx.checkpoint_files()
        role = world[1].no_s3_role
        assert failed.value.message == (
            f"persist: the execution role {role} may not write s3://{BUCKET}/{persist.key} (AccessDenied)"
        )
        assert head(world[2], persist.key) is None
