"""Upstream rules of SPEC "SecretGateway" (``gateway/upstream.ts``, ``gateway/address-rules.ts``):
``https://host`` or ``https://host:port``, no path, query, user or fragment, and never a host the
gateway refuses to connect to. IP literals are read the way a WHATWG URL parser reads them (so
``https://0x7f.1`` and ``https://2130706433`` are loopback) and the origin is canonicalized alike."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Final

_SHAPE: Final = re.compile(r"https://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?", re.IGNORECASE)
_LABEL: Final = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_METADATA: Final = ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")


@dataclass(frozen=True)
class Upstream:
    """A checked upstream: canonical origin (default port dropped), host name or bare IP, port."""

    origin: str
    hostname: str
    port: int


class _Invalid(Exception):
    pass


#: The digits of an IPv4 part in each base the WHATWG parser reads.
_DIGITS: Final = {16: re.compile(r"[0-9A-Fa-f]+"), 8: re.compile(r"[0-7]+"), 10: re.compile(r"[0-9]+")}


def _ipv4_number(part: str) -> int:
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if digits == "":
        return 0
    if _DIGITS[base].fullmatch(digits) is None:  # never int()'s sign, underscores or spaces
        raise _Invalid
    return int(digits, base)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last != "" and last.isdigit():
        return True
    try:
        _ipv4_number(last)
    except _Invalid:
        return False
    return last != ""


def _parse_ipv4(host: str) -> str:
    """The WHATWG IPv4 parser: 1-4 decimal, octal or hex parts, the last filling the remaining bytes."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4 or "" in parts:
        raise _Invalid
    numbers = [_ipv4_number(part) for part in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise _Invalid
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(value))


def _serialize_ipv6(groups: list[int]) -> str:
    """WHATWG IPv6 serialization: lower-case hex, the first longest run of two or more zeros as ``::``."""
    best_start, best_len, start = -1, 1, -1
    for i in range(9):
        if i < 8 and groups[i] == 0:
            start = i if start < 0 else start
        elif start >= 0:
            if i - start > best_len:
                best_start, best_len = start, i - start
            start = -1
    if best_start < 0:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:best_start])
    tail = ":".join(f"{g:x}" for g in groups[best_start + best_len :])
    return f"{head}::{tail}"


def _ipv6_groups(text: str) -> list[int] | None:
    try:
        packed = ipaddress.IPv6Address(text).packed
    except ValueError:
        return None
    return [packed[i] * 256 + packed[i + 1] for i in range(0, 16, 2)]


def _classify_ipv4(value: int) -> str:
    metadata = {int(ipaddress.IPv4Address(a)) for a in _METADATA if "." in a}
    first, second = value >> 24, (value >> 16) & 0xFF
    if value in metadata:
        return "metadata"
    if first == 0:
        return "unspecified"
    if first == 127:
        return "loopback"
    if first == 169 and second == 254:
        return "link_local"
    if 224 <= first <= 239:
        return "multicast"
    if value == 0xFFFFFFFF:
        return "broadcast"
    return "allowed"


def _embedded_ipv4(g: list[int]) -> int | None:
    v4 = g[6] * 65536 + g[7]
    if all(x == 0 for x in g[:5]) and g[5] == 0xFFFF:
        return v4
    if all(x == 0 for x in g[:4]) and g[4] == 0xFFFF and g[5] == 0:
        return v4
    if all(x == 0 for x in g[:6]) and v4 > 1:
        return v4
    if g[0] == 0x64 and g[1] == 0xFF9B and all(x == 0 for x in g[2:6]):
        return v4
    if g[0] == 0x64 and g[1] == 0xFF9B and g[2] == 1:
        return v4
    if g[0] == 0x2002:
        return g[1] * 65536 + g[2]
    return None


def classify_address(address: str) -> str:
    """The class of an IP address: ``loopback``, ``unspecified``, ``link_local``, ``multicast``,
    ``broadcast``, ``metadata`` (refused), or ``allowed``; also for IPv4 embedded in IPv6."""
    if re.fullmatch(r"[0-9.]+", address):
        try:
            return _classify_ipv4(int(ipaddress.IPv4Address(address)))
        except ValueError:
            return "unspecified"
    groups = _ipv6_groups(address)
    if groups is None:
        return "unspecified"
    if any(groups == _ipv6_groups(a) for a in _METADATA if ":" in a):
        return "metadata"
    embedded = _embedded_ipv4(groups)
    if embedded is not None and _classify_ipv4(embedded) != "allowed":
        return _classify_ipv4(embedded)
    if all(x == 0 for x in groups):
        return "unspecified"
    if all(x == 0 for x in groups[:7]) and groups[7] == 1:
        return "loopback"
    if groups[0] & 0xFFC0 == 0xFE80:
        return "link_local"
    if groups[0] & 0xFF00 == 0xFF00:
        return "multicast"
    return "allowed"


def is_localhost_name(hostname: str) -> bool:
    """True for names that resolve to loopback by convention (RFC 6761 and Debian's /etc/hosts)."""
    name = hostname.lower().removesuffix(".")
    return (
        name == "localhost"
        or name.endswith(".localhost")
        or name in ("localhost.localdomain", "ip6-localhost", "ip6-loopback")
    )


def parse_upstream(text: object) -> Upstream | str:
    """The checked upstream, or why it is refused (the words of ``gateway/upstream.ts``)."""
    if not isinstance(text, str):
        return "must be a string"
    if not text[:8].lower() == "https://":
        return "must start with https://"
    shape = _SHAPE.fullmatch(text)
    if shape is None:
        return "must be https://host or https://host:port, with no path, query, user or fragment"
    host, port_text = shape.group(1).lower(), (shape.group(2) or ":")[1:]
    try:
        if host.startswith("["):
            groups = _ipv6_groups(host[1:-1])
            if groups is None:
                raise _Invalid
            hostname, host = _serialize_ipv6(groups), f"[{_serialize_ipv6(groups)}]"
        elif _ends_in_number(host):
            hostname = host = _parse_ipv4(host)
        else:
            hostname = host
        port = 443 if port_text == "" else int(port_text)
        if port > 65535:
            raise _Invalid
    except _Invalid:
        return "is not a valid URL host"
    if port < 1:
        return "port must be 1-65535"
    if ":" in hostname or re.fullmatch(r"[0-9.]+", hostname):
        cls = classify_address(hostname)
        if cls != "allowed":
            return f"host must not be a {cls.replace('_', '-')} address"
    else:
        if len(hostname) > 253 or not all(_LABEL.fullmatch(label) for label in hostname.split(".")):
            return "host must be a DNS name of labels [a-z0-9-] (no leading or trailing hyphen) or an IP address"
        if is_localhost_name(hostname):
            return "host must not be localhost"
    origin = f"https://{host}" if port == 443 else f"https://{host}:{port}"
    return Upstream(origin, hostname, port)
