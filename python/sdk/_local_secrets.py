"""The local secret backend of the embedded default (``sdk/secret-store/local-secrets-backend.ts``): one
JSON object of name to value in a file readable and writable only by its owner (mode 0600 in a 0700
folder), the same file and format as the TypeScript SDK. Writes replace the file atomically."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Callable

from .errors import SandboxException, SecretNotFoundException


def default_secret_file() -> str:
    """``SDK_SECRET_STORE_FILE``, else ``~/.sdk/secrets.json``."""
    explicit = os.environ.get("SDK_SECRET_STORE_FILE")
    return explicit if explicit is not None else str(Path.home() / ".sdk" / "secrets.json")


class LocalSecretsBackend:
    """Secrets in a local file. Values pass through, never into a message."""

    def __init__(self, file: str | None = None) -> None:
        self.file = file if file is not None else default_secret_file()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalSecretsBackend(file={self.file!r})"

    def read(self, name: str) -> str:
        value = self._load().get(name)
        if value is None:
            raise SecretNotFoundException(f"secret {name} does not exist")
        return value

    def create(self, name: str, value: str) -> None:
        def edit(secrets: dict[str, str]) -> None:
            if name in secrets:
                raise SandboxException(f"secret {name} already exists; use update")
            secrets[name] = value

        self._change(edit)

    def update(self, name: str, value: str) -> None:
        def edit(secrets: dict[str, str]) -> None:
            if name not in secrets:
                raise SecretNotFoundException(f"secret {name} does not exist")
            secrets[name] = value

        self._change(edit)

    def _load(self) -> dict[str, str]:
        loaded: object = None
        try:
            with open(self.file, encoding="utf-8") as source:
                loaded = json.load(source)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            pass  # raised below, without the file's text as the exception's context
        if isinstance(loaded, dict) and all(isinstance(v, str) for v in loaded.values()):
            return {str(k): v for k, v in loaded.items()}
        raise SandboxException("the local secret store file cannot be read")

    def _change(self, edit: Callable[[dict[str, str]], None]) -> None:
        with self._lock:
            secrets = self._load()
            edit(secrets)
            folder = os.path.dirname(self.file)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            temporary = f"{self.file}.{os.getpid()}.tmp"
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump(secrets, out, separators=(",", ":"), ensure_ascii=False)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.file)
