"""``SecretStore`` (SPEC "Secret store"): creates and updates secrets whose value is the whole header value.
With a ``region`` it is Secrets Manager under the caller's own credentials (boto3, imported on first use);
without one it is the local file of the embedded default, the same file and format as the TypeScript
SDK (``SDK_SECRET_STORE_FILE``, else ``~/.sdk/secrets.json``). Construction makes no call. Mirrors
``sdk/secret-store/secret-store.ts``."""

from __future__ import annotations

from typing import Protocol

from ._aws_secrets import AwsSecretsBackend
from ._check import Checker, check_string
from ._local_secrets import LocalSecretsBackend
from ._rules import REGION, REGION_RULE, SECRET_NAME, SECRET_NAME_RULE
from ._urls import http_url_problem


class SecretBackend(Protocol):
    """Where values live; a missing secret is ``SecretNotFoundException``."""

    def read(self, name: str) -> str: ...
    def create(self, name: str, value: str) -> None: ...
    def update(self, name: str, value: str) -> None: ...


def _check_name(call: str, name: object) -> str:
    check = Checker(call)
    check_string(check, ("name",), name, SECRET_NAME, SECRET_NAME_RULE)
    check.done()
    return str(name)


def _check_value(call: str, value: object) -> str:
    check = Checker(call)
    if not isinstance(value, str):
        check.add(("value",), "must be a string")
    elif value == "":
        check.add(("value",), "must not be empty")
    check.done()
    return str(value)


class SecretStore:
    """A secret store. Values are never in ``repr``, a log or an exception message.

    Example::

        store = SecretStore(region="us-east-1")
        store.create("vendor-b-key", "sk-...")          # the whole header value
        store.update("llm-bearer", "Bearer sk-...")

    :param region: Secrets Manager's region; without it, the local file
    :param endpoint: an endpoint override (an AWS-compatible server, for tests); with ``region`` only
    :param file: the local backend's file, an absolute path (without ``region``)
    :raises InvalidArgumentException: for a malformed option, at construction (no call is made)
    """

    def __init__(self, *, region: str | None = None, endpoint: str | None = None, file: str | None = None) -> None:
        check = Checker("SecretStore")
        if region is not None:
            check_string(check, ("region",), region, REGION, REGION_RULE)
        if endpoint is not None and check_string(check, ("endpoint",), endpoint):
            problem = http_url_problem(endpoint)
            if problem is not None:
                check.add(("endpoint",), problem)
        if file is not None and (not isinstance(file, str) or not file.startswith("/")):
            check.add(("file",), "must be an absolute path")
        check.done()
        #: The region, or None for the local backend.
        self.region = region
        self._backend: SecretBackend = (
            LocalSecretsBackend(file) if region is None else AwsSecretsBackend(region, endpoint)
        )

    def __repr__(self) -> str:
        return f"SecretStore(region={self.region!r})"

    def create(self, name: str, value: str) -> None:
        """Stores a new secret (an existing one is a ``SandboxException``: use :meth:`update`)."""
        self._backend.create(_check_name("SecretStore.create", name), _check_value("SecretStore.create", value))

    def update(self, name: str, value: str) -> None:
        """Replaces a secret's value.

        :raises SecretNotFoundException: when there is no such secret
        """
        self._backend.update(_check_name("SecretStore.update", name), _check_value("SecretStore.update", value))

    def get_value(self, name: str) -> str:
        """The secret's value (``SecretCache`` reads through this).

        :raises SecretNotFoundException: when there is no such secret
        """
        return self._backend.read(_check_name("SecretStore.get_value", name))
