"""``SecretText``: a credential (a sandbox's access token) held so that no display of the object holding
it shows it: ``repr``, ``str``, f-strings, ``vars()``/``__dict__`` dumps (``json.dumps(obj,
default=lambda o: getattr(o, "__dict__", str(o)))``), ``pprint`` and pickling (refused). Mirrors
``gateway/secret-value.ts``."""

from __future__ import annotations

from typing import Any, NoReturn

_MASK = "[secret]"


class SecretText:
    """A text only :meth:`reveal` gives: it has no ``__dict__`` and shows itself as ``[secret]``.

    Example::

        token = SecretText("tok-123")
        f"{token}"      # '[secret]'
        token.reveal()  # 'tok-123'
    """

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "_text", text)

    def reveal(self) -> str:
        """The text itself: send it as a header, never log, format or store it."""
        text: str = object.__getattribute__(self, "_text")
        return text

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("a SecretText cannot be changed")

    def __repr__(self) -> str:
        return f"SecretText({_MASK!r})"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, spec: str) -> str:
        return _MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretText) and other.reveal() == self.reveal()

    def __hash__(self) -> int:
        return hash((SecretText, self.reveal()))

    def __reduce__(self) -> NoReturn:
        raise TypeError("a SecretText is not pickled: the pickle would hold the secret in clear")

    def __copy__(self) -> SecretText:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SecretText:
        return self
