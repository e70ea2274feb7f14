"""The control-plane calls the shim makes with the API key (the operator key): create, E2B's
class-side ``list`` (by state and metadata), ``kill``, ``get_info``, ``pause``, ``set_timeout``,
``get_metrics`` and ``update_network`` by sandbox id, and the snapshots' calls: the native SDK's calls
(``sdk._control_plane``) with the shim's key. Written once as operations (``sdk._http.Op``) that the sync
and the async shim drive."""

from __future__ import annotations

from typing import Mapping, Sequence

from ... import _control_plane as plane_calls
from ..._http import Call, Op, model_parser
from ..._sandbox_lifecycle import Launched, launched_from
from ..._lifecycle_options import MetricsRange
from ..._sandbox_options import CreateOptions
from ..._wire import (
    CreatedSandbox,
    EgressPolicyWire,
    EmptyAnswer,
    SandboxInfo,
    SandboxMetric,
    SandboxMetrics,
    SandboxState,
    SnapshotInfo,
    SnapshotList,
)
from ...egress_policy import EgressPolicy


def create_call(options: CreateOptions, api_key: str) -> Call[CreatedSandbox]:
    """``POST /v1/sandboxes`` with the shim's key (the native SDK reads only ``SDK_API_KEY``)."""
    plane = plane_calls.control_plane(plane_calls.control_plane_url(options.control_plane_url))
    return Call(plane, "POST", "/v1/sandboxes", model_parser(CreatedSandbox), api_key, options.body())


def create_op(options: CreateOptions, api_key: str) -> Op[Launched]:
    """Creates a sandbox with the shim's key: what the native handle is built on."""
    created: CreatedSandbox = yield create_call(options, api_key)
    url = plane_calls.control_plane_url(options.control_plane_url)
    return launched_from(created, url, options.request_timeout)


def list_op(
    url: str, api_key: str, states: Sequence[SandboxState] = (), metadata: Mapping[str, str] | None = None
) -> Op[list[SandboxInfo]]:
    """``GET /v1/sandboxes`` (the native ``Sandbox.list``'s call) with the key: the sandboxes in one of
    ``states`` (any when empty) whose metadata holds every entry of ``metadata`` (any when None)."""
    call = plane_calls.list_call(plane_calls.control_plane(url), api_key, states, metadata)
    listed: list[SandboxInfo] = yield call
    return listed


def timeout_op(url: str, api_key: str, sandbox_id: str, timeout_ms: int) -> Op[SandboxInfo]:
    """``POST /v1/sandboxes/:id/timeout`` with the key: the sandbox ends ``timeout_ms`` from now (refused
    past 8 h from its creation, ``invalid_argument``)."""
    peer = plane_calls.control_plane(url)
    info: SandboxInfo = yield plane_calls.timeout_call(peer, sandbox_id, api_key, timeout_ms)
    return info


def metrics_op(url: str, api_key: str, sandbox_id: str, wanted: MetricsRange) -> Op[list[SandboxMetric]]:
    """``GET /v1/sandboxes/:id/metrics`` with the key: the samples in ``wanted``, oldest first (never
    resumes the sandbox)."""
    peer = plane_calls.control_plane(url)
    answer: SandboxMetrics = yield plane_calls.metrics_call(peer, sandbox_id, api_key, wanted.start, wanted.end)
    return answer.metrics


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
    info: SandboxInfo = yield plane_calls.pause_call(peer, sandbox_id, api_key)
    return info


def egress_op(url: str, api_key: str, sandbox_id: str, policy: EgressPolicy) -> Op[EgressPolicyWire]:
    """``PUT /v1/sandboxes/:id/egress`` with the key: replaces the sandbox's egress policy."""
    peer = plane_calls.control_plane(url)
    answer: EgressPolicyWire = yield plane_calls.egress_call(peer, sandbox_id, api_key, policy._wire().wire())
    return answer


def snapshot_op(url: str, api_key: str, sandbox_id: str) -> Op[SnapshotInfo]:
    """``POST /v1/sandboxes/:id/snapshots`` with the key."""
    peer = plane_calls.control_plane(url)
    taken: SnapshotInfo = yield plane_calls.snapshot_call(peer, sandbox_id, api_key)
    return taken


def snapshots_op(url: str, api_key: str) -> Op[list[SnapshotInfo]]:
    """``GET /v1/snapshots``: every snapshot of the control plane, oldest first."""
    listed: SnapshotList = yield plane_calls.snapshots_call(plane_calls.control_plane(url), api_key)
    return listed.snapshots


def delete_snapshot_op(url: str, api_key: str, snapshot_id: str) -> Op[EmptyAnswer]:
    """``DELETE /v1/snapshots/:snapshotId`` with the key."""
    peer = plane_calls.control_plane(url)
    deleted: EmptyAnswer = yield plane_calls.delete_snapshot_call(peer, snapshot_id, api_key)
    return deleted
