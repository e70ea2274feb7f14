"""A method that is one function on the class and another on an instance: ``Sandbox.connect(sandbox_id)``
connects a new handle, ``sbx.connect()`` resumes this one (SPEC "SDK operations")."""

from __future__ import annotations

from types import MethodType
from typing import Any, Callable, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

O = TypeVar("O")
P = TypeVar("P")
PC = ParamSpec("PC")
PI = ParamSpec("PI")
RC = TypeVar("RC")
RI = TypeVar("RI")


class hybridmethod(Generic[O, PC, RC, PI, RI]):
    """``on_class`` when looked up on the class (given the class), ``on_instance`` on an instance (given
    the instance and its own arguments: ``sbx.get_metrics(start=...)``)."""

    def __init__(
        self, on_class: Callable[Concatenate[type[O], PC], RC], on_instance: Callable[Concatenate[O, PI], RI]
    ) -> None:
        self._on_class = on_class
        self._on_instance = on_instance
        self.__doc__ = on_class.__doc__

    @overload
    def __get__(self, obj: None, owner: type[O]) -> Callable[PC, RC]: ...

    @overload
    def __get__(self, obj: O, owner: type[O] | None = None) -> Callable[PI, RI]: ...

    def __get__(self, obj: O | None, owner: type[O] | None = None) -> Callable[..., Any]:
        if obj is None:
            return cast(Callable[PC, RC], MethodType(self._on_class, owner))
        return cast(Callable[PI, RI], MethodType(self._on_instance, obj))
