"""sandboxd's command calls (``daemon/daemon-server.ts``) as :class:`~sdk._http.Call` values, each with
the sandbox access token."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from ._http import Call, Peer, PeerHooks, model_parser
from ._wire import (
    CredentialState,
    EmptyAnswer,
    GatewayState,
    PidAnswer,
    ProcessEvent,
    ProcessInfo,
    SecretsState,
    VersionAnswer,
    parse_process_event,
)

_MALFORMED_EVENT = "malformed process event from the daemon"
_PROCESS_LIST: TypeAdapter[list[ProcessInfo]] = TypeAdapter(list[ProcessInfo])


def _parse_process_list(payload: object) -> list[ProcessInfo]:
    return _PROCESS_LIST.validate_python(payload, strict=True)


def daemon(url: str, hooks: PeerHooks | None = None) -> Peer:
    """The sandbox daemon at ``url`` (the control plane's proxy to it) as a peer of calls; ``hooks``
    (what the sandbox handle knows of its end) hear every call and its refusals."""
    return Peer(url, "the daemon", "the sandbox daemon", hooks)


def run_stream_call(peer: Peer, token: str, start: dict[str, Any]) -> Call[ProcessEvent]:
    """``POST /v1/processes?stream=true``: starts a command; the answer is its event stream."""
    path = "/v1/processes?stream=true"
    return Call(peer, "POST", path, parse_process_event, token, start, malformed=_MALFORMED_EVENT)


def start_call(peer: Peer, token: str, start: dict[str, Any]) -> Call[PidAnswer]:
    """``POST /v1/processes``: starts a command in the background."""
    return Call(peer, "POST", "/v1/processes", model_parser(PidAnswer), token, start)


def events_call(peer: Peer, token: str, pid: int, after: int = 0) -> Call[ProcessEvent]:
    """``GET /v1/processes/:pid/events``: the command's events from its start (the output sandboxd kept),
    or after event ``after`` (``seq``) to re-attach."""
    path = f"/v1/processes/{pid}/events" + (f"?after={after}" if after > 0 else "")
    return Call(peer, "GET", path, parse_process_event, token, malformed=_MALFORMED_EVENT)


def stdin_call(peer: Peer, token: str, pid: int, data: bytes) -> Call[object]:
    """``POST /v1/processes/:pid/stdin``: raw bytes appended to its stdin."""
    return Call(peer, "POST", f"/v1/processes/{pid}/stdin", lambda payload: payload, token, content=data)


def close_stdin_call(peer: Peer, token: str, pid: int) -> Call[EmptyAnswer]:
    """``POST /v1/processes/:pid/stdin/close``."""
    return Call(peer, "POST", f"/v1/processes/{pid}/stdin/close", model_parser(EmptyAnswer), token)


def resize_call(peer: Peer, token: str, pid: int, cols: int, rows: int) -> Call[EmptyAnswer]:
    """``POST /v1/processes/:pid/resize``: a terminal's new size (``sbx.pty``; its program gets SIGWINCH)."""
    body = {"cols": cols, "rows": rows}
    return Call(peer, "POST", f"/v1/processes/{pid}/resize", model_parser(EmptyAnswer), token, body)


def signal_call(peer: Peer, token: str, pid: int, tree: bool) -> Call[EmptyAnswer]:
    """``POST /v1/processes/:pid/signal``: SIGKILL to the command, or to its whole tree."""
    body = {"signal": "SIGKILL", "tree": tree}
    return Call(peer, "POST", f"/v1/processes/{pid}/signal", model_parser(EmptyAnswer), token, body)


def list_call(peer: Peer, token: str) -> Call[list[ProcessInfo]]:
    """``GET /v1/processes``: commands the daemon knows."""
    return Call(peer, "GET", "/v1/processes", _parse_process_list, token)


def version_call(peer: Peer, token: str) -> Call[VersionAnswer]:
    """``GET /v1/version``: the daemon's version."""
    return Call(peer, "GET", "/v1/version", lambda payload: VersionAnswer.model_validate(payload), token)


def gateway_state_call(peer: Peer, token: str) -> Call[GatewayState]:
    """``GET /v1/gateways`` (ConfigureStatus): ports, urls and failure classes, never a value."""
    return Call(peer, "GET", "/v1/gateways", model_parser(GatewayState), token)


def configure_call(peer: Peer, token: str, routes: dict[str, Any]) -> Call[GatewayState]:
    """``POST /v1/gateways`` (ConfigureSandbox): the whole configuration, values included (never logged)."""
    return Call(peer, "POST", "/v1/gateways", model_parser(GatewayState), token, {"routes": routes})


def put_secrets_call(peer: Peer, token: str, envs: dict[str, str]) -> Call[SecretsState]:
    """``PUT /v1/secrets``: ``secrets=`` as environment variables of every command, values included."""
    return Call(peer, "PUT", "/v1/secrets", model_parser(SecretsState), token, {"envs": envs})


def credential_state_call(peer: Peer, token: str) -> Call[CredentialState]:
    """``GET /v1/credentials``: the credential broker's hosts, proxy and CA fingerprint, never a value."""
    return Call(peer, "GET", "/v1/credentials", model_parser(CredentialState), token)


def configure_credentials_call(peer: Peer, token: str, rules: list[dict[str, Any]]) -> Call[CredentialState]:
    """``POST /v1/credentials``: every credential rule with its resolved header values, replacing the set
    in force (never logged)."""
    return Call(peer, "POST", "/v1/credentials", model_parser(CredentialState), token, {"rules": rules})
