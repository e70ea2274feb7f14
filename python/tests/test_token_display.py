"""No display of a sandbox handle shows its access token or its preview key (``sdk/sandbox.ts``'s
``util.inspect`` test):
``repr``, ``str``, f-strings, ``pprint``, ``vars()`` and ``__dict__`` dumps to JSON (flat with
``default=str``, and recursive into every object's ``__dict__``), ``dataclasses.asdict`` of what a
handle was built on, and pickling (refused: the pickle would hold the token) — of the native handles,
sync and async, their ``ports``, and of the E2B shim's, with its ``native``. ``access_token`` still gives
the token, and ``ports.token`` a port's token derived from the key.
Handles are built on a launched sandbox without a server: none of this makes a call."""

from __future__ import annotations

import dataclasses
import json
import pickle
import pprint
from typing import Any, Iterator

import pytest

from sdk import AsyncSandbox, Sandbox
from sdk._http import AsyncTransport, Transport
from sdk._sandbox_lifecycle import Launched
from sdk._secret_text import SecretText
from sdk.compat.e2b import AsyncSandbox as ShimAsyncSandbox
from sdk.compat.e2b import Sandbox as ShimSandbox
from sdk.ports import port_token

TOKEN = "tok-SECRET-a1b2c3d4e5f6a7b8c9d0"
SANDBOX_ID = "0123456789ab"
PREVIEW_KEY = "pvk-SECRET-0f1e2d3c4b5a69788796a5b4"
SECRETS = (TOKEN, PREVIEW_KEY)


def launched() -> Launched:
    return Launched(
        SANDBOX_ID, SecretText(TOKEN), "http://127.0.0.1:9", "http://127.0.0.1:9", 5.0, 1, None,
        f"http://127.0.0.1:9/v1/sandboxes/{SANDBOX_ID}/ports/{{port}}/", SecretText(PREVIEW_KEY),
    )  # fmt: skip


def deep(value: object) -> object:
    """A recursive ``__dict__`` dump's ``default``: an object's attributes, else its ``str``."""
    attributes = getattr(value, "__dict__", None)
    return attributes if isinstance(attributes, dict) else str(value)


def renderings(value: Any) -> dict[str, str]:
    """Every way a program or a logger commonly shows an object."""
    shown = {
        "repr": repr(value),
        "str": str(value),
        "f-string": f"{value} {value!r}",
        "format": "{} {!r}".format(value, value),
        "pprint": pprint.pformat(value),
        "json default=str": json.dumps(value, default=str),
        "json default=__dict__": json.dumps(value, default=deep),
    }
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        shown["vars"] = repr(vars(value))
        shown["pprint vars"] = pprint.pformat(vars(value))
        shown["json vars default=str"] = json.dumps(vars(value), default=str)
        shown["json vars default=__dict__"] = json.dumps(vars(value), default=deep)
    return shown


def leaks(value: object) -> list[str]:
    """The renderings of ``value`` that show the token or the preview key."""
    return [how for how, text in renderings(value).items() if any(secret in text for secret in SECRETS)]


def pickled_leak(value: object) -> bool:
    """True when a pickle of ``value`` holds the token or the preview key (a pickle that is refused holds
    nothing)."""
    try:
        data = pickle.dumps(value)
    except (TypeError, AttributeError, pickle.PicklingError):
        return False
    return any(secret.encode() in data for secret in SECRETS)


@pytest.fixture
def sync_handle() -> Iterator[Sandbox]:
    transport = Transport(5.0)
    try:
        yield Sandbox(launched(), transport)
    finally:
        transport.close()


@pytest.fixture
async def async_handle() -> Any:
    transport = AsyncTransport(5.0)
    try:
        yield AsyncSandbox(launched(), transport)
    finally:
        await transport.aclose()


def test_the_secret_text_shows_itself_masked_and_only_reveal_gives_it() -> None:
    secret = SecretText(TOKEN)
    assert secret.reveal() == TOKEN
    assert leaks(secret) == [] and leaks([secret]) == [] and leaks({"token": secret}) == []
    assert str(secret) == "[secret]" and f"{secret:>40}" == "[secret]"
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    with pytest.raises(AttributeError):
        secret._text = "changed"
    assert secret == SecretText(TOKEN) and secret != SecretText("other")


def test_a_sync_handle_never_shows_its_token(sync_handle: Sandbox) -> None:
    sbx = sync_handle
    assert sbx.access_token == TOKEN
    assert sbx.ports.token(8000) == port_token(PREVIEW_KEY, 8000)
    values = (sbx, sbx._core, sbx.commands, sbx.files, sbx.gateways, sbx.agent, sbx.ports, [sbx], {"sbx": sbx})
    for value in values:
        assert leaks(value) == [], type(value).__name__
        assert not pickled_leak(value), type(value).__name__
    for secret in SECRETS:
        assert secret not in repr(dataclasses.asdict(sbx._core.launched))
        assert secret not in json.dumps(dataclasses.asdict(sbx._core.launched), default=str)


async def test_an_async_handle_never_shows_its_token(async_handle: AsyncSandbox) -> None:
    sbx = async_handle
    assert sbx.access_token == TOKEN
    assert sbx.ports.token(8000) == port_token(PREVIEW_KEY, 8000)
    for value in (sbx, sbx._core, sbx.commands, sbx.files, sbx.gateways, sbx.agent, sbx.ports, [sbx]):
        assert leaks(value) == [], type(value).__name__
        assert not pickled_leak(value), type(value).__name__


def test_the_e2b_shim_handle_and_its_native_never_show_the_token(sync_handle: Sandbox) -> None:
    shim = ShimSandbox(sync_handle)
    assert shim.native.access_token == TOKEN
    for value in (shim, shim.native, shim.files, shim.commands, [shim]):
        assert leaks(value) == [], type(value).__name__
        assert not pickled_leak(value), type(value).__name__


async def test_the_async_e2b_shim_handle_never_shows_the_token(async_handle: AsyncSandbox) -> None:
    shim = ShimAsyncSandbox(async_handle)
    assert shim.native.access_token == TOKEN
    for value in (shim, shim.native, shim.files, shim.commands):
        assert leaks(value) == [], type(value).__name__
        assert not pickled_leak(value), type(value).__name__
