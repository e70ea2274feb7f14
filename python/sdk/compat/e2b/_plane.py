"""The control-plane calls the shim makes with the API key (the operator key): create, and E2B's
class-side ``list``, ``kill``, ``get_info`` and ``pause`` by sandbox id. Written once as operations
(``sdk._http.Op``) that the sync and the async shim drive."""

from __future__ import annotations

from pydantic import TypeAdapter

from ... import _control_plane as plane_calls
from ..._http import Call, Op, model_parser
from ..._sandbox_core import Launched
from ..._sandbox_options import CreateOptions
from ..._secret_text import SecretText
from ..._wire import CreatedSandbox, SandboxInfo

_SANDBOX_LIST: TypeAdapter[list[SandboxInfo]] = TypeAdapter(list[SandboxInfo])


def create_op(options: CreateOptions, api_key: str) -> Op[Launched]:
    """``POST /v1/sandboxes`` with the shim's key (the native SDK reads only ``SDK_API_KEY``)."""
    url = plane_calls.control_plane_url(options.control_plane_url)
    plane = plane_calls.control_plane(url)
    created: CreatedSandbox = yield Call(
        plane, "POST", "/v1/sandboxes", model_parser(CreatedSandbox), api_key, options.body()
    )
    timeout = options.request_timeout
    token = SecretText(created.access_token)
    return Launched(created.sandbox_id, token, created.daemon_url, url, timeout, created.seq)


def list_op(url: str, api_key: str) -> Op[list[SandboxInfo]]:
    """``GET /v1/sandboxes``: every sandbox the control plane knows, ended ones included."""
    listed: list[SandboxInfo] = yield Call(
        plane_calls.control_plane(url),
        "GET",
        "/v1/sandboxes",
        lambda payload: _SANDBOX_LIST.validate_python(payload, strict=True),
        api_key,
    )
    return listed


def info_op(url: str, api_key: str, sandbox_id: str) -> Op[SandboxInfo]:
    """``GET /v1/sandboxes/:id`` with the key."""
    info: SandboxInfo = yield plane_calls.info_call(plane_calls.control_plane(url), sandbox_id, api_key)
    return info


def kill_op(url: str, api_key: str, sandbox_id: str) -> Op[SandboxInfo]:
    """``DELETE /v1/sandboxes/:id`` with the key."""
    info: SandboxInfo = yield plane_calls.kill_call(plane_calls.control_plane(url), sandbox_id, api_key)
    return info


def pause_op(url: str, api_key: str, sandbox_id: str) -> Op[SandboxInfo]:
    """``POST /v1/sandboxes/:id/pause`` with the key."""
    peer = plane_calls.control_plane(url)
    info: SandboxInfo = yield plane_calls.action_call(peer, sandbox_id, api_key, "pause")
    return info
