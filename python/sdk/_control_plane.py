"""The control plane's calls (``control-plane/http-api.ts``) as :class:`~sdk._http.Call` values: where the
control plane is, the operator key, and the sandbox calls the SDK makes with the sandbox access token."""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from pydantic import TypeAdapter

from ._http import Call, Peer, model_parser
from ._wire import (
    ConnectedSandbox,
    CreatedSandbox,
    EgressPolicyWire,
    EmptyAnswer,
    ExposePortRequest,
    ForkedSandboxes,
    ForkRequest,
    PreviewPortInfo,
    PreviewPorts,
    SandboxInfo,
    SandboxMetrics,
    SandboxState,
    SetTimeoutRequest,
    SnapshotInfo,
    SnapshotList,
    TemplateBuildLine,
    parse_template_build_line,
)

#: Where the control plane is when neither ``control_plane_url=`` nor ``SDK_CONTROL_PLANE_URL`` says.
DEFAULT_CONTROL_PLANE_URL = "http://127.0.0.1:4780"


def control_plane_url(explicit: str | None = None) -> str:
    """``explicit``, else ``SDK_CONTROL_PLANE_URL``, else the local default; without a trailing slash."""
    url = explicit or os.environ.get("SDK_CONTROL_PLANE_URL") or DEFAULT_CONTROL_PLANE_URL
    return url.rstrip("/")


def operator_key() -> str | None:
    """The operator key (``SDK_API_KEY``) the SDK presents to create sandboxes."""
    return os.environ.get("SDK_API_KEY") or None


def control_plane(url: str) -> Peer:
    """The control plane at ``url`` as a peer of calls."""
    return Peer(url, "the control plane", f"the control plane at {url}")


def create_call(plane: Peer, body: dict[str, Any]) -> Call[CreatedSandbox]:
    """``POST /v1/sandboxes`` with the operator key."""
    return Call(plane, "POST", "/v1/sandboxes", model_parser(CreatedSandbox), operator_key(), body)


def connect_call(plane: Peer, sandbox_id: str, token: str) -> Call[ConnectedSandbox]:
    """``POST /v1/sandboxes/:id/connect``: resumes a suspended sandbox; says where its daemon is."""
    return Call(plane, "POST", f"/v1/sandboxes/{sandbox_id}/connect", model_parser(ConnectedSandbox), token)


def info_call(plane: Peer, sandbox_id: str, token: str | None) -> Call[SandboxInfo]:
    """``GET /v1/sandboxes/:id`` with the sandbox's token (or the operator key: ``Sandbox.get_info``)."""
    return Call(plane, "GET", f"/v1/sandboxes/{sandbox_id}", model_parser(SandboxInfo), token)


_SANDBOX_INFOS: TypeAdapter[list[SandboxInfo]] = TypeAdapter(list[SandboxInfo])


def list_call(
    plane: Peer, key: str | None, states: Sequence[SandboxState] = (), metadata: Mapping[str, str] | None = None
) -> Call[list[SandboxInfo]]:
    """``GET /v1/sandboxes`` with the operator key: every sandbox (ended ones too), or those in one of
    ``states`` (``state`` repeated in the query) whose metadata holds every entry of ``metadata`` (one
    ``metadata`` parameter holding the entries URL-encoded, ``k=v&k2=v2``, as E2B's API takes them)."""
    query: list[tuple[str, str]] = [("state", state) for state in states]
    if metadata is not None:
        query.append(("metadata", urlencode(list(metadata.items()))))
    path = "/v1/sandboxes" + (f"?{urlencode(query)}" if query else "")
    return Call(plane, "GET", path, lambda payload: _SANDBOX_INFOS.validate_python(payload, strict=True), key)


def timeout_call(plane: Peer, sandbox_id: str, token: str, timeout_ms: int) -> Call[SandboxInfo]:
    """``POST /v1/sandboxes/:id/timeout`` with the sandbox's token: it ends ``timeout_ms`` from now
    (refused past 8 h from its creation, ``invalid_argument``); answers its facts."""
    body = SetTimeoutRequest(timeout_ms=timeout_ms).wire()
    return Call(plane, "POST", f"/v1/sandboxes/{sandbox_id}/timeout", model_parser(SandboxInfo), token, body)


def metrics_call(
    plane: Peer, sandbox_id: str, token: str | None, start: int | None = None, end: int | None = None
) -> Call[SandboxMetrics]:
    """``GET /v1/sandboxes/:id/metrics`` with the sandbox's token or the operator key: the samples taken
    at or after ``start`` and at or before ``end`` (ms since the epoch, each sent only when given), oldest
    first. Never resumes the sandbox; answers for an ended one too (while the control plane keeps them)."""
    query = [(name, str(value)) for name, value in (("start", start), ("end", end)) if value is not None]
    path = f"/v1/sandboxes/{sandbox_id}/metrics" + (f"?{urlencode(query)}" if query else "")
    return Call(plane, "GET", path, model_parser(SandboxMetrics), token)


def kill_call(plane: Peer, sandbox_id: str, token: str) -> Call[SandboxInfo]:
    """``DELETE /v1/sandboxes/:id``."""
    return Call(plane, "DELETE", f"/v1/sandboxes/{sandbox_id}", model_parser(SandboxInfo), token)


def pause_call(plane: Peer, sandbox_id: str, token: str) -> Call[SandboxInfo]:
    """``POST /v1/sandboxes/:id/pause``: suspends the sandbox, memory kept."""
    return Call(plane, "POST", f"/v1/sandboxes/{sandbox_id}/pause", model_parser(SandboxInfo), token)


def egress_call(plane: Peer, sandbox_id: str, token: str, body: dict[str, Any]) -> Call[EgressPolicyWire]:
    """``PUT /v1/sandboxes/:id/egress`` with the sandbox's token: replaces its egress policy (``body``:
    ``mode``, ``allow``, ``deny``, normalised); answers the policy now in force."""
    path = f"/v1/sandboxes/{sandbox_id}/egress"
    return Call(plane, "PUT", path, model_parser(EgressPolicyWire), token, body)


def expose_port_call(plane: Peer, sandbox_id: str, token: str, port: int, public: bool) -> Call[PreviewPortInfo]:
    """``PUT /v1/sandboxes/:id/previews/:port`` with the sandbox's token: makes ``port`` public (anyone
    with its preview URL, no token) or private again; answers ``{port, public}``."""
    path = f"/v1/sandboxes/{sandbox_id}/previews/{port}"
    body = ExposePortRequest(public=public).wire()
    return Call(plane, "PUT", path, model_parser(PreviewPortInfo), token, body)


def public_ports_call(plane: Peer, sandbox_id: str, token: str) -> Call[PreviewPorts]:
    """``GET /v1/sandboxes/:id/previews`` with the sandbox's token: the ports made public."""
    return Call(plane, "GET", f"/v1/sandboxes/{sandbox_id}/previews", model_parser(PreviewPorts), token)


def build_template_call(plane: Peer, body: dict[str, Any]) -> Call[TemplateBuildLine | None]:
    """``POST /v1/templates`` with the operator key: NDJSON, a line per step, then ``built`` or
    ``failed`` (a line of another kind parses as None)."""
    return Call(plane, "POST", "/v1/templates", parse_template_build_line, operator_key(), body)


def snapshot_call(plane: Peer, sandbox_id: str, token: str | None) -> Call[SnapshotInfo]:
    """``POST /v1/sandboxes/:id/snapshots`` with the sandbox's token (or the operator key): takes a
    snapshot; the sandbox goes on."""
    return Call(plane, "POST", f"/v1/sandboxes/{sandbox_id}/snapshots", model_parser(SnapshotInfo), token)


def snapshots_call(plane: Peer, key: str | None, sandbox_id: str | None = None) -> Call[SnapshotList]:
    """``GET /v1/snapshots`` (every snapshot), or ``GET /v1/sandboxes/:id/snapshots`` (one sandbox's),
    with the operator key."""
    path = "/v1/snapshots" if sandbox_id is None else f"/v1/sandboxes/{sandbox_id}/snapshots"
    return Call(plane, "GET", path, model_parser(SnapshotList), key)


def fork_call(plane: Peer, sandbox_id: str, key: str | None, count: int) -> Call[ForkedSandboxes]:
    """``POST /v1/sandboxes/:id/fork`` with the operator key: a snapshot, and ``count`` sandboxes
    started from it (all or none)."""
    body = ForkRequest(count=count).wire()
    return Call(plane, "POST", f"/v1/sandboxes/{sandbox_id}/fork", model_parser(ForkedSandboxes), key, body)


def delete_snapshot_call(plane: Peer, snapshot_id: str, key: str | None) -> Call[EmptyAnswer]:
    """``DELETE /v1/snapshots/:snapshotId`` with the operator key (an unknown id is
    ``invalid_argument``, field ``snapshot``)."""
    return Call(plane, "DELETE", f"/v1/snapshots/{snapshot_id}", model_parser(EmptyAnswer), key)
