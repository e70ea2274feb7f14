"""The checks and bodies of an agent call (``sdk/agent-options.ts``, ``sdk/agent-checks.ts``, the
``#plan`` of ``sdk/sandbox-agent.ts``): every option, the spec against the runtime and the handle's
gateways, then the request write (``_agent_request.py``) and the start body. Everything here raises
before any call."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ._agent_request import agent_request_write
from ._check import Checker, expected
from .agent_limits import AgentLimits
from .agent_spec import AgentSpec
from .errors import InvalidArgumentException
from .gateways import GatewayCore
from .mcp_servers import McpRemote
from .runtimes import RuntimeB, RuntimeChoice, check_spec_for_runtime, entrypoint_of

_SESSION_ID: Final = re.compile(r"ses_[A-Za-z0-9]{1,100}|rda_[0-9a-f]{32}")
_MODEL_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}")
_RUNTIME_RULE: Final = "must be runtime_a, runtime_b or a RuntimeB"


@dataclass(frozen=True)
class ExecutionPlan:
    """A new execution: its request write, its start body and its prompt."""

    config: dict[str, Any]
    start: dict[str, Any]
    prompt: str
    max_output_bytes: int


def runtime_name(choice: RuntimeChoice) -> str:
    """The name of a runtime choice."""
    return choice.name if isinstance(choice, RuntimeB) else choice


def check_runtime(check: Checker, runtime: object) -> None:
    """``runtime`` is ``runtime_a``, ``runtime_b`` or a ``RuntimeB``."""
    if not isinstance(runtime, RuntimeB) and runtime not in ("runtime_a", "runtime_b"):
        check.add(("runtime",), _RUNTIME_RULE)


def _check_options(operation: str, prompt: object, options: dict[str, Any]) -> None:
    check = Checker(operation)
    if not isinstance(prompt, str):
        check.add(("prompt",), expected("a string", prompt))
    elif prompt == "":
        check.add(("prompt",), "must not be empty")
    if not isinstance(options["spec"], AgentSpec):
        check.add(("spec",), "must be an AgentSpec")
    check_runtime(check, options["runtime"])
    session = options["session_id"]
    if session is not None and (not isinstance(session, str) or _SESSION_ID.fullmatch(session) is None):
        check.add(("session_id",), "must be a session id from an earlier result (ses_… or rda_<32 hex>)")
    model = options["model"]
    if model is not None and (not isinstance(model, str) or _MODEL_ID.fullmatch(model) is None):
        rule = "must be a model id of 1-200 characters [A-Za-z0-9._:@/-], starting with a letter or digit"
        check.add(("model",), rule)
    if options["limits"] is not None and not isinstance(options["limits"], AgentLimits):
        check.add(("limits",), "must be an AgentLimits")
    workdir = options["workdir"]
    if not isinstance(workdir, str):
        check.add(("workdir",), expected("a string", workdir))
    elif len(workdir) > 4096:
        check.add(("workdir",), "must be at most 4096 characters")
    elif not workdir.startswith("/") or "\0" in workdir:
        check.add(("workdir",), "must be an absolute path without NUL")
    if not isinstance(options["reasoning"], bool):
        check.add(("reasoning",), expected("a bool", options["reasoning"]))
    check.done()


def _fail(operation: str, field: str, rule: str) -> None:
    raise InvalidArgumentException(f"{operation}: {field}: {rule}", field)


def check_agent_gateways(operation: str, spec: AgentSpec, model: str | None, gateways: GatewayCore) -> None:
    """Every gateway the spec needs is a route of the handle; where the handle knows the route's preset
    (the creating handle), the model fits it (preset rules 1 and 4).

    :raises InvalidArgumentException: naming the field and the rule, never a value
    """
    needed = [("spec.model.gateway", spec.model.gateway)]
    needed += [(f"spec.mcp.{n}.gateway", s.gateway) for n, s in spec.mcp.items() if isinstance(s, McpRemote)]
    for field, name in needed:
        if name not in gateways.status:
            _fail(operation, field, "names no gateway route of this sandbox (give it in gateways at create)")
    definition = gateways.definitions.get(spec.model.gateway)
    binding = None if definition is None else definition.preset
    if binding is None:
        return
    provider, models = spec.model.provider, binding.models
    if provider in ("vendor_a", "vendor_d") and models is not None:
        field, wanted = ("spec.model.id", spec.model.id) if model is None else ("model", model)
        if wanted not in models:
            _fail(operation, field, "is not in the models of the gateway's preset")
        if provider == "vendor_d" and spec.small_model not in models:
            _fail(operation, "spec.small_model", "is not in the models of the gateway's preset (preset rule 1)")
        for name, sub in spec.agents.items():
            if sub.model is not None and sub.model not in models:
                _fail(operation, f"spec.agents.{name}.model", "is not in the models of the gateway's preset")
    if provider == "compatible" and binding.provider == "compatible" and spec.model.base_path != binding.base_path:
        _fail(operation, "spec.model.base_path", "must equal the base path of the gateway's preset")


def plan_prepare(runtime: object, spec: object, gateways: GatewayCore) -> tuple[str, dict[str, Any] | None]:
    """``agent.prepare``'s checks: the runtime it warms up, and the request write of ``spec`` (None
    without a spec: the runtime starts with the configuration written last).

    :raises InvalidArgumentException: for a malformed option or a spec the gateways cannot serve
    """
    check = Checker("agent.prepare")
    check_runtime(check, runtime)
    if spec is not None and not isinstance(spec, AgentSpec):
        check.add(("spec",), "must be an AgentSpec")
    check.done()
    name = runtime_name(runtime)  # type: ignore[arg-type]  # checked just above
    if spec is None or name != "runtime_a":
        return name, None
    assert isinstance(spec, AgentSpec)
    check_spec_for_runtime(spec, "runtime_a")
    check_agent_gateways("agent.prepare", spec, None, gateways)
    return name, agent_request_write("agent.prepare", name, spec, {})


def plan_execution(operation: str, prompt: object, gateways: GatewayCore, **options: Any) -> ExecutionPlan:
    """Every check, then the calls' bodies (options as ``run``/``stream`` take them).

    :raises InvalidArgumentException: for a malformed option or a spec the gateways cannot serve
    """
    _check_options(operation, prompt, options)
    assert isinstance(prompt, str)
    spec: AgentSpec = options["spec"]
    runtime: RuntimeChoice = options["runtime"]
    model: str | None = options["model"]
    session: str | None = options["session_id"]
    limits: AgentLimits = options["limits"] or AgentLimits()
    check_spec_for_runtime(spec, runtime)
    check_agent_gateways(operation, spec, model, gateways)
    name = runtime_name(runtime)
    entrypoint = entrypoint_of(runtime)
    config = agent_request_write(operation, name, spec, {} if entrypoint is None else {"entrypoint": entrypoint})
    if session is not None and not session.startswith("rda_" if name == "runtime_b" else "ses_"):
        _fail(operation, "session_id", "is a session of the other runtime")
    start: dict[str, Any] = {"runtime": name, "configHash": config["hash"]}
    if session is not None:
        start["sessionId"] = session
    if model is not None:
        start["model"] = model
    start["limits"] = {
        "timeoutMs": limits.timeout_ms,
        "maxSteps": limits.max_steps,
        "maxTotalTokens": limits.max_total_tokens,
        "maxOutputBytes": limits.max_output_bytes,
    }
    start["workdir"] = options["workdir"]
    start["reasoning"] = options["reasoning"]
    return ExecutionPlan(config, start, prompt, limits.max_output_bytes)
