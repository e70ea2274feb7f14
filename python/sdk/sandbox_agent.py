"""``sbx.agent`` (SPEC "SDK operations", "Agent execution on one sandbox"; ``sdk/sandbox-agent.ts``): runs a
coding agent in the sandbox and streams its events. Touching it makes no call; every argument is checked
before any call; once the handle knows its sandbox ended, every call is refused before any traffic.
:class:`SandboxAgent` serves ``Sandbox``, :class:`AsyncSandboxAgent` serves ``AsyncSandbox``: both plan
with ``sdk._agent_plan`` and open with the operations of ``sdk._agent_ops``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, AsyncIterator, Iterator

from ._agent_attach import agent_feed, attached_op, check_attach, running_op, target_op
from ._feeds import aiterate, iterate

from ._agent_ops import ConfigWrites, Opened, executions_op, open_op, prepare_op
from ._agent_plan import plan_execution, plan_prepare
from ._agent_stream_core import StreamCore
from ._http import AsyncTransport, Op, Transport, adrive, drive
from ._sandbox_core import SandboxCore
from .agent_events import AgentFeedEvent, AgentResult, ExecutionList
from .agent_limits import AgentLimits
from .agent_spec import AgentSpec
from .agent_stream import AgentStream
from .async_agent_stream import AsyncAgentStream
from .gateways import GatewayCore
from .runtimes import RuntimeChoice

_HOME = "/home/user"


class _AgentBase:
    """What both handles' agents share: the plan of a call, and the configurations written."""

    def __init__(self, gateways: GatewayCore) -> None:
        self._gateways = gateways
        self._core: SandboxCore = gateways.core
        self._configs = ConfigWrites()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sandbox_id={self._core.sandbox_id!r})"

    @property
    def sandbox_id(self) -> str:
        """The sandbox id."""
        return self._core.sandbox_id

    def _plan(self, operation: str, prompt: str, options: dict[str, Any]) -> tuple[Op[Opened], StreamCore]:
        plan = plan_execution(operation, prompt, self._gateways, **options)
        state = StreamCore(plan.max_output_bytes)
        return open_op(self._core, self._configs, plan, state), state

    def _prepare_op(self, runtime: RuntimeChoice, spec: AgentSpec | None) -> Op[object] | None:
        """``prepare``'s calls, every argument checked first; None when there is nothing to warm up."""
        name, config = plan_prepare(runtime, spec, self._gateways)
        return prepare_op(self._core, self._configs, name, config) if name == "runtime_a" else None


class SandboxAgent(_AgentBase):
    """The agent of a :class:`~sdk.sandbox.Sandbox`.

    Example::

        spec = AgentSpec(AgentModel("vendor_b", "model-1", "llm"))
        result = sbx.agent.run("make the tests pass", spec=spec)
        with sbx.agent.stream("explain the change", spec=spec, session_id=result.session_id) as stream:
            for event in stream:
                if event.type == "text":
                    print(event.text)
    """

    def __init__(self, gateways: GatewayCore, transport: Transport) -> None:
        """Not for callers: ``sbx.agent``."""
        super().__init__(gateways)
        self._transport = transport

    def stream(
        self,
        prompt: str,
        *,
        spec: AgentSpec,
        runtime: RuntimeChoice = "runtime_a",
        session_id: str | None = None,
        model: str | None = None,
        limits: AgentLimits | None = None,
        workdir: str = _HOME,
        reasoning: bool = False,
    ) -> AgentStream:
        """Starts the agent on ``prompt``; its events as they arrive. Never raises for an agent failure:
        that is the stream's last event, ``AgentFailed`` (``busy`` when another execution runs).

        :param spec: what the agent runs with
        :param runtime: ``runtime_a`` (default), ``runtime_b`` or ``RuntimeB(entrypoint=...)``
        :param session_id: a session of an earlier result (same runtime) to continue
        :param model: another model id of the same provider and gateway
        :param limits: deadline, step limit, token budget, kept output (``AgentLimits()``)
        :param workdir: the agent's working directory (default ``/home/user``)
        :param reasoning: also emit ``Reasoning`` events
        :raises InvalidArgumentException: for a malformed option or a spec the handle's gateways cannot
            serve, before any call
        :raises SandboxException: on a sandbox or transport failure
        """
        options = dict(spec=spec, runtime=runtime, session_id=session_id, model=model, limits=limits,
                       workdir=workdir, reasoning=reasoning)  # fmt: skip
        opening, state = self._plan("agent.stream", prompt, options)
        return AgentStream(self._core, self._transport, opening, state)

    def run(
        self,
        prompt: str,
        *,
        spec: AgentSpec,
        runtime: RuntimeChoice = "runtime_a",
        session_id: str | None = None,
        model: str | None = None,
        limits: AgentLimits | None = None,
        workdir: str = _HOME,
        reasoning: bool = False,
    ) -> AgentResult:
        """Runs the agent on ``prompt`` until it ends (the options of :meth:`stream`). A
        ``KeyboardInterrupt`` while it waits aborts the execution.

        :raises InvalidArgumentException: for a malformed option or a spec the handle's gateways cannot
            serve, before any call
        :raises AgentException: with the ``reason`` when the execution fails (busy, timeout, aborted…)
        :raises SandboxException: on a sandbox or transport failure
        """
        options = dict(spec=spec, runtime=runtime, session_id=session_id, model=model, limits=limits,
                       workdir=workdir, reasoning=reasoning)  # fmt: skip
        opening, state = self._plan("agent.run", prompt, options)
        with AgentStream(self._core, self._transport, opening, state) as stream:
            try:
                return stream.result()
            except KeyboardInterrupt:
                stream.abort()
                raise

    def prepare(self, *, runtime: RuntimeChoice = "runtime_a", spec: AgentSpec | None = None) -> None:
        """Starts warming the runtime up in the background and returns at once (a failure is ignored):
        sandboxd starts a runtime with ``spec``'s configuration (written first), or without a spec with
        the configuration written last, and the next fitting run adopts it. A memory snapshot taken then
        holds the warmed runtime, and a sandbox started from it adopts it too. runtime_b has nothing to
        warm up.

        :raises InvalidArgumentException: for a malformed option or a spec the gateways cannot serve
        """
        op = self._prepare_op(runtime, spec)
        if op is None:
            return

        def warm() -> None:
            try:
                drive(op, self._transport)
            except Exception:
                pass  # warming up is best effort

        threading.Thread(target=warm, name="sdk-agent-prepare", daemon=True).start()

    def executions(self) -> ExecutionList:
        """The executions sandboxd knows, and the running one's id (``current``, or None)."""
        return drive(executions_op(self._core), self._transport)

    def attach(
        self, execution_id: str | None = None, *, after: int = 0, max_output_bytes: int | None = None
    ) -> AgentStream:
        """Attaches to an execution (the running one by default) from this or another handle holding the
        sandbox's token (``Sandbox.connect(sandbox_id, access_token=...)``, also in another process): its
        events from the start, or after ``after`` (a ``cursor`` of an earlier stream or of
        :meth:`events`). Its ``abort()`` stops the execution; its ``result()`` is the execution's.

        Example::

            other = Sandbox.connect(sandbox_id, access_token=token)
            with other.agent.attach() as stream:
                for event in stream:
                    print(event.type, stream.cursor)

        :param max_output_bytes: what the SDK keeps of the events (default: the execution's own)
        :raises InvalidArgumentException: for a malformed argument (before any call), when no execution
            runs and none is named, or when sandboxd has no execution of that id
        """
        o = check_attach(execution_id, after, max_output_bytes)
        target, kept = drive(target_op(self._core, o), self._transport)
        state = StreamCore(kept, target, o.after)
        return AgentStream(self._core, self._transport, attached_op(self._core, target, o.after, state), state)

    def events(self) -> Iterator[AgentFeedEvent]:
        """The running execution's events as they happen, from its start (TypeScript's
        ``sbx.agent.events$``), each with the execution's id and its ``cursor``; a broken connection goes
        on after the last cursor, so nothing is missed or repeated. Ends after the last event (``Done`` or
        ``AgentFailed``). Any handle holding the sandbox's token can read it; its reads reach sandboxd
        through the control plane as every daemon call does (a suspended sandbox with auto-resume is
        resumed there).

        :raises InvalidArgumentException: (at the first ``next``, field ``execution_id``) when no
            execution runs
        """
        execution_id = drive(running_op(self._core), self._transport)
        yield from iterate(agent_feed(self._core, execution_id))


class AsyncSandboxAgent(_AgentBase):
    """The agent of an :class:`~sdk.async_sandbox.AsyncSandbox`: :meth:`run` is awaited, :meth:`stream`
    returns an :class:`~sdk.async_agent_stream.AsyncAgentStream`. Cancelling the task that awaits either
    aborts the execution (reason ``aborted``)."""

    def __init__(self, gateways: GatewayCore, transport: AsyncTransport) -> None:
        """Not for callers: ``sbx.agent``."""
        super().__init__(gateways)
        self._transport = transport
        self._warming: set[asyncio.Task[None]] = set()

    def stream(
        self,
        prompt: str,
        *,
        spec: AgentSpec,
        runtime: RuntimeChoice = "runtime_a",
        session_id: str | None = None,
        model: str | None = None,
        limits: AgentLimits | None = None,
        workdir: str = _HOME,
        reasoning: bool = False,
    ) -> AsyncAgentStream:
        """Starts the agent on ``prompt`` (in a task of the running loop); its events as they arrive.
        The options of :meth:`sdk.sandbox_agent.SandboxAgent.stream`; never raises for an agent failure.

        :raises InvalidArgumentException: for a malformed option or a spec the handle's gateways cannot
            serve, before any call
        """
        options = dict(spec=spec, runtime=runtime, session_id=session_id, model=model, limits=limits,
                       workdir=workdir, reasoning=reasoning)  # fmt: skip
        opening, state = self._plan("agent.stream", prompt, options)
        return AsyncAgentStream(self._core, self._transport, opening, state)

    async def run(
        self,
        prompt: str,
        *,
        spec: AgentSpec,
        runtime: RuntimeChoice = "runtime_a",
        session_id: str | None = None,
        model: str | None = None,
        limits: AgentLimits | None = None,
        workdir: str = _HOME,
        reasoning: bool = False,
    ) -> AgentResult:
        """Runs the agent on ``prompt`` until it ends; cancelling the awaiting task aborts the execution.

        :raises InvalidArgumentException: for a malformed option, before any call
        :raises AgentException: with the ``reason`` when the execution fails
        :raises SandboxException: on a sandbox or transport failure
        """
        options = dict(spec=spec, runtime=runtime, session_id=session_id, model=model, limits=limits,
                       workdir=workdir, reasoning=reasoning)  # fmt: skip
        opening, state = self._plan("agent.run", prompt, options)
        async with AsyncAgentStream(self._core, self._transport, opening, state) as stream:
            return await stream.result()

    def prepare(self, *, runtime: RuntimeChoice = "runtime_a", spec: AgentSpec | None = None) -> None:
        """Starts warming the runtime up in a background task and returns at once (failures ignored);
        as :meth:`SandboxAgent.prepare`.

        :raises InvalidArgumentException: for a malformed option or a spec the gateways cannot serve
        """
        op = self._prepare_op(runtime, spec)
        if op is None:
            return

        async def warm() -> None:
            try:
                await adrive(op, self._transport)
            except Exception:
                pass  # warming up is best effort

        task = asyncio.get_running_loop().create_task(warm(), name="sdk-agent-prepare")
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)

    async def executions(self) -> ExecutionList:
        """The executions sandboxd knows, and the running one's id (``current``, or None)."""
        return await adrive(executions_op(self._core), self._transport)

    async def attach(
        self, execution_id: str | None = None, *, after: int = 0, max_output_bytes: int | None = None
    ) -> AsyncAgentStream:
        """As :meth:`SandboxAgent.attach`, awaited: an :class:`~sdk.async_agent_stream.AsyncAgentStream`
        of the execution's events after ``after``.

        :raises InvalidArgumentException: for a malformed argument (before any call), when no execution
            runs and none is named, or when sandboxd has no execution of that id
        """
        o = check_attach(execution_id, after, max_output_bytes)
        target, kept = await adrive(target_op(self._core, o), self._transport)
        state = StreamCore(kept, target, o.after)
        return AsyncAgentStream(self._core, self._transport, attached_op(self._core, target, o.after, state), state)

    async def events(self) -> AsyncIterator[AgentFeedEvent]:
        """As :meth:`SandboxAgent.events`, an async iterator (``async for``).

        :raises InvalidArgumentException: (at the first ``anext``) when no execution runs
        """
        execution_id = await adrive(running_op(self._core), self._transport)
        async for event in aiterate(agent_feed(self._core, execution_id)):
            yield event
