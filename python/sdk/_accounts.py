"""The accounts sandbox code runs as (``protocol/sandbox-accounts.ts``): ``"user"`` (uid 1000, home
``/home/user``, the default) or ``"root"`` (uid 0 of the sandbox's own user namespace, with Docker's
default capabilities, home ``/root``). A command carries its account as ``user`` in its start request; a
files call as ``&user=root`` in its query or ``"user": "root"`` in its JSON body. The user's account is
never sent: a call as the user is sent as it always was."""

from __future__ import annotations

from typing import Final, Literal, Mapping

from .errors import InvalidArgumentException

#: An account sandbox code runs as.
Account = Literal["user", "root"]

#: The rule a ``user`` argument breaks (``sandboxAccountSchema``'s message in TypeScript).
ACCOUNT_RULE: Final = "must be 'user' or 'root'"

#: Each account's home in a sandbox (where E2B's relative paths resolve, in the shim).
ACCOUNT_HOMES: Final[Mapping[str, str]] = {"user": "/home/user", "root": "/root"}


def is_account(value: object) -> bool:
    """True for ``"user"`` and ``"root"`` (strings only)."""
    return isinstance(value, str) and value in ACCOUNT_HOMES


def check_account(value: object, call: str) -> Account:
    """A ``user`` argument, checked before any call.

    :raises InvalidArgumentException: for anything but ``"user"`` or ``"root"`` (field ``user``)
    """
    if value == "root" and isinstance(value, str):
        return "root"
    if not is_account(value):
        raise InvalidArgumentException(f"{call}: user: {ACCOUNT_RULE}", "user")
    return "user"


def account_query(account: Account) -> str:
    """``&user=root`` for a root call, else nothing."""
    return "&user=root" if account == "root" else ""


def account_field(account: Account) -> dict[str, str]:
    """``{"user": "root"}`` for a root call's JSON body, else nothing."""
    return {"user": "root"} if account == "root" else {}
