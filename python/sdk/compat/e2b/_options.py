"""Where the shim's sandboxes are and with which key, and E2B's options checked before any call: the
server from ``SDK_CONTROL_PLANE_URL`` (default as the native SDK), the key from ``api_key``, else
``SDK_API_KEY`` (never ``E2B_API_KEY``); E2B's hosted-service options refused with the feature named."""

from __future__ import annotations

import os
import posixpath
import re
import threading
from dataclasses import dataclass, field
from typing import Final, Mapping

from ..._control_plane import control_plane_url
from ..._rules import ENV_NAME, ENV_NAME_RULE, SANDBOX_MAX_TIMEOUT_MS, SNAPSHOT_ID
from ..._accounts import ACCOUNT_HOMES, ACCOUNT_RULE, Account
from .exceptions import (
    AuthenticationException,
    InvalidArgumentException,
    NotSupportedException,
    SandboxNotFoundException,
)

#: The sandbox user's home: relative paths and working directories resolve against it, as in E2B (root's
#: against ``/root``).
HOME: Final = ACCOUNT_HOMES["user"]
#: E2B's default template, and the template it becomes here.
E2B_DEFAULT_TEMPLATE: Final = "base"
DEFAULT_TEMPLATE: Final = "sdk-base"
#: The same image able to close egress: E2B's ``base`` with ``allow_internet_access=False`` (the default
#: template cannot close it).
CLOSED_EGRESS_TEMPLATE: Final = "sdk-base-caps"
#: E2B's defaults, seconds: a sandbox's lifetime and a command's (0: no limit).
DEFAULT_SANDBOX_TIMEOUT: Final = 300
DEFAULT_COMMAND_TIMEOUT: Final = 60
#: E2B's default variables in every command of a sandbox the shim creates (E2B's docs, "Environment
#: variables"): ``E2B_SANDBOX``, ``E2B_SANDBOX_ID``, ``E2B_TEMPLATE_ID`` (there is no team here).
E2B_DEFAULT_ENV_NAMES: Final = ("E2B_SANDBOX", "E2B_SANDBOX_ID", "E2B_TEMPLATE_ID")
#: Sandbox-wide environment variables ``create`` takes at most: sandboxd holds 64 (``PUT /v1/secrets``),
#: E2B's default variables take three of them.
MAX_SANDBOX_ENVS: Final = 64 - len(E2B_DEFAULT_ENV_NAMES)


def sandbox_envs(sandbox_id: str, template: str, envs: Mapping[str, str]) -> dict[str, str]:
    """The sandbox-wide variables of a sandbox the shim created: E2B's defaults, then create's ``envs``
    (which win, as a command's own win over both)."""
    defaults = dict(zip(E2B_DEFAULT_ENV_NAMES, ("true", sandbox_id, template)))
    return {**defaults, **envs}

DOMAIN_REFUSAL: Final = "the E2B shim runs on SDK_CONTROL_PLANE_URL; `domain` is E2B's hosted service"
_SERVER_ONLY: Final = "the E2B shim reaches its sandboxes through SDK_CONTROL_PLANE_URL"


@dataclass(frozen=True)
class Server:
    """The control plane a call goes to, the key it presents (if any) and a call's deadline."""

    url: str
    api_key: str | None = field(repr=False)
    request_timeout: float | None

    def key(self, feature: str) -> str:
        """The API key, for a call that needs it.

        :raises AuthenticationException: without one, before any call
        """
        if self.api_key is None:
            raise AuthenticationException(
                f"{feature} needs an API key: the api_key option or SDK_API_KEY"
                + (" (E2B_API_KEY is never sent: it may be a key of E2B's cloud)" if os.environ.get("E2B_API_KEY") else ""),
                "unauthenticated",
            )
        return self.api_key


def resolve_server(
    *,
    api_key: object = None,
    domain: object = None,
    api_url: object = None,
    sandbox_url: object = None,
    debug: object = None,
    proxy: object = None,
    headers: object = None,
    api_headers: object = None,
    request_timeout: object = None,
    validate_api_key: object = None,
    logger: object = None,
    **unknown: object,
) -> Server:
    """E2B's ``ApiParams`` checked: the hosted service's options refused, naming the option
    (``validate_api_key`` and ``logger`` are accepted and have no effect here).

    :raises NotSupportedException: for ``domain``, ``api_url``, ``sandbox_url``, ``debug``,
        ``proxy``, ``headers``/``api_headers``, or ``E2B_DOMAIN`` without ``SDK_CONTROL_PLANE_URL``
    :raises InvalidArgumentException: for a malformed ``api_key`` or ``request_timeout``
    """
    for name in unknown:
        raise InvalidArgumentException(f"{name}: is not an option of E2B's SDK")
    if domain is not None:
        raise NotSupportedException("domain", DOMAIN_REFUSAL)
    if os.environ.get("E2B_DOMAIN") and not os.environ.get("SDK_CONTROL_PLANE_URL"):
        raise NotSupportedException(
            "E2B_DOMAIN", f"{DOMAIN_REFUSAL}; set SDK_CONTROL_PLANE_URL (E2B_DOMAIN is then ignored)"
        )
    for name, value in (("api_url", api_url), ("sandbox_url", sandbox_url), ("proxy", proxy)):
        if value is not None:
            raise NotSupportedException(name, _SERVER_ONLY)
    if debug:
        raise NotSupportedException("debug", "E2B's debug mode talks to a local envd")
    for name, value in (("headers", headers), ("api_headers", api_headers)):
        if value:
            raise NotSupportedException(name, "extra headers are for E2B's API")
    if api_key is not None and (not isinstance(api_key, str) or api_key == ""):
        raise InvalidArgumentException("api_key: must be a non-empty string")
    if request_timeout is not None and (
        isinstance(request_timeout, bool)
        or not isinstance(request_timeout, (int, float))
        or request_timeout <= 0
    ):
        raise InvalidArgumentException("request_timeout: must be a positive number of seconds")
    # Never E2B_API_KEY: it may be a key of E2B's cloud, which must not reach another server.
    from_env = os.environ.get("SDK_API_KEY")
    key = api_key if isinstance(api_key, str) else from_env
    return Server(control_plane_url(), key or None, None if request_timeout is None else float(request_timeout))


def native_template(template: object, closed_egress: bool = False) -> str:
    """E2B's template name as this control plane knows it: ``base`` (E2B's default) is ``sdk-base``, or
    ``sdk-base-caps`` (the same image, able to close egress) with ``closed_egress``; any other name (a
    template built with ``sdk template build``) passes unchanged."""
    if template is None or template == E2B_DEFAULT_TEMPLATE:
        return CLOSED_EGRESS_TEMPLATE if closed_egress else DEFAULT_TEMPLATE
    if not isinstance(template, str):
        raise InvalidArgumentException("template: must be a template name")
    return template


def check_envs(envs: object, what: str = "envs") -> dict[str, str]:
    """Environment variables: names and string values, checked before any call."""
    if envs is None:
        return {}
    if not isinstance(envs, Mapping):
        raise InvalidArgumentException(f"{what}: must be a mapping of names to strings")
    checked: dict[str, str] = {}
    for name, value in envs.items():
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise InvalidArgumentException(f"{what}: {ENV_NAME_RULE}")
        if not isinstance(value, str) or "\0" in value:
            raise InvalidArgumentException(f"{what}.{name}: must be a string without NUL")
        checked[name] = value
    if len(checked) > MAX_SANDBOX_ENVS and what == "envs":
        raise InvalidArgumentException(f"envs: at most {MAX_SANDBOX_ENVS} entries")
    return checked


def check_user(user: object, call: str) -> Account:
    """E2B's ``user``: ``None`` or ``"user"`` (the sandbox user), or ``"root"`` (the sandbox's root), as
    E2B's SDK takes it; anything else is refused before any call."""
    if user is None or (user == "user" and isinstance(user, str)):
        return "user"
    if user == "root" and isinstance(user, str):
        return "root"
    raise InvalidArgumentException(f"{call}: user: {ACCOUNT_RULE}")


def sandbox_path(path: object, what: str = "path", user: Account = "user") -> str:
    """A path in the sandbox: a relative one resolves against the home of ``user`` (``/home/user``, or
    ``/root`` for root), as E2B's envd resolves it."""
    if not isinstance(path, str):
        raise InvalidArgumentException(f"{what}: must be a string")
    if path.startswith("/"):
        return path
    home = ACCOUNT_HOMES[user]
    return home if path in ("", ".") else posixpath.join(home, path)


def connect_timeout(timeout: object) -> int | None:
    """``timeout`` of ``connect``, seconds (0 to 8 h), checked before any call (whether the sandbox's
    lifetime already covers it, else the extension, is ``_sandbox_plan.extend_lifetime_op``)."""
    if timeout is None:
        return None
    most = SANDBOX_MAX_TIMEOUT_MS // 1000
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 <= timeout <= most:
        raise InvalidArgumentException(f"connect: timeout: must be a whole number of seconds from 0 to {most} (8 h)")
    return timeout


_SANDBOX_ID: Final = re.compile(r"[a-f0-9]{12}")


def is_snapshot_id(template: object) -> bool:
    """Whether ``Sandbox.create``'s ``template`` is a snapshot id (``snap_`` and 16 hex digits): E2B's
    ``Sandbox.create(snapshot.snapshot_id)`` starts the sandbox from that snapshot (E2B's snapshots are
    templates)."""
    return isinstance(template, str) and SNAPSHOT_ID.fullmatch(template) is not None



def check_sandbox_id(sandbox_id: object) -> str:
    """A sandbox id, checked before any call: not a string is ``InvalidArgumentException``; a string that
    is no id this control plane makes (12 hex characters) names no sandbox, so
    ``SandboxNotFoundException``, E2B's answer for an unknown id (``Sandbox.kill`` turns it into
    ``False``, as E2B does)."""
    if not isinstance(sandbox_id, str) or sandbox_id == "":
        raise InvalidArgumentException("sandbox_id: must be a sandbox id (a non-empty string)")
    if not _SANDBOX_ID.fullmatch(sandbox_id):
        raise SandboxNotFoundException(
            f"Sandbox {sandbox_id} not found (ids of this control plane are 12 hex characters)",
            "sandbox_not_found",
        )
    return sandbox_id


class _Tokens:
    """Access tokens of the sandboxes this process created through the shim: E2B's ``connect`` takes an
    id and the API key only, while sandboxd takes the sandbox's own token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, str] = {}

    def remember(self, sandbox_id: str, token: str) -> None:
        with self._lock:
            self._by_id[sandbox_id] = token

    def forget(self, sandbox_id: str) -> None:
        with self._lock:
            self._by_id.pop(sandbox_id, None)

    def token_for(self, sandbox_id: str, explicit: object) -> str:
        """``explicit``, else the token this process holds, else ``SDK_ACCESS_TOKEN``.

        :raises AuthenticationException: without any, before any call
        """
        if explicit is not None:
            if not isinstance(explicit, str) or explicit == "":
                raise InvalidArgumentException("access_token: must be a non-empty string")
            return explicit
        with self._lock:
            held = self._by_id.get(sandbox_id)
        token = held or os.environ.get("SDK_ACCESS_TOKEN")
        if not token:
            raise AuthenticationException(
                f"Sandbox.connect({sandbox_id!r}) needs the sandbox's access token: connect from the process "
                "that created it, pass access_token=, or set SDK_ACCESS_TOKEN (sbx.native.access_token)",
                "unauthenticated",
            )
        return token


#: The tokens of this process's sandboxes.
TOKENS: Final = _Tokens()

