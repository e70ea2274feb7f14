"""The options of the calls on a sandbox that exists, checked before any call with the rules of
``sdk/sandbox-lifecycle.ts``, ``sdk/sandbox.ts`` and ``sdk/sandbox-metrics.ts``: ``Sandbox.get_info``,
``Sandbox.get_metrics`` (and a handle's ``get_metrics`` range), ``Sandbox.list`` and ``sbx.set_timeout``.

A failure is an ``InvalidArgumentException`` whose message names the call, each failed field (snake_case)
and its rule, and whose ``field`` is the first failed one; never a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Final, Mapping, cast

from ._check import Checker, is_whole, whole
from ._option_checks import check_request_timeout, check_sandbox_call, check_seconds, check_url
from ._rules import SANDBOX_MAX_TIMEOUT_MS
from ._sandbox_metadata import check_metadata
from ._wire import SandboxState


def set_timeout_ms(timeout: object) -> int:
    """``sbx.set_timeout(timeout)``: seconds from now (at least 0.001, at most 8 h: the control plane
    also refuses past 8 h from the sandbox's creation) as the whole milliseconds of the wire, checked
    before any call."""
    check = Checker("sbx.set_timeout")
    timeout_ms = check_seconds(check, "timeout", timeout, 0.001, SANDBOX_MAX_TIMEOUT_MS / 1000)
    check.done()
    return timeout_ms


@dataclass(frozen=True)
class InfoOptions:
    """``Sandbox.get_info``'s options, checked: the token is ``access_token``, else the operator key."""

    sandbox_id: str
    access_token: str | None = field(repr=False)
    control_plane_url: str | None
    request_timeout: float


def resolve_info_options(
    sandbox_id: object, *, access_token: object, control_plane_url: object, request_timeout: object
) -> InfoOptions:
    """Checks ``Sandbox.get_info``'s arguments (as ``Sandbox.connect``'s, the token optional: without it
    the operator key, ``SDK_API_KEY``).

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.get_info")
    url, seconds = check_sandbox_call(check, sandbox_id, access_token, control_plane_url, request_timeout)
    check.done()
    token = access_token if isinstance(access_token, str) else None
    return InfoOptions(str(sandbox_id), token, url, seconds)


#: The latest instant a metrics range takes, ms since the epoch (JavaScript's largest safe integer).
MAX_INSTANT_MS: Final = 2**53 - 1
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS: Final = timedelta(milliseconds=1)
_INSTANT_RULE: Final = "must be an aware datetime or whole milliseconds since the epoch"


@dataclass(frozen=True)
class MetricsRange:
    """The samples ``get_metrics`` asks for: taken at or after ``start`` and at or before ``end``, whole
    milliseconds since the epoch, each None when not given (the sandbox's start; now)."""

    start: int | None = None
    end: int | None = None


def _instant(check: Checker, name: str, value: object) -> int | None:
    """``start`` / ``end`` of a metrics range as whole ms since the epoch: an aware ``datetime`` (its
    milliseconds, the microseconds below them dropped) or a whole number of ms, 0 or more. A naive
    datetime is refused: it names no instant, and nothing else in this SDK reads one as local time."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            check.add((name,), f"{_INSTANT_RULE} (a naive datetime has no time zone)")
            return None
        ms = (value - _EPOCH) // _ONE_MS
    elif is_whole(value):
        ms = whole(value)
    else:
        check.add((name,), _INSTANT_RULE)
        return None
    if ms < 0:
        check.add((name,), "must not be before the epoch")
        return None
    if ms > MAX_INSTANT_MS:
        check.add((name,), f"must be at most {MAX_INSTANT_MS} ms since the epoch")
        return None
    return ms


def _range(check: Checker, start: object, end: object) -> MetricsRange:
    """``start`` and ``end`` checked (``metricsRangeSchema``): each an instant, ``start`` not after ``end``."""
    first, last = _instant(check, "start", start), _instant(check, "end", end)
    if first is not None and last is not None and first > last:
        check.add(("start",), "must not be after end")
    return MetricsRange(first, last)


def metrics_range(start: object, end: object) -> MetricsRange:
    """``sbx.get_metrics(start, end)``'s range, checked before any call.

    :raises InvalidArgumentException: (``field`` ``start`` or ``end``) for a malformed instant or a
        ``start`` after ``end``
    """
    check = Checker("sbx.get_metrics")
    checked = _range(check, start, end)
    check.done()
    return checked


@dataclass(frozen=True)
class MetricsOptions(InfoOptions):
    """``Sandbox.get_metrics``'s options, checked: ``Sandbox.get_info``'s, and the range."""

    range: MetricsRange


def resolve_metrics_options(
    sandbox_id: object,
    *,
    access_token: object,
    control_plane_url: object,
    request_timeout: object,
    start: object,
    end: object,
) -> MetricsOptions:
    """Checks ``Sandbox.get_metrics``'s arguments: ``Sandbox.get_info``'s, and the range.

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.get_metrics")
    url, seconds = check_sandbox_call(check, sandbox_id, access_token, control_plane_url, request_timeout)
    checked = _range(check, start, end)
    check.done()
    token = access_token if isinstance(access_token, str) else None
    return MetricsOptions(str(sandbox_id), token, url, seconds, checked)


#: Every sandbox state, as ``Sandbox.list(state=...)`` takes them.
SANDBOX_STATES: Final[tuple[SandboxState, ...]] = ("running", "suspended", "ended")


@dataclass(frozen=True)
class ListOptions:
    """``Sandbox.list``'s options, checked: the states wanted (empty: any) and the metadata entries every
    sandbox listed must hold (None: any)."""

    states: tuple[SandboxState, ...]
    metadata: Mapping[str, str] | None
    control_plane_url: str | None
    request_timeout: float


def resolve_list_options(
    *, metadata: object, state: object, control_plane_url: object, request_timeout: object
) -> ListOptions:
    """Checks ``Sandbox.list``'s arguments: ``metadata`` with the rules of a sandbox's metadata, ``state``
    a list of ``running``, ``suspended`` and ``ended``.

    :raises InvalidArgumentException: for a malformed one, before any call
    """
    check = Checker("Sandbox.list")
    url = check_url(check, "control_plane_url", control_plane_url)
    wanted = check_metadata(check, ("metadata",), metadata)
    states: list[SandboxState] = []
    if state is not None and not isinstance(state, (list, tuple)):
        check.add(("state",), "must be a list of states (running, suspended, ended)")
    for i, one in enumerate(state if isinstance(state, (list, tuple)) else ()):
        if not isinstance(one, str) or one not in SANDBOX_STATES:
            check.add(("state", i), f"must be {', '.join(SANDBOX_STATES[:-1])} or {SANDBOX_STATES[-1]}")
        else:
            states.append(cast(SandboxState, one))
    seconds = check_request_timeout(check, request_timeout)
    check.done()
    return ListOptions(tuple(states), wanted, url, seconds)
