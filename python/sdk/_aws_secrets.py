"""Secrets Manager as a secret backend with the caller's own credentials (boto3's standard chain),
mirroring ``sdk/secret-store/aws-secrets-backend.ts``. boto3 is imported and its client made on first use,
so importing ``sdk`` loads no AWS code and constructing a store makes no call."""

from __future__ import annotations

import importlib
import threading
from typing import Any, Callable

from .errors import SandboxException, SdkException, SecretNotFoundException


class AwsSecretsBackend:
    """Secrets in Secrets Manager of ``region`` (``endpoint`` overrides it: an AWS-compatible server)."""

    def __init__(self, region: str, endpoint: str | None = None) -> None:
        self.region = region
        self.endpoint = endpoint
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"AwsSecretsBackend(region={self.region!r}, endpoint={self.endpoint!r})"

    def read(self, name: str) -> str:
        out = self._call(name, lambda client: client.get_secret_value(SecretId=name))
        value = out.get("SecretString") if isinstance(out, dict) else None
        if not isinstance(value, str):
            raise SecretNotFoundException(f"secret {name} has no string value")
        return value

    def create(self, name: str, value: str) -> None:
        self._call(name, lambda client: client.create_secret(Name=name, SecretString=value))

    def update(self, name: str, value: str) -> None:
        self._call(name, lambda client: client.put_secret_value(SecretId=name, SecretString=value))

    def _load(self) -> Any:
        with self._lock:
            if self._client is None:
                boto3 = importlib.import_module("boto3")
                extra = {} if self.endpoint is None else {"endpoint_url": self.endpoint}
                self._client = boto3.client("secretsmanager", region_name=self.region, **extra)
            return self._client

    def _call(self, name: str, send: Callable[[Any], Any]) -> Any:
        """Runs a call; AWS errors become SDK exceptions naming the secret, never carrying AWS text."""
        try:
            client = self._load()
        except ImportError:
            client = None
        if client is None:
            raise SandboxException("SecretStore(region=...) needs boto3 (pip install 'sdk[aws]')")
        kind = "unknown error"
        try:
            return send(client)
        except SdkException:
            raise
        except Exception as error:  # botocore's ClientError or BotoCoreError; its text is not kept
            response = getattr(error, "response", None)
            code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
            kind = code if isinstance(code, str) else type(error).__name__
        if kind == "ResourceNotFoundException":
            raise SecretNotFoundException(f"secret {name} does not exist")
        raise SandboxException(f"the secret store refused the call for {name} ({kind})")
