"""``sbx.agent`` end to end: a real ``sdk-agent`` sandbox with closed egress on the session's control plane,
runtime_a (opencode) reaching the scripted chat-completions model through a ``compatible_gateway`` route
(the key injected by the gateway). One scripted run gives TypeScript's ``TOOL_THEN_TEXT_EVENTS``; run()
results; abort from another thread; busy; the async stream and task cancellation ending with
``aborted``; checks before any call; the key never in events, results, exceptions or reprs."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Iterator

import httpx
import pytest

from _agent_world import MODEL_KEY, ScriptedModel, agent_sandbox, running_model, text, tool_call, typescript_tool_then_text_events
from _world import Pki, Upstream
from conftest import ControlPlane
from sdk import (
    AgentException,
    AgentFailed,
    AgentModel,
    AgentSpec,
    AsyncSandbox,
    Done,
    InvalidArgumentException,
    McpLocal,
    Sandbox,
    StepFinished,
    SubAgent,
    TokenUsage,
    ToolCall,
)
from sdk._agent_ops import abort_op
from sdk._http import drive


@pytest.fixture(scope="module")
def model(test_pki: Pki, https_upstream: Upstream) -> Iterator[ScriptedModel]:
    with running_model(test_pki, https_upstream) as server:
        yield server


@pytest.fixture(scope="module")
def sbx(control_plane: ControlPlane, model: ScriptedModel) -> Iterator[Sandbox]:
    with agent_sandbox(model) as made:
        yield made


@pytest.fixture(autouse=True)
def no_execution_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Aborts an execution a failed test left running (agent tests only)."""
    yield
    if "sbx" not in request.fixturenames:
        return
    sbx: Sandbox = request.getfixturevalue("sbx")
    current = sbx.agent.executions().current
    if current is not None:
        drive(abort_op(sbx._core, current), sbx._transport)


def spec(**options: Any) -> AgentSpec:
    return AgentSpec(AgentModel("compatible", "model-1", "llm", base_path="/v1"), **options)


def sleeping(sbx: Sandbox, needle: str) -> int:
    pattern = f"[{needle[0]}]{needle[1:]}"
    return int(sbx.commands.run(f"ps -eo args | grep -c '{pattern}' || true").stdout.strip())


def wait_for(probe: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def no_key(*values: object) -> None:
    for value in values:
        assert MODEL_KEY not in repr(value) and MODEL_KEY not in str(value)


def test_one_scripted_run_gives_the_typescript_event_sequence(sbx: Sandbox, model: ScriptedModel) -> None:
    model.script(tool_call("bash", {"command": "echo edited > notes.txt", "description": "edit"}), text("edited it"))
    with sbx.agent.stream("edit notes.txt", spec=spec()) as stream:
        events = list(stream)
        result = stream.result()
    assert [e.type for e in events] == typescript_tool_then_text_events()
    assert isinstance(events[-1], Done)
    call = next(e for e in events if isinstance(e, ToolCall))
    assert (call.name, call.status) == ("bash", "completed")
    assert isinstance(events[2], StepFinished) and isinstance(events[2].usage, TokenUsage)
    assert (result.text, result.steps, result.exit_code, result.dropped_lines) == ("edited it", 2, 0, 0)
    assert result.session_id.startswith("ses_") and stream.session_id == result.session_id
    assert result.usage.total == 30
    assert [(c.name, c.status) for c in result.tool_calls] == [("bash", "completed")]
    assert sbx.commands.run("cat /home/user/notes.txt").stdout == "edited\n"
    requests = model.requests()
    assert [r["path"] for r in requests] == ["/v1/chat/completions"] * 2
    assert all(r["key_injected"] for r in requests)
    no_key(result, stream, sbx.agent, *events, *(e.model_dump_json() for e in events))


def test_run_returns_the_result_and_continues_a_session(sbx: Sandbox, model: ScriptedModel) -> None:
    model.script(text("the first answer"), text("the second answer"))
    first = sbx.agent.run("remember this", spec=spec())
    assert first.text == "the first answer" and first.steps == 1 and first.usage.total == 15
    second = sbx.agent.run("and now?", spec=spec(), session_id=first.session_id)
    assert (second.text, second.session_id) == ("the second answer", first.session_id)
    sbx.agent.prepare(runtime="runtime_a")  # returns at once; the warm-up goes on in the background
    sbx.agent.prepare(runtime="runtime_b")  # nothing to warm up
    no_key(first, second)


def test_a_run_names_its_model_as_the_plain_id(sbx: Sandbox, model: ScriptedModel) -> None:
    """The start's ``model`` is the id the caller named (sandboxd's driver adds the runtime's provider
    prefix): the model is asked for it; without one, for the spec's model."""
    model.script(text("other model"), text("spec model"))
    assert sbx.agent.run("which?", spec=spec(), model="model-2").text == "other model"
    assert sbx.agent.run("which?", spec=spec()).text == "spec model"
    assert [r["model"] for r in model.requests()] == ["model-2", "model-1"]


class Sent:
    """The HTTP requests the SDK sends (method and path), recorded as httpx sends them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests: list[tuple[str, str]] = []
        sync_send, async_send = httpx.Client.send, httpx.AsyncClient.send

        def recorded(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            self.requests.append((request.method, request.url.path))
            return sync_send(client, request, **kwargs)

        async def arecorded(client: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            self.requests.append((request.method, request.url.path))
            return await async_send(client, request, **kwargs)

        monkeypatch.setattr(httpx.Client, "send", recorded)
        monkeypatch.setattr(httpx.AsyncClient, "send", arecorded)

    def take(self) -> list[tuple[str, str]]:
        """The requests so far, forgotten."""
        taken, self.requests = self.requests, []
        return taken


def first_and_later_run(sandbox_id: str, execution_id: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """What a handle's first run sends (configuration, start, prompt: sandboxd's calls through the
    control plane, nothing in between) and what a later run with the same configuration sends."""
    daemon = f"/v1/sandboxes/{sandbox_id}/daemon/v1/agent"
    start, prompt = ("POST", f"{daemon}/executions"), ("POST", f"{daemon}/executions/{execution_id}/prompt")
    return [("PUT", f"{daemon}/config"), start, prompt], [start, prompt]


def test_a_first_run_sends_configuration_start_and_prompt_and_a_later_one_start_and_prompt(
    sbx: Sandbox, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No call precedes a daemon call (a suspended sandbox is resumed by the control plane where the call
    reaches it): a handle's first stream sends 3 requests before its first event, a later run 2 in all
    (as TypeScript counts them)."""
    handle = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)  # a handle that wrote nothing
    try:
        model.script(text("the first answer"), text("the second answer"))
        sent = Sent(monkeypatch)
        with handle.agent.stream("first", spec=spec()) as stream:
            assert next(stream).type == "step_started"
            before_first_event = sent.take()
            assert [event.type for event in stream][-1] == "done"
            assert stream.execution_id is not None
            first, _ = first_and_later_run(handle.sandbox_id, stream.execution_id)
        assert before_first_event == first
        assert sent.take() == []  # the rest came on the prompt's stream
        result = handle.agent.run("second", spec=spec(), session_id=stream.result().session_id)
        assert result.text == "the second answer"
        requests = sent.take()
        execution_id = requests[-1][1].split("/")[-2]
        assert requests == first_and_later_run(handle.sandbox_id, execution_id)[1]
    finally:
        handle.close()


async def test_async_a_first_run_sends_configuration_start_and_prompt_and_a_later_one_start_and_prompt(
    sbx: Sandbox, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        model.script(text("the first answer"), text("the second answer"))
        sent = Sent(monkeypatch)
        assert (await handle.agent.run("first", spec=spec())).text == "the first answer"
        requests = sent.take()
        execution_id = requests[-1][1].split("/")[-2]
        assert requests == first_and_later_run(handle.sandbox_id, execution_id)[0]
        async with handle.agent.stream("second", spec=spec()) as stream:
            assert (await anext(stream)).type == "step_started"
            before_first_event = sent.take()
            assert stream.execution_id is not None
            assert before_first_event == first_and_later_run(handle.sandbox_id, stream.execution_id)[1]
            assert [event.type async for event in stream][-1] == "done"
        assert sent.take() == []
    finally:
        await handle.close()


def test_prepare_with_a_spec_starts_its_runtime_in_a_fresh_sandbox(
    control_plane: ControlPlane, model: ScriptedModel
) -> None:
    with agent_sandbox(model) as fresh:
        fresh.agent.prepare()  # no configuration written yet: nothing to start
        fresh.agent.prepare(spec=spec())  # written first, then the runtime starts with it
        wait_for(lambda: sleeping(fresh, "opencode run") == 1, timeout=60.0)
        model.script(text("warm"))
        assert fresh.agent.run("use it", spec=spec()).text == "warm"
        assert sleeping(fresh, "opencode run") == 0


def test_abort_from_another_thread_ends_with_aborted(sbx: Sandbox, model: ScriptedModel) -> None:
    model.script(tool_call("bash", {"command": "sleep 303", "description": "wait"}))
    stream = sbx.agent.stream("wait", spec=spec())

    def abort_when_the_tool_runs() -> None:
        wait_for(lambda: sleeping(sbx, "sleep 303") > 0)
        stream.abort()

    aborter = threading.Thread(target=abort_when_the_tool_runs)
    aborter.start()
    events = [event.type for event in stream]
    aborter.join()
    assert events[0] == "step_started" and events[-1] == "agent_failed"
    with pytest.raises(AgentException) as failed:
        stream.result()
    assert failed.value.reason == "aborted"
    stream.close()
    assert sleeping(sbx, "sleep 303") == 0
    no_key(failed.value, repr(failed.value))


def test_a_second_run_while_one_runs_is_busy(sbx: Sandbox, model: ScriptedModel) -> None:
    model.script(tool_call("bash", {"command": "sleep 304", "description": "wait"}))
    with sbx.agent.stream("wait here", spec=spec()) as running:
        assert next(running).type == "step_started"
        wait_for(lambda: sleeping(sbx, "sleep 304") > 0)
        with pytest.raises(AgentException) as busy:
            sbx.agent.run("me too", spec=spec())
        assert busy.value.reason == "busy"
        refused = sbx.agent.stream("me too", spec=spec())  # stream() never raises for an agent failure
        assert list(refused) == [AgentFailed(reason="busy")]
        running.abort()
        assert [e.type for e in running][-1] == "agent_failed"
    assert sbx.agent.executions().current is None


def test_checks_before_any_call(sbx: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(sbx._transport, "call", lambda call: calls.append(call))
    monkeypatch.setattr(sbx._transport, "lines", lambda call: calls.append(call))
    other = AgentSpec(AgentModel("compatible", "model-1", "other", base_path="/v1"))
    with pytest.raises(InvalidArgumentException) as unknown:
        sbx.agent.run("hi", spec=other)
    assert unknown.value.field == "spec.model.gateway"
    with pytest.raises(InvalidArgumentException) as stream_unknown:
        sbx.agent.stream("hi", spec=other)
    assert stream_unknown.value.field == "spec.model.gateway"
    with pytest.raises(InvalidArgumentException) as base_path:
        sbx.agent.run("hi", spec=AgentSpec(AgentModel("compatible", "model-1", "llm", base_path="/v2")))
    assert base_path.value.field == "spec.model.base_path"  # the preset's base path is /v1
    with pytest.raises(InvalidArgumentException) as mcp:
        sbx.agent.run("hi", spec=spec(mcp={"tools": McpLocal(["node", "mcp.js"])}), runtime="runtime_b")
    assert mcp.value.field == "mcp"
    with pytest.raises(InvalidArgumentException) as raw:
        sbx.agent.run("hi", spec=spec(raw_config={"tui": {}}), runtime="runtime_b")
    assert raw.value.field == "raw_config"
    with pytest.raises(InvalidArgumentException) as instructions:
        sbx.agent.run("hi", spec=spec(instructions="a" * (1024 * 1024 + 1)))
    assert instructions.value.field == "spec.instructions"
    half = "a" * (1024 * 1024)
    with pytest.raises(InvalidArgumentException) as request:
        sbx.agent.stream("hi", spec=spec(instructions=half, agents={"helper": SubAgent("Helps", half)}))
    assert request.value.field == "spec"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"prompt": ""}, "prompt"),
        ({"runtime": "runtime_c"}, "runtime"),
        ({"session_id": "nope"}, "session_id"),
        ({"session_id": "rda_" + "0" * 32}, "session_id"),  # a runtime_b session with runtime_a
        ({"model": "-flag"}, "model"),
        ({"workdir": "relative"}, "workdir"),
        ({"reasoning": "yes"}, "reasoning"),
        ({"limits": 5}, "limits"),
    ]
    for options, field in cases:
        prompt = options.pop("prompt", "hi")
        with pytest.raises(InvalidArgumentException) as bad:
            sbx.agent.run(prompt, spec=spec(), **options)
        assert bad.value.field == field
    with pytest.raises(InvalidArgumentException):
        sbx.agent.prepare(runtime="runtime_c")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException) as bad:
        sbx.agent.prepare(spec="a spec")  # type: ignore[arg-type]
    assert bad.value.field == "spec"
    with pytest.raises(InvalidArgumentException) as bad:
        sbx.agent.prepare(spec=AgentSpec(AgentModel("compatible", "model-1", "no-such-route", base_path="/v1")))
    assert bad.value.field == "spec.model.gateway"
    assert calls == []


async def test_async_stream_and_task_cancellation_end_with_aborted(sbx: Sandbox, model: ScriptedModel) -> None:
    handle = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        model.script(text("async hello"))
        async with handle.agent.stream("hello", spec=spec()) as stream:
            types = [event.type async for event in stream]
            assert (await stream.result()).text == "async hello"
        assert types == ["step_started", "text", "step_finished", "done"]
        assert (await handle.agent.run("again", spec=spec())).text == "(unscripted)"

        async def visible(needle: str) -> None:
            pattern = f"[{needle[0]}]{needle[1:]}"
            for _ in range(150):
                found = await handle.commands.run(f"ps -eo args | grep -c '{pattern}' || true")
                if int(found.stdout.strip()) > 0:
                    return
                await asyncio.sleep(0.2)
            raise AssertionError(f"{needle} never ran")

        # Cancelling the task iterating a stream aborts the execution; the stream reads on to its end.
        model.script(tool_call("bash", {"command": "sleep 305", "description": "wait"}))
        stream = handle.agent.stream("wait", spec=spec())
        seen: list[str] = []

        async def consume() -> None:
            async for event in stream:
                seen.append(event.type)

        task = asyncio.create_task(consume())
        await visible("sleep 305")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        rest = [event async for event in stream]
        assert seen[0] == "step_started" and rest[-1] == AgentFailed(reason="aborted")
        with pytest.raises(AgentException) as aborted:
            await stream.result()
        assert aborted.value.reason == "aborted"
        await stream.aclose()

        # Cancelling the task awaiting run() aborts its execution.
        model.script(tool_call("bash", {"command": "sleep 306", "description": "wait"}))
        running = asyncio.create_task(handle.agent.run("wait again", spec=spec()))
        await visible("sleep 306")
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        listed = await handle.agent.executions()
        for _ in range(100):  # the abort was answered; the execution ends right after
            if listed.current is None:
                break
            await asyncio.sleep(0.1)
            listed = await handle.agent.executions()
        assert listed.current is None
        last = listed.executions[-1]
        assert last.outcome is not None and (last.outcome.type, last.outcome.reason) == ("agent_failed", "aborted")
        no_key(listed, handle.agent, aborted.value)
    finally:
        await handle.close()
