"""The numbers of SPEC "Limits" and the naming rules, as the TypeScript SDK has them (``rules/limits.ts``,
``rules/names.ts``, ``rules/raw-config-keys.ts``, ``rules/agent-providers.ts``), in one place."""

from __future__ import annotations

import re
from typing import Final

ROUTES_PER_SANDBOX: Final = 8
HEADERS_PER_ROUTE: Final = 16
ALLOW_RULES_PER_ROUTE: Final = 32
DEFAULT_RATE_PER_MINUTE: Final = 600
MAX_RATE_PER_MINUTE: Final = 6000
AGENT_TIMEOUT_MS: Final = 600_000
AGENT_MAX_STEPS: Final = 50
AGENT_MAX_TOTAL_TOKENS: Final = 1_000_000
AGENT_MAX_OUTPUT_BYTES: Final = 16 * 1024 * 1024
SANDBOX_MAX_TIMEOUT_MS: Final = 8 * 3_600_000
IDLE_SECONDS: Final = 300

#: A gateway route name: 1-64 characters ``[a-z0-9-]``.
ROUTE_NAME: Final = re.compile(r"[a-z0-9-]{1,64}")
#: A subagent or MCP server name: 1-64 characters ``[a-z0-9_-]``.
AGENT_NAME: Final = re.compile(r"[a-z0-9_-]{1,64}")
#: The subagent name the runtime keeps for its primary agent.
RESERVED_SUBAGENT_NAME: Final = "build"
ROUTE_RULE: Final = "1-64 characters [a-z0-9-]"
AGENT_NAME_RULE: Final = "1-64 characters [a-z0-9_-]"
#: An environment variable name.
ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_NAME_RULE: Final = "must be an environment variable name"
#: A template: an image name such as ``sdk-agent``, or an ARN.
TEMPLATE_NAME: Final = re.compile(
    r"(?:[a-z0-9][a-z0-9._-]{0,127}|arn:[a-z0-9-]+:[a-z0-9-]*:[a-z0-9-]*:[0-9]*:[A-Za-z0-9/._:+=@-]{1,1024})"
)
#: A sandbox id: 12 hex characters.
SANDBOX_ID: Final = re.compile(r"[a-f0-9]{12}")
#: An IAM role ARN.
ROLE_ARN: Final = re.compile(r"arn:[a-z0-9-]+:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}")
#: A snapshot's id: ``snap_`` and 16 lowercase hex digits (made by the control plane).
SNAPSHOT_ID: Final = re.compile(r"snap_[0-9a-f]{16}")
SNAPSHOT_ID_RULE: Final = "must be a snapshot id (snap_ and 16 hex digits)"
#: A cloud region such as ``us-east-1``.
REGION: Final = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9]{1,2}")
REGION_RULE: Final = "must be a region such as us-east-1"
#: A secret name or ARN as the secret store accepts it; never a secret value.
SECRET_NAME: Final = re.compile(r"[A-Za-z0-9/_+=.@:-]{1,2048}")
SECRET_NAME_RULE: Final = (
    "must name a secret (1-2048 characters A-Z a-z 0-9 / _ + = . @ : -), never hold its value"
)
#: Keys of ``raw_config`` the runtime_a adapter owns.
RESERVED_RAW_CONFIG_KEYS: Final = (
    "provider",
    "autoupdate",
    "share",
    "enabled_providers",
    "model",
    "small_model",
    "mcp",
    "agent",
    "permission",
    "instructions",
    "plugin",
)
#: Providers an ``AgentModel`` may name (``vendor_c`` also serves vendor_j).
AGENT_PROVIDERS: Final = ("vendor_a", "vendor_b", "vendor_c", "vendor_d", "vendor_e", "compatible")
#: Runtime names.
RUNTIME_NAMES: Final = ("runtime_a", "runtime_b")
