"""An approximation of the WHATWG URL parser's verdict on an http(s) URL, for options that take one (as
zod's ``z.url({ protocol: /^https?$/ })`` checks them in the TypeScript SDK)."""

from __future__ import annotations

import re
from encodings.idna import nameprep
from typing import Final
from unicodedata import category, combining
from urllib.parse import unquote

from ._upstream import _ends_in_number, _Invalid, _ipv6_groups, _parse_ipv4

_FORBIDDEN_HOST: Final = frozenset(" #%/:<>?@[\\]^|\x7f") | frozenset(chr(c) for c in range(0x20))
#: The label separators of a domain (UTS 46 maps the ideographic and full-width stops to ``.``).
_DOTS: Final = re.compile("[.\u3002\uff0e\uff61]")
#: Zero-width non-joiner and joiner: valid in a label only after a virama (combining class 9).
_JOINERS: Final = "\u200c\u200d"
_VIRAMA: Final = 9


def _unassigned(label: str) -> bool:
    """True when ``label`` holds a code point this Python's Unicode leaves unassigned (UTS 46 disallows
    them; Python's nameprep, of Unicode 3.2, lets them through)."""
    return any(category(c) == "Cn" for c in label)


def _domain_to_ascii(host: str) -> str:
    """The WHATWG host parser's domain to ASCII, approximated: the host percent-decoded, each label
    lower-cased (ASCII) or mapped (nameprep) and punycoded, without DNS length rules (the URL standard
    leaves them out: a label past 63 characters or an empty one is a valid URL host).

    :raises UnicodeError: for a label the mapping refuses, or an ``xn--`` label that is not punycode
    """
    domain = unquote(host, errors="replace")
    labels = []
    for label in _DOTS.split(domain):
        if label.isascii():
            label = label.lower()
        else:
            if any(c in _JOINERS and (i == 0 or combining(label[i - 1]) != _VIRAMA) for i, c in enumerate(label)):
                raise UnicodeError("a joiner out of place")  # UTS 46's CheckJoiners, roughly
            label = nameprep(label)
            if _unassigned(label) or (label != "" and category(label[0]).startswith("M")):
                raise UnicodeError("a code point Unicode does not assign, or a leading combining mark")
        if label.startswith("xn--"):  # punycode of a label already mapped
            decoded = label[4:].encode("ascii").decode("punycode")
            if decoded == "" or nameprep(decoded) != decoded or _unassigned(decoded):
                raise UnicodeError("not the punycode of a valid label")
        elif not label.isascii():
            label = "xn--" + label.encode("punycode").decode("ascii")
        labels.append(label)
    return ".".join(labels)


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
        try:
            ascii_host = _domain_to_ascii(host)
            if ascii_host == "" or any(c in _FORBIDDEN_HOST for c in ascii_host):
                return "must be an http(s) URL"
            if _ends_in_number(ascii_host):
                _parse_ipv4(ascii_host)
        except (UnicodeError, _Invalid):
            return "must be an http(s) URL"
    if port and (not port.isdigit() or int(port) > 65535):
        return "must be an http(s) URL"
    return None
