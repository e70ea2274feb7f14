"""Parity of the agent configuration: the Python SDK writes the same runtime_a and runtime_b
configuration text, files, environment and hash as the TypeScript SDK (``runtimeAConfigWrite`` and
``runtimeBConfigWrite`` of the built package, run with node) for one spec using every part."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sdk import AgentModel, AgentPermissions, AgentSpec, McpLocal, McpRemote, SubAgent
from sdk._agent_config import runtime_a_config_write, runtime_b_config_write

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
const load = (m) => import(`${process.argv[1]}/dist/sdk/${m}.js`);
const [{ runtimeAConfigWrite, runtimeBConfigWrite }, { AgentSpec }, { AgentModel }, { AgentPermissions },
  { SubAgent }, { McpLocal, McpRemote }] = await Promise.all(
  ['agent-config', 'agent-spec', 'agent-model', 'agent-permissions', 'sub-agent', 'mcp-servers'].map(load));
const gateways = { get: (n) => ({ port: n === 'llm' ? 40001 : 40002 }), definition: () => undefined };
const spec = new AgentSpec({
  model: new AgentModel({ provider: 'compatible', id: 'model-1', gateway: 'llm', basePath: '/v1' }),
  smallModel: 'small-1', instructions: 'Be brief. \\u00fcn\\u00efcode',
  permissions: new AgentPermissions({ default: 'deny', tools: { bash: { '*': 'deny', 'git *': 'allow' },
    read: 'allow', webfetch: 'allow' } }),
  agents: { reviewer: new SubAgent({ description: 'Reviews', instructions: 'Review only', model: 'model-2',
    permissions: new AgentPermissions({ tools: { edit: 'deny' } }) }) },
  mcp: { local: new McpLocal({ command: ['node', 'mcp.js'], envs: { LOG: 'warn' }, timeoutMs: 5000 }),
    docs: new McpRemote({ gateway: 'tools', path: '/mcp' }) },
  rawConfig: { tui: { scroll_speed: 2, apiKey: 'x' }, snapshot: true, lsp: true } });
const specB = new AgentSpec({ model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
  instructions: 'Hi', permissions: new AgentPermissions({ tools: { bash: { 'git *': 'allow' } } }),
  agents: { helper: new SubAgent({ description: 'Helps', instructions: 'Help' }) } });
const plain = new AgentSpec({ model: new AgentModel({ provider: 'vendor_a', id: 'm', gateway: 'llm', region: 'us-east-1' }) });
console.log(JSON.stringify({
  a: runtimeAConfigWrite('agent.run', spec, gateways, 'model-3'),
  plain: runtimeAConfigWrite('agent.run', plain, gateways),
  b: runtimeBConfigWrite('agent.run', specB, gateways, 'agent.graph:build'),
}));
"""


def test_python_writes_the_typescript_configuration() -> None:
    answer = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT, str(REPO)], check=True, capture_output=True, text=True
    )
    expected = json.loads(answer.stdout)
    ports = {"llm": 40001, "tools": 40002}
    spec = AgentSpec(
        AgentModel("compatible", "model-1", "llm", base_path="/v1"),
        small_model="small-1",
        instructions="Be brief. \u00fcn\u00efcode",
        permissions=AgentPermissions(
            default="deny", tools={"bash": {"*": "deny", "git *": "allow"}, "read": "allow", "webfetch": "allow"}
        ),
        agents={"reviewer": SubAgent("Reviews", "Review only", "model-2", AgentPermissions(tools={"edit": "deny"}))},
        mcp={"local": McpLocal(["node", "mcp.js"], envs={"LOG": "warn"}, timeout_seconds=5), "docs": McpRemote("tools", "/mcp")},
        raw_config={"tui": {"scroll_speed": 2, "apiKey": "x"}, "snapshot": True, "lsp": True},
    )
    spec_b = AgentSpec(
        AgentModel("vendor_b", "model-1", "llm"),
        instructions="Hi",
        permissions=AgentPermissions(tools={"bash": {"git *": "allow"}}),
        agents={"helper": SubAgent("Helps", "Help")},
    )
    plain = AgentSpec(AgentModel("vendor_a", "m", "llm", region="us-east-1"))
    assert runtime_a_config_write("agent.run", spec, ports, "model-3") == expected["a"]
    assert runtime_a_config_write("agent.run", plain, ports) == expected["plain"]
    assert runtime_b_config_write("agent.run", spec_b, ports, "agent.graph:build") == expected["b"]
