"""Sandboxes for AI agents, with a secret gateway: the Python SDK (sync ``Sandbox``, async ``AsyncSandbox``).

It mirrors the TypeScript SDK row for row with Python's names; see ``python/README.md``.
"""

from .errors import (
    AgentException,
    AuthenticationException,
    InvalidArgumentException,
    SandboxException,
    SdkException,
    SecretNotFoundException,
    error_from_envelope,
)

__all__ = [
    "AgentException",
    "AuthenticationException",
    "InvalidArgumentException",
    "SandboxException",
    "SdkException",
    "SecretNotFoundException",
    "error_from_envelope",
]
