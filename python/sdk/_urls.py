"""An approximation of the WHATWG URL parser's verdict on an http(s) URL, for options that take one (as
zod's ``z.url({ protocol: /^https?$/ })`` checks them in the TypeScript SDK)."""

from __future__ import annotations

import re
from typing import Final

from ._upstream import _ends_in_number, _Invalid, _ipv6_groups, _parse_ipv4

_FORBIDDEN_HOST: Final = frozenset(" #%/:<>?@[\\]^|\x7f") | frozenset(chr(c) for c in range(0x20))


def http_url_problem(text: str) -> str | None:
    """``"must be an http(s) URL"`` unless ``text`` is an ``http://`` or ``https://`` URL with a valid host
    and port."""
    found = re.match(r"https?://", text, re.IGNORECASE)
    if found is None:
        return "must be an http(s) URL"
    rest = text[found.end() :].lstrip("/\\")
    authority = re.split(r"[/?#\\]", rest, maxsplit=1)[0]
    host_port = authority.rsplit("@", 1)[-1]
    if host_port.startswith("["):
        end = host_port.find("]")
        host, port = host_port[: end + 1], host_port[end + 1 :]
        if end < 0 or _ipv6_groups(host[1:-1]) is None or (port and not port.startswith(":")):
            return "must be an http(s) URL"
        port = port[1:]
    else:
        host, _, port = host_port.partition(":")
        if host == "" or any(c in _FORBIDDEN_HOST for c in host):
            return "must be an http(s) URL"
        try:
            host.encode("idna")
            if _ends_in_number(host.lower()):
                _parse_ipv4(host.lower())
        except (UnicodeError, _Invalid):
            return "must be an http(s) URL"
    if port and (not port.isdigit() or int(port) > 65535):
        return "must be an http(s) URL"
    return None
