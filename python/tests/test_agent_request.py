"""Parity of the agent request (``PUT /v1/agent/config``): the Python SDK writes the same runtime, text and
hash as the TypeScript SDK (``agentRequestWrite`` of the built package, run with node) for a runtime_a
spec using every part, a vendor_a spec with its region and a runtime_b spec with its entrypoint; and the
size checks raise before any call."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from sdk import (
    AgentModel,
    AgentPermissions,
    AgentSpec,
    InvalidArgumentException,
    McpLocal,
    McpRemote,
    RuntimeB,
    SubAgent,
)
from sdk._agent_plan import plan_execution, plan_prepare
from sdk._agent_request import agent_request_write
from sdk.gateways import GatewayCore

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
const load = (m) => import(`${process.argv[1]}/dist/sdk/${m}.js`);
const [{ agentRequestWrite }, { AgentSpec }, { AgentModel }, { AgentPermissions }, { SubAgent },
  { McpLocal, McpRemote }] = await Promise.all(
  ['agent-request', 'agent-spec', 'agent-model', 'agent-permissions', 'sub-agent', 'mcp-servers'].map(load));
const spec = new AgentSpec({
  model: new AgentModel({ provider: 'compatible', id: 'model-1', gateway: 'llm', basePath: '/v1',
    promptCaching: false }),
  smallModel: 'small-1', instructions: 'Be brief. \\u00fcn\\u00efcode \\u{1F600}',
  permissions: new AgentPermissions({ default: 'deny', tools: { bash: { '*': 'deny', 'git *': 'allow' },
    read: 'allow', webfetch: 'allow' } }),
  agents: {
    reviewer: new SubAgent({ description: 'Reviews', instructions: 'Review only', model: 'model-2',
      permissions: new AgentPermissions({ tools: { edit: 'deny' } }) }),
    '42': new SubAgent({ description: 'Numbered', instructions: 'Count' }),
  },
  mcp: { local: new McpLocal({ command: ['node', 'mcp.js'], envs: { LOG: 'warn', A_B: '1' }, timeoutMs: 5000 }),
    docs: new McpRemote({ gateway: 'tools', path: '/mcp' }) },
  rawConfig: { tui: { scroll_speed: 2, ratio: 0.5 }, '10': ['x', 1.25, null], '2': true } });
const vendorA = new AgentSpec({
  model: new AgentModel({ provider: 'vendor_a', id: 'm', gateway: 'llm', region: 'us-east-1' }) });
const specB = new AgentSpec({ model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
  instructions: 'Hi', permissions: new AgentPermissions({ tools: { bash: { 'git *': 'allow' } } }),
  agents: { helper: new SubAgent({ description: 'Helps', instructions: 'Help' }) } });
console.log(JSON.stringify({
  a: agentRequestWrite('agent.run', 'runtime_a', spec, {}),
  vendorA: agentRequestWrite('agent.run', 'runtime_a', vendorA, {}),
  b: agentRequestWrite('agent.run', 'runtime_b', specB, { entrypoint: 'agent.graph:build' }),
}));
"""


def every_part() -> AgentSpec:
    return AgentSpec(
        AgentModel("compatible", "model-1", "llm", base_path="/v1", prompt_caching=False),
        small_model="small-1",
        instructions="Be brief. \u00fcn\u00efcode \U0001f600",
        permissions=AgentPermissions(
            default="deny", tools={"bash": {"*": "deny", "git *": "allow"}, "read": "allow", "webfetch": "allow"}
        ),
        agents={
            "reviewer": SubAgent("Reviews", "Review only", "model-2", AgentPermissions(tools={"edit": "deny"})),
            "42": SubAgent("Numbered", "Count"),
        },
        mcp={
            "local": McpLocal(["node", "mcp.js"], envs={"LOG": "warn", "A_B": "1"}, timeout_seconds=5),
            "docs": McpRemote("tools", "/mcp"),
        },
        # 2.0 is JavaScript's 2; whole-number keys come first in a JavaScript object.
        raw_config={"tui": {"scroll_speed": 2.0, "ratio": 0.5}, "10": ["x", 1.25, None], "2": True},
    )


def test_python_writes_the_typescript_request() -> None:
    answer = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT, str(REPO)], check=True, capture_output=True, text=True
    )
    expected = json.loads(answer.stdout)
    spec_b = AgentSpec(
        AgentModel("vendor_b", "model-1", "llm"),
        instructions="Hi",
        permissions=AgentPermissions(tools={"bash": {"git *": "allow"}}),
        agents={"helper": SubAgent("Helps", "Help")},
    )
    vendor_a = AgentSpec(AgentModel("vendor_a", "m", "llm", region="us-east-1"))
    a = agent_request_write("agent.run", "runtime_a", every_part(), {})
    assert a == expected["a"]
    assert agent_request_write("agent.run", "runtime_a", vendor_a, {}) == expected["vendorA"]
    assert agent_request_write("agent.run", "runtime_b", spec_b, {"entrypoint": "agent.graph:build"}) == expected["b"]
    # What the request holds, read back: the spec as data, nothing of a runtime's configuration.
    request = json.loads(a["text"])
    assert a["hash"] == hashlib.sha256(f"runtime_a\n{a['text']}".encode()).hexdigest()
    assert request["options"] == {}
    assert request["spec"]["model"] == {
        "provider": "compatible", "id": "model-1", "gateway": "llm", "basePath": "/v1", "promptCaching": False,
    }  # fmt: skip
    assert list(request["spec"]["agents"]) == ["42", "reviewer"]
    assert request["spec"]["mcp"]["local"] == {
        "kind": "local", "command": ["node", "mcp.js"], "envs": {"LOG": "warn", "A_B": "1"}, "timeoutMs": 5000,
    }  # fmt: skip
    assert list(request["spec"]["permissions"]["tools"]["bash"]) == ["*", "git *"]  # last match wins: order kept
    assert json.loads(expected["vendorA"]["text"])["spec"]["model"]["region"] == "us-east-1"
    assert json.loads(expected["b"]["text"])["options"] == {"entrypoint": "agent.graph:build"}


def gateways(*routes: str) -> GatewayCore:
    """A handle's routes as ``plan_execution`` reads them (no sandbox behind: it makes no call)."""
    core = GatewayCore(cast(Any, None), {}, None)
    core.status = {name: cast(Any, SimpleNamespace(port=40001)) for name in routes}
    return core


def run_options(spec: AgentSpec, **options: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"runtime": "runtime_a", "session_id": None, "model": None, "limits": None}
    return {"spec": spec, **defaults, "workdir": "/home/user", "reasoning": False, **options}


def test_the_start_names_the_request_and_the_plain_model_id() -> None:
    spec = AgentSpec(AgentModel("vendor_b", "model-1", "llm"))
    plan = plan_execution("agent.run", "hi", gateways("llm"), **run_options(spec, model="model-2"))
    assert plan.config == agent_request_write("agent.run", "runtime_a", spec, {})
    assert plan.start["configHash"] == plan.config["hash"] and plan.start["model"] == "model-2"
    b = RuntimeB(entrypoint="agent.graph:build")
    plan_b = plan_execution("agent.run", "hi", gateways("llm"), **run_options(spec, runtime=b, model="model-2"))
    assert plan_b.config == agent_request_write("agent.run", "runtime_b", spec, {"entrypoint": "agent.graph:build"})
    assert (plan_b.start["runtime"], plan_b.start["model"]) == ("runtime_b", "model-2")
    runtime, config = plan_prepare("runtime_a", spec, gateways("llm"))
    assert (runtime, config) == ("runtime_a", agent_request_write("agent.prepare", "runtime_a", spec, {}))


@pytest.mark.usefixtures("no_traffic")
def test_instructions_over_1_mib_raise_before_any_call() -> None:
    at_most = AgentSpec(AgentModel("vendor_b", "m", "llm"), instructions="a" * (1024 * 1024))
    agent_request_write("agent.run", "runtime_a", at_most, {})  # 1 MiB is allowed
    # One character beyond, counted as JavaScript does (a non-BMP character is 2 code units).
    over = AgentSpec(AgentModel("vendor_b", "m", "llm"), instructions="a" * (1024 * 1024 - 1) + "\U0001f600")
    with pytest.raises(InvalidArgumentException) as big:
        plan_execution("agent.run", "hi", gateways("llm"), **run_options(over))
    assert big.value.field == "spec.instructions"
    assert big.value.message == "agent.run: spec: instructions are over 1 MiB"
    with pytest.raises(InvalidArgumentException) as prepared:
        plan_prepare("runtime_a", over, gateways("llm"))
    assert prepared.value.field == "spec.instructions"
    assert prepared.value.message == "agent.prepare: spec: instructions are over 1 MiB"


@pytest.mark.usefixtures("no_traffic")
def test_a_request_over_2_mib_raises_before_any_call() -> None:
    half = "a" * (1024 * 1024)
    spec = AgentSpec(
        AgentModel("vendor_b", "m", "llm"), instructions=half, agents={"helper": SubAgent("Helps", half)}
    )
    with pytest.raises(InvalidArgumentException) as big:
        plan_execution("agent.stream", "hi", gateways("llm"), **run_options(spec))
    assert big.value.field == "spec"
    assert big.value.message == "agent.stream: spec: the agent request is over 2 MiB"
