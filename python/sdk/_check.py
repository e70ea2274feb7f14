"""Checking constructor arguments: every failure becomes an ``InvalidArgumentException`` whose message
names the type, the field and the rule, never the value (a misplaced secret must not leak through an
error), like the TypeScript SDK's ``parseOptions``.

A ``Checker`` collects issues in the order the TypeScript schemas report them (fields in declaration
order, then the checks that span several fields); the first issue's path is the exception's ``field``.
``from_validation_error`` does the same for a pydantic ``ValidationError``.
"""

from __future__ import annotations

import math
import re
from typing import Final, Iterator, Mapping, NoReturn, Sequence

from pydantic import ValidationError

from .errors import InvalidArgumentException

#: Path of a field: option names (str) and list indexes (int).
Path = tuple[str | int, ...]

#: Error code of an allow rule that no request could satisfy (as the daemon words it).
ALLOW_PATH_CODE: Final = "invalid_allow_path"


def format_field(path: Sequence[str | int]) -> str:
    """``("allow", 2, 1)`` becomes ``allow[2][1]``; ``("headers", "x-api-key")`` becomes
    ``headers.x-api-key``."""
    out = ""
    for i, key in enumerate(path):
        out += f"[{key}]" if isinstance(key, int) else (key if i == 0 else f".{key}")
    return out


class Checker:
    """Collects the issues of one construction and raises them together."""

    def __init__(self, type_name: str, prefix: Path = ()) -> None:
        self.type_name = type_name
        self.prefix = prefix
        self.issues: list[tuple[Path, str, str]] = []

    def add(self, path: Path, message: str, code: str = "invalid_argument") -> None:
        """Records that the field at ``path`` breaks the rule ``message``."""
        self.issues.append((self.prefix + path, message, code))

    @property
    def ok(self) -> bool:
        """True while no issue was recorded."""
        return not self.issues

    def count(self) -> int:
        """Number of issues so far (to tell whether a nested check added any)."""
        return len(self.issues)

    def done(self) -> None:
        """Raises the collected issues, if any."""
        if self.issues:
            raise_issues(self.type_name, self.issues)


def raise_issues(type_name: str, issues: Sequence[tuple[Path, str, str]]) -> NoReturn:
    """Raises ``InvalidArgumentException`` listing up to five issues; ``field`` is the first one's."""
    parts = []
    for path, message, _ in issues[:5]:
        at = format_field(path)
        parts.append(message if at == "" else f"{at}: {message}")
    more = f"; and {len(issues) - 5} more" if len(issues) > 5 else ""
    code = ALLOW_PATH_CODE if any(c == ALLOW_PATH_CODE for _, _, c in issues) else "invalid_argument"
    field = format_field(issues[0][0])
    raise InvalidArgumentException(f"{type_name}: {'; '.join(parts)}{more}", field or None, code)


def fail(type_name: str, path: Path, message: str) -> NoReturn:
    """Raises a single issue."""
    raise_issues(type_name, [(path, message, "invalid_argument")])


def from_validation_error(type_name: str, error: ValidationError, prefix: Path = ()) -> NoReturn:
    """Turns a pydantic ``ValidationError`` into ``InvalidArgumentException`` naming the fields and the
    rules; pydantic's ``input`` (which could be a secret) is never used."""
    issues: list[tuple[Path, str, str]] = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        path = tuple(p for p in item["loc"] if isinstance(p, (str, int)))
        issues.append((prefix + path, str(item["msg"]).lower(), "invalid_argument"))
    raise_issues(type_name, issues or [(prefix, "invalid", "invalid_argument")])


# --- plain checks shared by the types --------------------------------------------------------------


def type_name_of(value: object) -> str:
    """What kind of value was given, in words that never include the value."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def expected(kind: str, value: object) -> str:
    """The message of a value of the wrong kind."""
    return f"must be {kind}, got {type_name_of(value)}"


def is_number(value: object) -> bool:
    """A finite int or float, never a bool (TypeScript's ``number``)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def is_whole(value: object) -> bool:
    """An int, or a float with a whole value (TypeScript's ``Number.isInteger``)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())


def matches(pattern: re.Pattern[str], value: object) -> bool:
    """True for a string the whole of which matches (JavaScript's anchored ``test``)."""
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def check_string(
    check: Checker, path: Path, value: object, pattern: re.Pattern[str] | None = None, rule: str = ""
) -> bool:
    """A string (matching ``pattern`` when given); records an issue and returns False otherwise."""
    if not isinstance(value, str):
        check.add(path, expected("a string", value))
        return False
    if pattern is not None and pattern.fullmatch(value) is None:
        check.add(path, rule)
        return False
    return True


def check_int(
    check: Checker,
    path: Path,
    value: object,
    low: int,
    high: int,
    rule: str | None = None,
    high_rule: str | None = None,
) -> bool:
    """A whole number in ``low..high``; the messages are ``rule`` when given, else a word each
    (``high_rule`` for one above ``high``)."""
    if not is_number(value):
        check.add(path, expected("a number", value))
        return False
    if not is_whole(value):
        check.add(path, rule or "must be a whole number")
        return False
    number = whole(value)
    if number < low:
        check.add(path, rule or f"must be at least {low}")
        return False
    if number > high:
        check.add(path, rule or high_rule or f"must be at most {high}")
        return False
    return True


def check_bool(check: Checker, path: Path, value: object) -> bool:
    """A bool; records an issue otherwise."""
    if not isinstance(value, bool):
        check.add(path, expected("a bool", value))
        return False
    return True


def check_mapping(check: Checker, path: Path, value: object) -> bool:
    """A mapping with string keys; records an issue otherwise."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        check.add(path, expected("a mapping of strings", value))
        return False
    return True


def check_list(check: Checker, path: Path, value: object) -> bool:
    """A list or tuple (never a string); records an issue otherwise."""
    if not isinstance(value, (list, tuple)):
        check.add(path, expected("a list", value))
        return False
    return True


def items(value: object) -> Iterator[tuple[str, object]]:
    """The items of a checked mapping, typed for the checks."""
    assert isinstance(value, Mapping)
    for key, item in value.items():
        yield str(key), item


def printable_text(maximum: int) -> re.Pattern[str]:
    """Printable text without control characters, 1-``maximum`` characters long."""
    return re.compile(f"[^\\u0000-\\u001f\\u007f-\\u009f]{{1,{maximum}}}")


def whole(value: object) -> int:
    """A checked whole number as an int."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    raise TypeError("not a number")
