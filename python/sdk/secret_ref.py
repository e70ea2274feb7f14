"""``SecretRef``: a reference to a secret in the secret store, an alternative to a bare secret name."""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Checker, check_string
from ._rules import REGION, REGION_RULE, SECRET_NAME, SECRET_NAME_RULE


@dataclass(frozen=True, init=False)
class SecretRef:
    """Names a secret in a given store region, where a bare name would use the caller's default store.

    Example::

        SecretGateway(
            "https://api.example",
            headers={"x-api-key": SecretRef("llm-key", region="eu-west-1")},
            allow=[("POST", "/v1/messages")],
        )

    Raises ``InvalidArgumentException`` (field ``name`` or ``region``) at construction.
    """

    #: Secret name or ARN; never its value.
    name: str
    #: Region of the store holding it; the caller's default when None.
    region: str | None

    def __init__(self, name: str, region: str | None = None) -> None:
        check = Checker("SecretRef")
        check_string(check, ("name",), name, SECRET_NAME, SECRET_NAME_RULE)
        if region is not None:
            check_string(check, ("region",), region, REGION, REGION_RULE)
        check.done()
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "region", region)
