"""``AgentModel``: which model an agent uses, through which gateway route (SPEC "AgentModel")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ._check import Checker, check_bool, check_string, printable_text
from ._paths import base_path_problem
from ._rules import AGENT_PROVIDERS, REGION, REGION_RULE, ROUTE_NAME, ROUTE_RULE

#: One agent model provider.
AgentProvider = Literal["vendor_a", "vendor_b", "vendor_c", "vendor_d", "vendor_e", "compatible"]

_MODEL_ID: Final = printable_text(256)


@dataclass(frozen=True, init=False)
class AgentModel:
    """The agent's model: ``provider``, model ``id`` and the ``gateway`` route that reaches it. It has no
    credential field: the gateway injects the key. ``region`` is required for (and only for)
    ``vendor_a``; ``base_path`` only for ``compatible``; a ``vendor_d`` id has no ``models/`` prefix.

    Example: ``AgentModel("vendor_b", "model-1", "llm")``
    """

    provider: AgentProvider
    #: Model id (vendor_e: the deployment name; vendor_d: without ``models/``).
    id: str
    #: Key of the sandbox's ``gateways`` map that reaches the model.
    gateway: str
    region: str | None
    base_path: str
    prompt_caching: bool

    def __init__(
        self,
        provider: AgentProvider,
        id: str,
        gateway: str,
        *,
        region: str | None = None,
        base_path: str = "",
        prompt_caching: bool = True,
    ) -> None:
        check = Checker("AgentModel")
        if provider not in AGENT_PROVIDERS:
            check.add(("provider",), f"must be one of {', '.join(AGENT_PROVIDERS)}")
        check_string(check, ("id",), id, _MODEL_ID, "must be 1-256 characters without control characters")
        check_string(check, ("gateway",), gateway, ROUTE_NAME, f"must be a route name: {ROUTE_RULE}")
        if region is not None:
            check_string(check, ("region",), region, REGION, REGION_RULE)
        check_string(check, ("base_path",), base_path)
        check_bool(check, ("prompt_caching",), prompt_caching)
        if check.ok:
            if provider == "vendor_a" and region is None:
                check.add(("region",), "is required with provider vendor_a")
            if provider != "vendor_a" and region is not None:
                check.add(("region",), "is only for provider vendor_a")
            if provider != "compatible" and base_path != "":
                check.add(("base_path",), "is only for provider compatible")
            problem = base_path_problem(base_path)
            if problem is not None:
                check.add(("base_path",), problem)
            if provider == "vendor_d" and id.startswith("models/"):
                check.add(("id",), "must not carry the models/ prefix")
        check.done()
        for key, value in (("provider", provider), ("id", id), ("gateway", gateway), ("region", region)):
            object.__setattr__(self, key, value)
        object.__setattr__(self, "base_path", base_path)
        object.__setattr__(self, "prompt_caching", prompt_caching)
