"""``SecretStore`` and ``SecretCache`` on their real backends: the local file (the same file and format
as the TypeScript SDK, which reads what Python wrote) in a temporary folder, and Secrets Manager served by
moto. Values never appear in a repr or a message; importing ``sdk`` imports no boto3."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from _world import Moto
from conftest import REPO
from sdk import (
    InvalidArgumentException,
    SandboxException,
    SecretCache,
    SecretNotFoundException,
    SecretRef,
    SecretStore,
)

VALUE = "sk-store-planted-value-7d1f0a2b"


def test_importing_sdk_loads_no_boto3() -> None:
    code = "import sys, sdk; sdk.SecretStore(region='us-east-1'); print('boto3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_local_store_creates_reads_updates_in_an_owner_only_file(tmp_path: Path) -> None:
    file = tmp_path / "sub" / "secrets.json"
    store = SecretStore(file=str(file))
    assert not file.exists()  # construction makes no call
    store.create("llm-key", VALUE)
    assert store.get_value("llm-key") == VALUE
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert json.loads(file.read_text()) == {"llm-key": VALUE}
    store.update("llm-key", "Bearer rotated")
    assert store.get_value("llm-key") == "Bearer rotated"
    with pytest.raises(SandboxException, match="already exists") as exists:
        store.create("llm-key", VALUE)
    with pytest.raises(SecretNotFoundException) as missing:
        store.get_value("nope")
    with pytest.raises(SecretNotFoundException):
        store.update("nope", VALUE)
    for shown in (repr(store), str(exists.value), repr(exists.value), str(missing.value)):
        assert VALUE not in shown and "rotated" not in shown


def test_local_file_is_the_typescript_sdks(tmp_path: Path) -> None:
    """The built TypeScript SDK reads what Python wrote, and Python reads what it wrote."""
    file = tmp_path / "secrets.json"
    SecretStore(file=str(file)).create("from-python", VALUE)
    backend = REPO / "dist" / "sdk" / "secret-store" / "local-secrets-backend.js"
    script = (
        f"const m = await import({json.dumps(str(backend))});"
        f"const b = new m.LocalSecretsBackend({json.dumps(str(file))});"
        "await b.create('from-ts', 'ts-value-1234'); process.stdout.write(await b.read('from-python'));"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    assert out.stdout == VALUE
    assert SecretStore(file=str(file)).get_value("from-ts") == "ts-value-1234"


def test_default_file_follows_sdk_secret_store_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDK_SECRET_STORE_FILE", str(tmp_path / "env.json"))
    SecretStore().create("by-env", VALUE)
    assert json.loads((tmp_path / "env.json").read_text()) == {"by-env": VALUE}
    monkeypatch.delenv("SDK_SECRET_STORE_FILE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    SecretStore().create("by-home", VALUE)
    assert (tmp_path / "home" / ".sdk" / "secrets.json").exists()


def test_bad_arguments_raise_without_the_value(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentException) as bad_region:
        SecretStore(region="Europe")
    assert bad_region.value.field == "region"
    with pytest.raises(InvalidArgumentException) as bad_file:
        SecretStore(file="relative.json")
    assert bad_file.value.field == "file"
    with pytest.raises(InvalidArgumentException) as bad_endpoint:
        SecretStore(region="us-east-1", endpoint="ftp://x")
    assert bad_endpoint.value.field == "endpoint"
    store = SecretStore(file=str(tmp_path / "s.json"))
    with pytest.raises(InvalidArgumentException) as bad_name:
        store.create("sk live key with spaces", VALUE)
    assert bad_name.value.field == "name" and "sk live" not in str(bad_name.value)
    with pytest.raises(InvalidArgumentException) as empty:
        store.create("ok", "")
    assert empty.value.field == "value"
    with pytest.raises(InvalidArgumentException) as bad_ttl:
        SecretCache(ttl=-1)
    assert bad_ttl.value.field == "ttl"


def test_secrets_manager_through_moto(moto: Moto) -> None:
    store = SecretStore(region="us-east-1", endpoint=moto.endpoint)
    store.create("aws-key", VALUE)
    assert store.get_value("aws-key") == VALUE
    store.update("aws-key", "Bearer rotated-aws")
    assert store.get_value("aws-key") == "Bearer rotated-aws"
    with pytest.raises(SecretNotFoundException) as missing:
        store.get_value("aws-missing")
    with pytest.raises(SecretNotFoundException):
        store.update("aws-missing", VALUE)
    # AWS's error does not even ride along as the exception's context.
    assert VALUE not in str(missing.value) and missing.value.__context__ is None


def test_cache_hits_until_the_ttl_and_invalidate_rereads(moto: Moto) -> None:
    store = SecretStore(region="us-east-1", endpoint=moto.endpoint)
    store.create("cached-key", "first-value")
    clock = [0.0]
    cache = SecretCache(ttl=60, store=store, now=lambda: clock[0])
    assert cache.get("cached-key") == "first-value"
    store.update("cached-key", "second-value")
    assert cache.get(SecretRef("cached-key", region="us-east-1")) == "second-value"  # other key: read
    assert cache.get("cached-key") == "first-value"  # a hit makes no call
    clock[0] = 61
    assert cache.get("cached-key") == "second-value"
    store.update("cached-key", "third-value")
    cache.invalidate(["cached-key"])
    assert cache.get("cached-key") == "third-value"
    assert "value" not in repr(cache).replace("ttl", "")
    with pytest.raises(SecretNotFoundException):
        cache.get("not-there")

