"""``SecretCache`` (SPEC "Secret store"): caches secret reads for a time-to-live, 5 minutes by default; a
hit makes no remote call. Values stay in private memory: nothing prints them. Mirrors
``sdk/secret-store/secret-cache.ts`` (Python's ``ttl`` is in seconds, TypeScript's ``ttlMs`` in ms)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ._check import Checker, is_number
from .secret_gateway import SecretSource
from .secret_ref import SecretRef
from .secret_store import SecretStore

#: The default time-to-live of a cached secret, seconds.
SECRET_CACHE_TTL = 300.0


@dataclass(frozen=True)
class _Entry:
    value: str = field(repr=False)
    expires_at: float


def _name_of(source: SecretSource) -> str:
    return source.name if isinstance(source, SecretRef) else source


def _key_of(source: SecretSource) -> str:
    return f"{source.region or ''}\0{source.name}" if isinstance(source, SecretRef) else f"\0{source}"


class SecretCache:
    """A cache of secret values, safe to share between threads (and the async SDK's worker threads).

    Example::

        cache = SecretCache(ttl=60, store=SecretStore(region="us-east-1"))

    :param ttl: seconds a value is kept (0 or more; default 300)
    :param store: where bare names are read (the local default store when None); a ``SecretRef``
        with another region reads from a store of that region
    :param now: clock in seconds (tests); ``time.monotonic`` by default
    """

    def __init__(
        self,
        *,
        ttl: float = SECRET_CACHE_TTL,
        store: SecretStore | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        check = Checker("SecretCache")
        if not is_number(ttl):
            check.add(("ttl",), "must be a number of seconds")
        elif ttl < 0:
            check.add(("ttl",), "must be at least 0")
        if store is not None and not isinstance(store, SecretStore):
            check.add(("store",), "must be a SecretStore")
        if now is not None and not callable(now):
            check.add(("now",), "must be a function")
        check.done()
        self.ttl = float(ttl)
        self._store = store if store is not None else SecretStore()
        self._now = now if now is not None else time.monotonic
        self._entries: dict[str, _Entry] = {}
        self._region_stores: dict[str, SecretStore] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SecretCache(ttl={self.ttl!r}, store={self._store!r})"

    def get(self, source: SecretSource) -> str:
        """The value of a secret: from the cache while fresh, else read and cached.

        :raises SecretNotFoundException: when the store has no such secret
        """
        key = _key_of(source)
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit.expires_at > self._now():
            return hit.value
        value = self._store_for(source).get_value(_name_of(source))
        with self._lock:
            self._entries[key] = _Entry(value, self._now() + self.ttl)
        return value

    def get_all(self, sources: Sequence[SecretSource]) -> list[str]:
        """The values of ``sources``, in order (read one after the other)."""
        return [self.get(source) for source in sources]

    def invalidate(self, sources: Iterable[SecretSource]) -> None:
        """Drops these secrets, so the next :meth:`get` reads them again."""
        with self._lock:
            for source in sources:
                self._entries.pop(_key_of(source), None)

    def _store_for(self, source: SecretSource) -> SecretStore:
        if not isinstance(source, SecretRef) or source.region is None or source.region == self._store.region:
            return self._store
        with self._lock:
            store = self._region_stores.get(source.region)
            if store is None:
                store = SecretStore(region=source.region)
                self._region_stores[source.region] = store
            return store
