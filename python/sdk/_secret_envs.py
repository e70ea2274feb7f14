"""``secrets`` of ``Sandbox.create`` checked before any call (``sandboxSecretsSchema`` of
``sdk/sandbox-secrets.ts``): environment variable name to secret name or ``SecretRef``, at most 64."""

from __future__ import annotations

from typing import Final

from ._check import Checker, Path, check_mapping, items, matches
from ._rules import ENV_NAME, ENV_NAME_RULE
from .secret_gateway import SecretSource, check_secret_source

#: Entries of ``secrets`` per sandbox (``rules/limits.ts``' ``secretEnvsPerSandbox``).
SECRET_ENVS_PER_SANDBOX: Final = 64


def check_secrets_map(check: Checker, path: Path, value: object) -> dict[str, SecretSource]:
    """``secrets``: environment variable name to secret name (or ``SecretRef``), at most 64."""
    if not check_mapping(check, path, value):
        return {}
    secrets: dict[str, SecretSource] = {}
    for name, source in items(value):
        if not matches(ENV_NAME, name):
            check.add(path + (name,), f"variable name {ENV_NAME_RULE}")
        elif check_secret_source(check, path + (name,), source):
            secrets[name] = source  # type: ignore[assignment]
    if len(list(items(value))) > SECRET_ENVS_PER_SANDBOX:
        check.add(path, f"at most {SECRET_ENVS_PER_SANDBOX} entries")
    return secrets
