"""The SDK's exceptions (SPEC "Errors"), and the error envelope every server answers a failure with.

Each exception carries the stable ``code`` of the shared registry (``rules/error-codes.ts``) and the
message the service gave, which names fields and rules, never a value.
"""

from __future__ import annotations

from typing import Any, Final, Mapping

#: Every error code and the exception class it becomes, as the TypeScript registry has them.
ERROR_CLASS: Final[Mapping[str, str]] = {
    "invalid_argument": "InvalidArgumentException",
    "invalid_allow_path": "InvalidArgumentException",
    "secret_not_found": "SecretNotFoundException",
    "unauthenticated": "AuthenticationException",
    "forbidden_origin": "AuthenticationException",
    "forbidden_host": "AuthenticationException",
    "sandbox_not_found": "SandboxException",
    "process_not_found": "SandboxException",
    "not_found": "SandboxException",
    "agent_config_missing": "SandboxException",
    "method_not_allowed": "SandboxException",
    "sandbox_ended": "SandboxException",
    "sandbox_suspended": "SandboxException",
    "configuration_rejected": "SandboxException",
    "unimplemented": "SandboxException",
    "sandbox_error": "SandboxException",
    "agent_failed": "AgentException",
    "file_not_found": "SandboxException",
    "not_a_directory": "SandboxException",
    "is_a_directory": "SandboxException",
    "permission_denied": "SandboxException",
    "no_space": "SandboxException",
    "port_closed": "SandboxException",
    "port_forbidden": "SandboxException",
}


class SdkException(Exception):
    """Base of every SDK exception: a stable ``code`` and a message without values."""

    def __init__(self, code: str, message: str, context: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.context: dict[str, Any] = dict(context or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidArgumentException(SdkException):
    """Bad input, raised before any call; ``field`` names the option (snake_case), never its value."""

    def __init__(self, message: str, field: str | None = None, code: str = "invalid_argument") -> None:
        super().__init__(code, message, {} if field is None else {"field": field})
        self.field = field


class SecretNotFoundException(SdkException):
    """A secret a gateway or ``secrets`` names does not exist in the store."""

    def __init__(self, message: str, context: Mapping[str, Any] | None = None) -> None:
        super().__init__("secret_not_found", message, context)


class SandboxException(SdkException):
    """The service failed or refused; ``failure_class`` is the daemon's class when it gave one."""

    def __init__(self, message: str, code: str = "sandbox_error", failure_class: str | None = None) -> None:
        super().__init__(code, message, {} if failure_class is None else {"failureClass": failure_class})
        self.failure_class = failure_class


class AuthenticationException(SdkException):
    """A missing or rejected sandbox access token or operator key."""

    def __init__(self, message: str, code: str = "unauthenticated") -> None:
        super().__init__(code, message)


class AgentException(SdkException):
    """An agent execution failed; ``reason`` is one of SPEC "Agent reasons"."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__("agent_failed", message or f"agent execution failed: {reason}", {"reason": reason})
        self.reason = reason


def error_from_envelope(payload: object) -> SdkException:
    """The exception an error envelope ``{code, message, context?}`` stands for; anything else is a
    ``SandboxException`` that says so without echoing the payload."""
    if not isinstance(payload, dict):
        return SandboxException("malformed error envelope from the service")
    code, message, context = payload.get("code"), payload.get("message"), payload.get("context") or {}
    if not isinstance(code, str) or code not in ERROR_CLASS or not isinstance(message, str):
        return SandboxException("malformed error envelope from the service")
    if not isinstance(context, dict):
        context = {}
    kind = ERROR_CLASS[code]
    if kind == "InvalidArgumentException":
        field = context.get("field")
        return InvalidArgumentException(message, field if isinstance(field, str) else None, code)
    if kind == "SecretNotFoundException":
        return SecretNotFoundException(message, context)
    if kind == "AuthenticationException":
        return AuthenticationException(message, code)
    if kind == "AgentException":
        reason = context.get("reason")
        return AgentException(reason if isinstance(reason, str) else "runtime_error", message)
    failure = context.get("failureClass")
    return SandboxException(message, code, failure if isinstance(failure, str) else None)
