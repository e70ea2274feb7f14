"""``sbx.agent.attach`` and ``sbx.agent.events()`` (TypeScript's ``attach`` and ``events$``) end to end, on
one ``sdk-agent`` sandbox for the module with the scripted model behind a ``compatible_gateway`` route: a
second handle connected with the token reads the running execution from its start, through a proxy that
cuts the stream once; attach from a cursor, sync and async; checks and refusals; the model key in nothing."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from _agent_world import MODEL_KEY, ScriptedModel, agent_sandbox, running_model, text, tool_call, typescript_tool_then_text_events
from _cut_proxy import CutProxy
from _world import Pki, Upstream
from conftest import ControlPlane
from sdk import (
    AgentModel,
    AgentSpec,
    AsyncSandbox,
    InvalidArgumentException,
    Sandbox,
)
from sdk._daemon import daemon


@pytest.fixture(scope="module")
def model(test_pki: Pki, https_upstream: Upstream) -> Iterator[ScriptedModel]:
    with running_model(test_pki, https_upstream, port=8445) as server:
        yield server


@pytest.fixture(scope="module")
def sbx(control_plane: ControlPlane, model: ScriptedModel) -> Iterator[Sandbox]:
    with agent_sandbox(model) as made:
        yield made


def spec() -> AgentSpec:
    return AgentSpec(AgentModel("compatible", "model-1", "llm", base_path="/v1"))


def no_key(*values: object) -> None:
    for value in values:
        assert MODEL_KEY not in repr(value)


def test_another_handle_follows_and_attaches(sbx: Sandbox, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = typescript_tool_then_text_events()
    model.script(tool_call("bash", {"command": "sleep 2", "description": "wait"}), text("watched"))
    other = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    proxy = CutProxy(sbx._core.launched.daemon_url, b"/events")
    try:
        with sbx.agent.stream("be watched", spec=spec()) as stream:
            assert next(stream).type == "step_started"  # the execution runs
            monkeypatch.setattr(other._core, "_daemon", daemon(proxy.url))
            seen = list(other.agent.events())  # through the proxy: cut once, resumed after the cursor
            assert proxy.streams == 2
            assert [r.event.type for r in seen] == expected
            assert {r.execution_id for r in seen} == {stream.execution_id}
            cursors = [r.cursor for r in seen]
            assert cursors == sorted(set(cursors))
            result = stream.result()
        assert stream.execution_id is not None
        with other.agent.attach(stream.execution_id, after=cursors[1]) as again:
            rest = [e.type for e in again]
            assert rest == expected[2:]  # after the second event's cursor
            assert again.result().text == result.text == "watched"
            assert again.cursor == cursors[-1]
        no_key(seen, rest, result, again)
    finally:
        other.close()
        proxy.close()


def test_attach_refusals(sbx: Sandbox) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"execution_id": "no/such"}, "execution_id"),
        ({"after": -1}, "after"),
        ({"after": True}, "after"),
        ({"max_output_bytes": 0}, "max_output_bytes"),
        ({}, "execution_id"),  # nothing runs
        ({"execution_id": "exec-unknown"}, "execution_id"),  # sandboxd has no such execution
    ]
    for options, field in cases:
        with pytest.raises(InvalidArgumentException) as refused:
            sbx.agent.attach(**options)
        assert refused.value.context["field"] == field
    with pytest.raises(InvalidArgumentException) as none:
        next(sbx.agent.events())
    assert none.value.context["field"] == "execution_id"


async def test_async_attach_and_events(sbx: Sandbox, model: ScriptedModel) -> None:
    model.script(tool_call("bash", {"command": "sleep 1", "description": "wait"}), text("async watched"))
    other = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        stream = other.agent.stream("go", spec=spec())
        assert (await anext(stream)).type == "step_started"
        attached = await other.agent.attach()  # the running one, from its start
        feed = [r.event.type async for r in other.agent.events()]
        types = [e.type async for e in attached]
        assert types == feed == typescript_tool_then_text_events()
        assert (await attached.result()).text == "async watched"
        await stream.aclose()
        await attached.aclose()
        with pytest.raises(InvalidArgumentException):
            await other.agent.attach()  # nothing runs any more
    finally:
        await other.close()
