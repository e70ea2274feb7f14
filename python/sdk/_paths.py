"""Request-path, allow-rule and header-name rules of SPEC "SecretGateway" and "In-sandbox gateway
listener", step 1, as ``gateway/request-path.ts``, ``gateway/allow-rule.ts`` and
``gateway/header-rules.ts`` word them. Nothing here normalizes a path."""

from __future__ import annotations

from typing import Final, Sequence

_PATH_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@!$&'()*+,=/%"
)
_HEX: Final = frozenset("0123456789abcdefABCDEF")

#: Methods an allow rule may name (never CONNECT or TRACE).
ALLOWED_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")

#: Transport headers the gateway sets itself; a route may not inject them.
TRANSPORT_HEADERS: Final = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-authenticate",
        "proxy-connection",
        "expect",
        "http2-settings",
    }
)
_TOKEN_CHARS: Final = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _is_control(code: int) -> bool:
    return code <= 0x1F or 0x7F <= code <= 0x9F


def _check_segment(segment: str) -> str | None:
    if "%" not in segment:
        return "dot segment" if segment in (".", "..") else None
    raw = bytearray()
    i = 0
    while i < len(segment):
        if segment[i] == "%":
            raw.append(int(segment[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.append(ord(segment[i]))
            i += 1
    try:
        decoded = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return "segment is not valid UTF-8 once decoded"
    if decoded in (".", ".."):
        return "dot segment"
    for char in decoded:
        if _is_control(ord(char)):
            return "control character once decoded"
        if char in "/\\%;":
            return "encoded slash, backslash, percent or semicolon"
    return None


def request_path_problem(path: str) -> str | None:
    """Why a request path (without the query) breaks SPEC's path rules, or None: RFC 3986 path
    characters except ``;``, well-formed ``%XX``, no empty segment but the last, each segment decoded
    once valid UTF-8 with no control character, slash, backslash, percent or semicolon, and not ``.`` or
    ``..``."""
    if not path.startswith("/"):
        return "must start with /"
    for i, char in enumerate(path):
        if char not in _PATH_CHARS:
            return "character outside the allowed path characters"
        if char == "%" and (path[i + 1 : i + 2] not in _HEX or path[i + 2 : i + 3] not in _HEX):
            return "malformed percent escape"
    segments = path.split("/")
    for i, segment in enumerate(segments[1:], start=1):
        if segment == "":
            if i != len(segments) - 1:
                return "empty segment"
            continue
        problem = _check_segment(segment)
        if problem is not None:
            return problem
    return None


def base_path_problem(base_path: str) -> str | None:
    """Why ``base_path`` cannot be a base path (empty, or ``/segment[/segment…]`` without a trailing
    slash), or None."""
    if base_path == "":
        return None
    if base_path.endswith("/"):
        return "must not end with /"
    return request_path_problem(base_path)


def allow_rule_problem(method: str, path: str) -> str | None:
    """Why an allow rule is refused, or None. ``/v1/*`` matches every path starting with ``/v1/``; such a
    rule is satisfiable exactly when its prefix is itself an acceptable path."""
    if method not in ALLOWED_METHODS:
        return f"method must be one of {', '.join(ALLOWED_METHODS)}"
    problem = request_path_problem(path[:-1] if path.endswith("/*") else path)
    return None if problem is None else f"no request could match this path: {problem}"


def header_key(name: str) -> str:
    """The key two header names share when a proxy could treat them as one: lower case, ``_`` and ``.``
    folded to ``-``."""
    return name.lower().replace("_", "-").replace(".", "-")


def header_name_problem(name: str) -> str | None:
    """Why a header name is refused (not an RFC 9110 token, or a transport header), or None."""
    if name == "" or any(char not in _TOKEN_CHARS for char in name):
        return "must be an RFC 9110 token"
    if header_key(name) in TRANSPORT_HEADERS:
        return "is a transport header the gateway sets itself"
    return None


def duplicate_header_names(names: Sequence[str]) -> list[str]:
    """Names that collide with an earlier name of the list once compared by ``header_key``."""
    seen: set[str] = set()
    duplicates = []
    for name in names:
        key = header_key(name)
        if key in seen:
            duplicates.append(name)
        seen.add(key)
    return duplicates
