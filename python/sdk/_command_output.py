"""What sync and async commands share: a command's result, and the collector that turns its process
events into that result while handing each output chunk to the caller's callbacks."""

from __future__ import annotations

import asyncio
import codecs
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from ._command_options import OutputCallback
from ._http import AsyncTransport, Call, StreamBroke, Transport
from ._sandbox_core import SandboxCore
from ._wire import DataEvent, EndEvent, KeepaliveEvent, ProcessEvent, StartEvent
from .errors import SandboxException


@dataclass(frozen=True)
class CommandResult:
    """What a finished command produced."""

    stdout: str
    stderr: str
    #: Exit status, or ``None`` when a signal ended it.
    exit_code: int | None
    #: The signal that ended it (``SIGKILL``), or ``None``.
    signal: str | None


class EventTracker:
    """Where a followed command's event stream is: the pid of its start, the number of the last event
    taken (where a stream cut off is opened again) and its end. :class:`OutputCollector` (commands) and
    the terminals' follower (``sdk.pty``) build on it."""

    def __init__(self) -> None:
        self._end: EndEvent | None = None
        #: The pid of the start event, once seen.
        self.pid: int | None = None
        #: The number (``seq``) of the last event taken: where a stream cut off is opened again.
        self.seq = 0

    @property
    def ended(self) -> bool:
        """True once the end event was taken."""
        return self._end is not None

    @property
    def end(self) -> EndEvent | None:
        """The end event, once taken."""
        return self._end

    def track(self, event: ProcessEvent) -> None:
        """Takes the number of ``event``, the pid of a start and the end."""
        if not isinstance(event, KeepaliveEvent) and event.seq is not None:
            self.seq = event.seq
        if isinstance(event, StartEvent):
            self.pid = event.pid
        elif isinstance(event, EndEvent):
            self._end = event


class OutputCollector(EventTracker):
    """Collects one command's output from its events; ``feed`` calls the callbacks with each chunk as
    text (UTF-8, a character split between chunks is passed whole) and returns what the callback
    returned, so the async SDK can await a coroutine callback."""

    def __init__(self, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None) -> None:
        super().__init__()
        self._callbacks = {"stdout": on_stdout, "stderr": on_stderr}
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")("replace") for name in self._callbacks}
        self._out: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def feed(self, event: ProcessEvent) -> object:
        """Takes one event; returns the callback's return value for an output chunk, else ``None``."""
        self.track(event)
        if isinstance(event, DataEvent):
            self._out[event.stream].append(event.data)
            callback = self._callbacks[event.stream]
            text = self._decoders[event.stream].decode(event.data)
            if callback is not None and text:
                return callback(text)
        return None

    def result(self) -> CommandResult:
        """The command's result once its stream has ended."""
        if self._end is None:
            raise SandboxException("the event stream of the sandbox daemon ended before the command did")
        return CommandResult(
            stdout=b"".join(self._out["stdout"]).decode("utf-8", "replace"),
            stderr=b"".join(self._out["stderr"]).decode("utf-8", "replace"),
            exit_code=self._end.exit_code,
            signal=self._end.signal,
        )


#: Connections opened again in a row after breaks, before the break is raised.
REATTACH_ATTEMPTS = 5


def _reattach(
    core: SandboxCore, collector: EventTracker, broke: StreamBroke, attempt: int
) -> Call[ProcessEvent]:
    """The call that goes on after a break, or the break raised again: only once the pid and a numbered
    event are known (a start sent again would start the command twice; a sandboxd too old to number its
    events would replay them all), before the end, ``REATTACH_ATTEMPTS`` times in a row."""
    if collector.pid is None or collector.seq == 0 or collector.ended or attempt > REATTACH_ATTEMPTS:
        raise broke
    return core.events_call(collector.pid, collector.seq)


def follow(
    transport: Transport,
    core: SandboxCore,
    call: Call[ProcessEvent],
    feed: Callable[[ProcessEvent], object],
    collector: EventTracker,
) -> None:
    """Passes the events of ``call`` to ``feed`` (which feeds ``collector``) to the end of the stream; a
    stream sandboxd cut off (its reader left it full for 15 s) is opened again after the last event
    taken, so nothing still kept is missed or repeated (``collector`` is fed by ``feed``)."""
    attempt = 0
    while True:
        try:
            with transport.lines(call) as events:
                for event in events:
                    feed(event)
                    attempt = 0
            return
        except StreamBroke as broke:
            attempt += 1
            call = _reattach(core, collector, broke, attempt)
            time.sleep(0.05 * 2 ** (attempt - 1))


async def afollow(
    transport: AsyncTransport,
    core: SandboxCore,
    call: Call[ProcessEvent],
    feed: Callable[[ProcessEvent], Awaitable[None]],
    collector: EventTracker,
) -> None:
    """:func:`follow` for the async SDK (``feed`` awaits async callbacks)."""
    attempt = 0
    while True:
        try:
            async with transport.lines(call) as events:
                async for event in events:
                    await feed(event)
                    attempt = 0
            return
        except StreamBroke as broke:
            attempt += 1
            call = _reattach(core, collector, broke, attempt)
            await asyncio.sleep(0.05 * 2 ** (attempt - 1))
