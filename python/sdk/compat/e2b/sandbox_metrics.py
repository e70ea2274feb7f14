"""E2B's ``get_metrics`` over the native ``sbx.get_metrics()`` (as the TypeScript shim's
``sdk/compat/e2b/sandbox-metrics.ts``): E2B's ``SandboxMetrics`` (its Python SDK's
``e2b/sandbox/sandbox_api.py``: an aware ``timestamp``, bytes as ints), and ``start`` / ``end`` as E2B takes
them, datetimes (a naive one is local time, as E2B's ``datetime.timestamp()`` reads it). The native samples
carry network bytes too; E2B's shape has none, so they are left out (``sbx.native.get_metrics()`` has
them). E2B's newer ``mem_cache`` (the page cache) is not measured here, so it is not there either."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Final

from ..._lifecycle_options import MetricsRange
from ..._wire import SandboxMetric as NativeSandboxMetric
from .exceptions import InvalidArgumentException

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS: Final = timedelta(milliseconds=1)


@dataclass(frozen=True)
class SandboxMetrics:
    """One sample of the sandbox's use, with E2B's names (E2B's ``SandboxMetrics``), taken by the control
    plane every few seconds while the sandbox runs (none while it is paused)."""

    #: The sandbox's CPU limit: an ``int`` for a whole number of CPUs, as E2B's; a ``float`` for a
    #: fraction (a native sandbox created with ``cpus=0.5``).
    cpu_count: float
    #: CPU time since the sample before, in percent of ``cpu_count`` CPUs over that time.
    cpu_used_pct: float
    #: The sandbox's writable file systems (its layer over the template and ``/home``), bytes.
    disk_total: int
    disk_used: int
    #: Its memory limit and what it uses (``/tmp`` is a tmpfs of its own and counts here), bytes.
    mem_total: int
    mem_used: int
    #: When it was taken (aware, UTC).
    timestamp: datetime


def _instant(feature: str, name: str, value: object) -> int | None:
    """A datetime as whole ms since the epoch (the microseconds below them dropped); None when not given."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidArgumentException(f"{feature}: {name}: must be a datetime")
    ms = (value.astimezone(timezone.utc) - _EPOCH) // _ONE_MS  # a naive datetime is local time, as E2B's
    if ms < 0:
        raise InvalidArgumentException(f"{feature}: {name}: must not be before the epoch")
    return ms


def metrics_range(feature: str, start: object, end: object) -> MetricsRange:
    """E2B's ``start`` / ``end`` (datetimes, each optional) as the native range, checked before any call.

    :raises InvalidArgumentException: for one that is no datetime, or a ``start`` after ``end``
    """
    first, last = _instant(feature, "start", start), _instant(feature, "end", end)
    if first is not None and last is not None and first > last:
        raise InvalidArgumentException(f"{feature}: start must not be after end")
    return MetricsRange(first, last)


def _count(value: float) -> float:
    """A CPU count as E2B's ``int`` when whole."""
    return int(value) if value.is_integer() else value


def to_e2b_metrics(sample: NativeSandboxMetric) -> SandboxMetrics:
    """A native sample in E2B's shape (network bytes left out)."""
    return SandboxMetrics(
        cpu_count=_count(sample.cpu_count),
        cpu_used_pct=sample.cpu_used_pct,
        disk_total=int(sample.disk_total_bytes),
        disk_used=int(sample.disk_used_bytes),
        mem_total=int(sample.mem_total_bytes),
        mem_used=int(sample.mem_used_bytes),
        timestamp=_EPOCH + timedelta(milliseconds=sample.timestamp),
    )
