"""State feeds that survive a broken connection (``sdk/resumable-feed.ts``, ``Sandbox.state$`` and
``Sandbox.events`` of ``sdk/sandbox.ts``): each event carries a sequence number, and when a connection
breaks the feed opens a new one after the last number it handed out, so a reconnect neither misses nor
repeats an event. A refusal (an error answer: no reconnect helps) ends the feed with its SDK exception;
a connection that breaks more than ``retries`` times in a row ends it with a ``SandboxException``.

:class:`Feed` is what the sync and the async iterator share; they differ only in their I/O.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Generic, Iterator, Literal, TypeVar

import httpx
import pydantic
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ._http import NdjsonDecoder
from .errors import SandboxException, error_from_envelope

#: Reconnects in a row after breaks before the feed fails, and the first wait (doubled each time).
RETRIES = 5
FIRST_DELAY = 0.1

#: What a feed hands out (each value carries its sequence number).
V = TypeVar("V")


class SandboxEvent(BaseModel):
    """One state change of a sandbox: its position ``seq`` in the control plane's log, the sandbox and
    its new state (``end_reason`` on ``ended``)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    seq: int = Field(gt=0)
    sandbox_id: str
    state: Literal["running", "suspended", "ended"]
    end_reason: Literal["killed", "timeout", "failed"] | None = None


def parse_sandbox_event(value: object) -> SandboxEvent | None:
    """A line of a state feed as a ``SandboxEvent``; None for a line that is not one (skipped)."""
    try:
        return SandboxEvent.model_validate(value, strict=True)
    except pydantic.ValidationError:
        return None


def _seq_of(value: object) -> int:
    seq = getattr(value, "seq")
    assert isinstance(seq, int)
    return seq


@dataclass
class Feed(Generic[V]):
    """One resumable feed's state: where it is (``after``) and how many breaks in a row it has seen.
    ``parse`` turns a line into a value (None: skipped); ``seq_of`` is the value's sequence number (the
    cursor a new connection goes on after)."""

    url: str
    token: str | None = field(repr=False)
    after: int | None = None
    retries: int = RETRIES
    breaks: int = 0
    parse: Callable[[object], V | None] = field(default=parse_sandbox_event, repr=False)  # type: ignore[assignment]
    seq_of: Callable[[V], int] = field(default=_seq_of, repr=False)

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The next connection's request: after the last sequence number handed out."""
        query = "" if self.after is None else f"?after={self.after}"
        headers = {} if self.token is None else {"authorization": f"Bearer {self.token}"}
        return client.build_request("GET", f"{self.url}{query}", headers=headers)

    def refusal(self, body: bytes) -> Exception:
        """The SDK exception of an error answer."""
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        return error_from_envelope(payload)

    def accept(self, values: list[object]) -> list[V]:
        """The new values among parsed lines (other lines, and values at or below ``after``, skipped)."""
        events: list[V] = []
        for value in values:
            event = self.parse(value)
            if event is None:
                continue
            seq = self.seq_of(event)
            if self.after is None or seq > self.after:
                self.after = seq
                self.breaks = 0
                events.append(event)
        return events

    def broke(self) -> float:
        """A connection broke: how long to wait before the next, or ``SandboxException`` after too many."""
        self.breaks += 1
        if self.breaks > self.retries:
            raise SandboxException(f"the event stream at {self.url} broke")
        return float(FIRST_DELAY * 2.0 ** (self.breaks - 1))


def iterate(feed: Feed[V]) -> Iterator[V]:
    """The feed's events as a blocking iterator; it ends when a connection completes."""
    with httpx.Client(timeout=httpx.Timeout(30.0, read=None), trust_env=False) as client:
        while True:
            try:
                answer = client.send(feed.request(client), stream=True)
                try:
                    if answer.status_code >= 400:
                        raise feed.refusal(answer.read())
                    decoder = NdjsonDecoder(feed.url)
                    for chunk in answer.iter_bytes():
                        yield from feed.accept(decoder.feed(chunk))
                finally:
                    answer.close()
                return
            except httpx.HTTPError:
                pass  # a broken connection: opened again below
            time.sleep(feed.broke())


async def aiterate(feed: Feed[V]) -> AsyncIterator[V]:
    """The feed's events as an async iterator; it ends when a connection completes."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None), trust_env=False) as client:
        while True:
            try:
                answer = await client.send(feed.request(client), stream=True)
                try:
                    if answer.status_code >= 400:
                        raise feed.refusal(await answer.aread())
                    decoder = NdjsonDecoder(feed.url)
                    async for chunk in answer.aiter_bytes():
                        for event in feed.accept(decoder.feed(chunk)):
                            yield event
                finally:
                    await answer.aclose()
                return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(feed.broke())


def sandbox_feed(plane_url: str, sandbox_id: str, token: str, first_seq: int) -> Feed[SandboxEvent]:
    """One sandbox's state now and at every change (``GET /v1/sandboxes/:id/events``, its token),
    starting with the state it had when this handle was made; it ends after ``ended``."""
    return Feed(f"{plane_url}/v1/sandboxes/{sandbox_id}/events", token, max(0, first_seq - 1))


def all_sandboxes_feed(plane_url: str, operator_key: str | None) -> Feed[SandboxEvent]:
    """Every sandbox's state changes (``GET /v1/events``, the operator key): the current state of every
    sandbox first, then every change."""
    return Feed(f"{plane_url}/v1/events", operator_key)
