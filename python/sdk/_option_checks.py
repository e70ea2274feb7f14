"""What the options of many calls share, checked with the rules of ``sdk/sandbox-options.ts`` and
``sdk/sandbox-lifecycle.ts``: a number of seconds (Python's unit) as the whole milliseconds of the wire, an
http(s) URL, and a call's deadline (``request_timeout``). Each adds a failure to the ``Checker`` of the call
it belongs to, naming the field (snake_case) and its rule, never the value. Also what reaching one
sandbox by its id takes (``Sandbox.connect``, ``Sandbox.get_info``, ``Sandbox.get_metrics``)."""

from __future__ import annotations

import httpx

from ._check import Checker, is_number, matches
from ._http import DEFAULT_REQUEST_TIMEOUT
from ._rules import SANDBOX_ID


def as_number(value: object) -> float | None:
    """``value`` as a float when it is a finite number (never a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and is_number(value) else None


def check_seconds(check: Checker, name: str, value: object, least: float, most: float | None = None) -> int:
    """Seconds ``value`` as whole milliseconds (the wire's unit), within ``least`` .. ``most`` seconds."""
    seconds = as_number(value)
    if seconds is None:
        check.add((name,), "must be a number of seconds")
        return 0
    if seconds < least:
        check.add((name,), f"must be at least {least:g}")
    elif most is not None and seconds > most:
        check.add((name,), f"must be at most {most:g}")
    return int(round(seconds * 1000))


def check_url(check: Checker, name: str, value: object) -> str | None:
    """``value``: None (not given) or an http(s) URL with a host."""
    if value is None:
        return None
    try:
        url = httpx.URL(value) if isinstance(value, str) else None
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        check.add((name,), "must be an http(s) URL")
        return None
    return str(value)


def check_request_timeout(check: Checker, value: object) -> float:
    """``request_timeout``: the deadline of one call, a positive number of seconds (120 when None)."""
    if value is None:
        return DEFAULT_REQUEST_TIMEOUT
    seconds = as_number(value)
    if seconds is None or seconds <= 0:
        check.add(("request_timeout",), "must be a positive number of seconds")
        return DEFAULT_REQUEST_TIMEOUT
    return seconds


def check_sandbox_call(
    check: Checker, sandbox_id: object, access_token: object, control_plane_url: object, request_timeout: object
) -> tuple[str | None, float]:
    """The arguments of a call on one sandbox by its id, in this order: ``sandbox_id`` (12 hex
    characters), ``access_token`` (None: not given; else a string, not empty), ``control_plane_url`` and
    ``request_timeout``; returns the URL (None: the default) and the call's deadline."""
    if not matches(SANDBOX_ID, sandbox_id):
        check.add(("sandbox_id",), "must be a sandbox id (12 hex characters)")
    if access_token is not None and (not isinstance(access_token, str) or access_token == ""):
        check.add(("access_token",), "must not be empty" if access_token == "" else "must be a string")
    return check_url(check, "control_plane_url", control_plane_url), check_request_timeout(check, request_timeout)
