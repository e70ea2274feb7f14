"""``EgressPolicy``: where a sandbox's code may connect (issue 27), with the rules of
``rules/egress-policy.ts``.

``open`` reaches every network but what ``deny`` names, ``closed`` reaches none, ``allowlist`` only what
``allow`` names and ``deny`` does not. An entry is a domain (``pypi.org``; ``*.npmjs.org`` for every name
under it, never the apex) or an IPv4 address or CIDR (``10.1.2.0/24``). Entries are normalised as
TypeScript normalises them: surrounding whitespace and one trailing dot dropped, lower case, an address
as its ``/32``, a CIDR as its network (host bits cleared), and a repeat in ``allow`` or ``deny`` dropped
(the first kept). Domains are decided on the name a connection
carries (TLS SNI, the HTTP Host, the DNS question), CIDRs on the destination address; whatever the
policy, loopback, link-local, metadata, multicast and the host's own addresses stay unreachable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Mapping, Sequence, cast

from ._check import Checker, Path, check_list, expected, fail
from ._wire import EGRESS_MODES, EgressMode, EgressPolicyWire

#: Most entries ``allow`` and ``deny`` hold together (``MAX_EGRESS_ENTRIES``).
MAX_EGRESS_ENTRIES: Final = 256

#: The options of an egress policy, in the order the rules check them.
_OPTIONS: Final = ("mode", "allow", "deny")

_LABEL: Final = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_IPV4: Final = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})(?:/([0-9]{1,2}))?")
_OCTET: Final = re.compile(r"0|[1-9][0-9]{0,2}")  # no leading zero: "010" reads as octal to some tools
_PREFIX_SUFFIX: Final = re.compile(r"/[0-9]+\Z")
#: What looks like IPv6 (hex digits and colons, an optional prefix); it must hold two colons too.
_IPV6: Final = re.compile(r"[0-9a-f:]*::?[0-9a-f:]*(?:/[0-9]+)?")
_DIGITS: Final = re.compile(r"[0-9]+")
#: What JavaScript's ``String.prototype.trim`` drops (Python's ``str.strip()`` drops a slightly other set).
_JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_IPV6_RULE: Final = "IPv6 is not routed to sandboxes: give IPv4 addresses or domains"
_SHAPE_RULE: Final = "is a domain or an IPv4 address or CIDR, without a scheme, port or path"
_IPV4_RULE: Final = "is not an IPv4 address or CIDR"
_NUMBERS_RULE: Final = "is not an IPv4 address or a domain name"
_WILDCARD_RULE: Final = 'a wildcard may only be a leading "*."'
_DOMAIN_RULE: Final = "is not a domain name"
_LABEL_RULE: Final = 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'
_MODE_RULE: Final = f"must be one of {', '.join(EGRESS_MODES)}"


def _ipv4_number(text: str) -> int | None:
    """An IPv4 address (no prefix) as a 32-bit number, or None."""
    found = _IPV4.fullmatch(text)
    if found is None or found.group(5) is not None:
        return None
    octets = found.groups()[:4]
    if not all(_OCTET.fullmatch(o) is not None and int(o) <= 255 for o in octets):
        return None
    value = 0
    for octet in octets:
        value = value * 256 + int(octet)
    return value


def _dotted(value: int) -> str:
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def _js_length(text: str) -> int:
    """JavaScript's ``length`` of ``text``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def normalise_entry(raw: str) -> str | tuple[None, str]:
    """One entry normalised (``parseEgressEntry``), or ``(None, rule)`` naming why it is not one; the
    rule never contains the entry."""
    text = raw.strip(_JS_WHITESPACE).lower()
    if text.endswith("."):
        text = text[:-1]
    if _IPV6.fullmatch(text) is not None and text.count(":") >= 2:
        return None, _IPV6_RULE
    found = _IPV4.fullmatch(text)
    if ":" in text or ("/" in text and found is None):
        return None, _SHAPE_RULE
    if found is not None:
        address = _ipv4_number(_PREFIX_SUFFIX.sub("", text))
        digits = found.group(5)
        prefix = 32 if digits is None else int(digits)
        # no leading zero in the prefix either (``/08``)
        if address is None or prefix > 32 or (digits is not None and len(digits) == 2 and digits[0] == "0"):
            return None, _IPV4_RULE
        size = 2 ** (32 - prefix)
        return f"{_dotted(address // size * size)}/{prefix}"
    wildcard = text.startswith("*.")
    suffix = text[2:] if wildcard else text
    if "*" in suffix:
        return None, _WILDCARD_RULE
    if len(suffix) == 0 or _js_length(suffix) > 253:
        return None, _DOMAIN_RULE
    labels = suffix.split(".")
    if not all(_LABEL.fullmatch(label) is not None for label in labels):
        return None, _LABEL_RULE
    # A last label of digits is no top-level domain: a mistyped address (1.2.3), not a name.
    if _DIGITS.fullmatch(labels[-1]) is not None:
        return None, _NUMBERS_RULE
    return f"*.{suffix}" if wildcard else suffix


def _entries(check: Checker, path: Path, value: object) -> tuple[str, ...]:
    """``allow`` or ``deny``: None (none) or a list of entries, each normalised, repeats dropped (the
    first kept, as TypeScript's ``unique``); issues go to ``check``."""
    if value is None:
        return ()
    if not check_list(check, path, value):
        return ()
    normal: list[str] = []
    for i, raw in enumerate(cast(Sequence[object], value)):
        if not isinstance(raw, str):
            check.add((*path, i), expected("a string", raw))
            continue
        entry = normalise_entry(raw)
        if isinstance(entry, tuple):
            check.add((*path, i), entry[1])
        else:
            normal.append(entry)
    return tuple(dict.fromkeys(normal))


def _check_policy(
    check: Checker, path: Path, mode: object, allow: object, deny: object, unknown: Sequence[object] = ()
) -> tuple[EgressMode, tuple[str, ...], tuple[str, ...]] | None:
    """The rules of ``egressPolicySchema``, issues under ``path``, in zod's order: each field, then the
    ``unknown`` keys of a mapping, then (when every field passed: an unknown key does not stop it) the
    count of distinct entries and the combinations with ``mode``. Returns the checked fields, or None
    after an issue."""
    before = check.count()
    if not isinstance(mode, str) or mode not in EGRESS_MODES:
        check.add((*path, "mode"), _MODE_RULE)
    allowed = _entries(check, (*path, "allow"), allow)
    denied = _entries(check, (*path, "deny"), deny)
    fields_passed = check.count() == before
    for key in unknown:
        check.add((*path, key) if isinstance(key, str) else path, "is not an option (mode, allow, deny)")
    if fields_passed:
        if len(allowed) + len(denied) > MAX_EGRESS_ENTRIES:
            check.add(path, f"at most {MAX_EGRESS_ENTRIES} entries in allow and deny")
        if mode != "allowlist" and allowed:
            check.add((*path, "allow"), "is for mode 'allowlist' only")
        if mode == "closed" and denied:
            check.add((*path, "deny"), "means nothing with mode 'closed'")
    return None if check.count() != before else (cast(EgressMode, mode), allowed, denied)


@dataclass(frozen=True, init=False)
class EgressPolicy:
    """Where the sandbox's code may connect: ``mode`` ``open`` (everything but ``deny``), ``closed``
    (nothing) or ``allowlist`` (only ``allow``, minus ``deny``). Entries are domains (``pypi.org``),
    leading wildcards (``*.npmjs.org``: every name under it, not the apex) or IPv4 addresses and CIDRs
    (``10.1.2.0/24``), at most 256 distinct in ``allow`` and ``deny`` together; IPv6 is not routed to
    sandboxes. They are kept normalised (lower case, no trailing dot, ``1.2.3.4`` as ``1.2.3.4/32``, a CIDR
    as its network, repeats dropped). ``allow`` is for mode ``allowlist`` only, and ``deny`` means
    nothing with ``closed``.

    Example: ``EgressPolicy("allowlist", allow=["pypi.org", "*.pythonhosted.org"], deny=["10.0.0.0/8"])``

    :raises InvalidArgumentException: naming the field (``mode``, ``allow[2]``, ``deny``) and the rule,
        never the value
    """

    #: ``open``, ``closed`` or ``allowlist``.
    mode: EgressMode
    #: What mode ``allowlist`` reaches, normalised.
    allow: tuple[str, ...]
    #: What is never reached, normalised.
    deny: tuple[str, ...]

    def __init__(
        self, mode: EgressMode, allow: Sequence[str] | None = (), deny: Sequence[str] | None = ()
    ) -> None:
        check = Checker("EgressPolicy")
        checked = _check_policy(check, (), mode, allow, deny)
        check.done()
        assert checked is not None
        object.__setattr__(self, "mode", checked[0])
        object.__setattr__(self, "allow", checked[1])
        object.__setattr__(self, "deny", checked[2])

    @classmethod
    def _of(cls, wire: EgressPolicyWire) -> EgressPolicy:
        """The policy a control plane answered (already normalised: taken as it is)."""
        policy = object.__new__(cls)
        object.__setattr__(policy, "mode", wire.mode)
        object.__setattr__(policy, "allow", tuple(wire.allow))
        object.__setattr__(policy, "deny", tuple(wire.deny))
        return policy

    def _wire(self) -> EgressPolicyWire:
        """The policy on the wire."""
        return EgressPolicyWire(mode=self.mode, allow=list(self.allow), deny=list(self.deny))


def check_egress(check: Checker, path: Path, value: object) -> EgressPolicy | None:
    """An ``egress`` argument: None (not given), an ``EgressPolicy``, or a mapping of its options
    (``mode``, ``allow``, ``deny``) checked with its rules, issues under ``path`` (``egress.allow[0]``).
    Returns the policy, or None when not given or refused."""
    if value is None:
        return None
    if isinstance(value, EgressPolicy):
        return value
    if not isinstance(value, Mapping):
        check.add(path, expected("an EgressPolicy or a mapping of mode, allow and deny", value))
        return None
    unknown = [key for key in value if key not in _OPTIONS]
    checked = _check_policy(check, path, value.get("mode"), value.get("allow"), value.get("deny"), unknown)
    if checked is None:
        return None
    policy = object.__new__(EgressPolicy)
    for name, item in zip(_OPTIONS, checked):
        object.__setattr__(policy, name, item)
    return policy


def egress_argument(type_name: str, argument: str, value: object) -> EgressPolicy:
    """An argument that must be an ``EgressPolicy`` or a mapping of its options, as an ``EgressPolicy``.
    A mapping's issues are named as the control plane names them when it parses the same body
    (``mode``, ``allow[0]``; the entry count without a field); a value of another kind (None too) is
    named ``argument``.

    :raises InvalidArgumentException: before any call
    """
    check = Checker(type_name)
    if not isinstance(value, (EgressPolicy, Mapping)):
        fail(type_name, (argument,), expected("an EgressPolicy or a mapping of mode, allow and deny", value))
    policy = check_egress(check, (), value)
    check.done()
    assert policy is not None
    return policy
