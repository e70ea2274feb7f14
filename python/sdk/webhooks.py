"""Signed webhooks (issue 28; ``protocol/webhook-wire.ts`` and ``rules/webhook-url.ts``): a control plane
POSTs each sandbox lifecycle event, one a request, to its webhook destinations (the operator's,
``sdk serve --webhook URL``, and a sandbox's own, ``Sandbox.create(webhook_url=...)``), signed.

The body is a :class:`WebhookEvent` as JSON; with it come ``x-sdk-webhook-id`` (the event's ``id``, the
same on every retry: deduplicate on it), ``x-sdk-timestamp`` (when the attempt was signed, Unix seconds)
and ``x-sdk-signature: v1=<hex>``, the HMAC-SHA256 of ``<timestamp>.<body>`` under the control plane's
webhook secret (``sdk serve --webhook-secret-file``, else ``<state dir>/webhook-secret``). A receiver
checks it over the raw body as received with :func:`verify_webhook_signature` (TypeScript's
``verifyWebhookSignature`` of ``sdk/control-plane``, exactly), refuses a timestamp far from its own clock
(a replayed request), and answers 2xx once it has the event; anything else is retried.

A destination (``webhook_url``) is an ``http`` or ``https`` URL of at most 2048 characters with no user
name, password or fragment (``webhookUrlSchema``: zod's ``z.url`` as the WHATWG URL parser judges it,
approximated by :mod:`sdk._urls`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from typing import Final, Literal

from pydantic import Field

from ._check import Checker, Path
from ._urls import http_url_problem
from ._wire import _Wire

#: The header carrying the event's id (stable across retries: deduplicate on it).
WEBHOOK_ID_HEADER: Final = "x-sdk-webhook-id"
#: The header carrying when the attempt was signed, Unix seconds.
WEBHOOK_TIMESTAMP_HEADER: Final = "x-sdk-timestamp"
#: The header carrying ``v1=<hex>`` (more than one, space-separated, when a receiver must accept either).
WEBHOOK_SIGNATURE_HEADER: Final = "x-sdk-signature"
#: How far a timestamp may be from the receiver's clock by default, seconds.
WEBHOOK_TOLERANCE_SECONDS: Final = 300

#: A lifecycle event's type (E2B's names): ``ended`` for a sandbox killed or timed out, ``failed`` for one
#: whose sandboxd died.
WebhookEventType = Literal[
    "sandbox.lifecycle.created",
    "sandbox.lifecycle.paused",
    "sandbox.lifecycle.resumed",
    "sandbox.lifecycle.ended",
    "sandbox.lifecycle.failed",
]

#: Every event type, in TypeScript's order (``WEBHOOK_EVENT_TYPES``).
WEBHOOK_EVENT_TYPES: Final[tuple[WebhookEventType, ...]] = (
    "sandbox.lifecycle.created",
    "sandbox.lifecycle.paused",
    "sandbox.lifecycle.resumed",
    "sandbox.lifecycle.ended",
    "sandbox.lifecycle.failed",
)


class WebhookEvent(_Wire):
    """One lifecycle event, the body of a webhook request (``webhookEventSchema``; unknown keys refused).
    Never a token, a preview key, a secret or anything from inside the sandbox.

    Example::

        event = WebhookEvent.model_validate_json(raw_body)  # after verify_webhook_signature
        print(event.type, event.sandbox_id, event.state, event.reason)
    """

    #: Unique per destination and event, the same on every retry: receivers deduplicate on it.
    id: str
    type: WebhookEventType
    sandbox_id: str
    #: The sandbox's event number of this change: increasing per sandbox (not contiguous).
    seq: int = Field(ge=0)
    #: When it happened on the control plane's clock, milliseconds since the epoch.
    at: float
    #: The state it is in afterwards.
    state: Literal["running", "suspended", "ended"]
    #: ``paused`` or ``idle`` for a pause; ``killed``, ``timeout`` or ``failed`` for an end; else None.
    reason: Literal["paused", "idle", "killed", "timeout", "failed"] | None
    template: str
    #: The metadata given at create (empty when none).
    metadata: dict[str, str]


def _utf8(text: str | bytes) -> bytes:
    """``text`` as Node's ``Buffer.from(text, 'utf8')`` encodes a JavaScript string (a lone surrogate as
    U+FFFD, a pair of surrogates as its character); bytes as they are."""
    if isinstance(text, bytes):
        return text
    try:
        return text.encode()
    except UnicodeEncodeError:  # surrogates: through UTF-16, as JavaScript holds the string
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode()


def webhook_signature(secret: str, timestamp: int, body: str | bytes) -> str:
    """The signature header's value for ``body`` signed at ``timestamp`` (Unix seconds): ``v1=<hex>``,
    the HMAC-SHA256 of ``<timestamp>.<body>`` keyed with the secret's UTF-8 bytes (``webhookSignature``)."""
    mac = hmac.new(_utf8(secret), f"{timestamp}.".encode() + _utf8(body), hashlib.sha256)
    return f"v1={mac.hexdigest()}"


#: A timestamp header: 1 to 12 ASCII digits (JavaScript's ``/^\d{1,12}$/``).
_TIMESTAMP: Final = re.compile(r"[0-9]{1,12}")


def verify_webhook_signature(
    secret: str,
    timestamp: str | None,
    body: str | bytes,
    signature_header: str | None,
    tolerance_seconds: float = WEBHOOK_TOLERANCE_SECONDS,
    *,
    now: float | None = None,
) -> bool:
    """True when ``signature_header`` holds a ``v1=`` signature of ``body`` at ``timestamp`` under
    ``secret`` (compared in constant time; more than one space-separated, any may match) and
    ``timestamp`` is within ``tolerance_seconds`` of ``now`` (Unix seconds, ``time.time()`` by default).
    TypeScript's ``verifyWebhookSignature`` exactly: a missing header, a timestamp that is not 1 to 12
    digits, or one too far off is False, never an exception.

    ``body`` is the raw body as received (bytes, or the text it decodes to), never parsed and serialised
    again; ``timestamp`` is the ``x-sdk-timestamp`` header, ``signature_header`` the ``x-sdk-signature``
    one.

    Example::

        ok = verify_webhook_signature(
            secret, request.headers.get("x-sdk-timestamp"), raw_body, request.headers.get("x-sdk-signature")
        )  # answer 2xx once stored; deduplicate on the event's id
    """
    if not isinstance(timestamp, str) or not isinstance(signature_header, str):
        return False
    if _TIMESTAMP.fullmatch(timestamp) is None:
        return False
    seconds = int(timestamp)
    clock = time.time() if now is None else now
    if abs(clock - seconds) > tolerance_seconds:
        return False
    expected = webhook_signature(secret, seconds, body).encode()
    matched = False
    for given in signature_header.split(" "):
        candidate = _utf8(given)
        # Every candidate is compared (no early exit), each in constant time.
        if len(candidate) == len(expected) and hmac.compare_digest(candidate, expected):
            matched = True
    return matched


#: The longest webhook destination, characters (``MAX_WEBHOOK_URL``).
MAX_WEBHOOK_URL: Final = 2048
#: The rules' messages (``rules/webhook-url.ts``).
WEBHOOK_URL_RULE: Final = "must be an http or https URL"
WEBHOOK_URL_LENGTH_RULE: Final = f"must be at most {MAX_WEBHOOK_URL} characters"
WEBHOOK_URL_PLAIN_RULE: Final = "must carry no user name, password or fragment"

#: What JavaScript's ``String.prototype.trim`` removes at either end (its WhiteSpace and LineTerminator).
_JS_SPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: A URL's scheme, as the WHATWG parser takes one.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: The special schemes whose URLs need a host (``file:`` is special too, but takes none).
_HOST_SCHEMES: Final = ("http:", "https:", "ws:", "wss:", "ftp:")


#: C0 controls and space: what the WHATWG parser strips at both ends of its input.
_C0_SPACE: Final = "".join(map(chr, range(0x21)))
#: What an opaque host (a URL of another scheme) may not hold: the forbidden host code points.
_FORBIDDEN_OPAQUE: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|")


def _has_user_info(url: str) -> bool:
    """True when the authority of an ``http(s)://`` URL carries a user name or a password (``@`` with
    nothing around it, ``http://@host``, carries neither, as the WHATWG parser reads it)."""
    rest = url.split("://", 1)[1].lstrip("/\\")
    authority = re.split(r"[/?#\\]", rest, maxsplit=1)[0]
    if "@" not in authority:
        return False
    user, _, password = authority.rsplit("@", 1)[0].partition(":")
    return user != "" or password != ""


def _parsed_plain(url: str) -> tuple[bool, bool]:
    """Whether the WHATWG parser takes ``url`` (cleaned: no tab or newline), approximated, and whether it
    then has no user name or password. A special scheme needs a valid host (``http:host`` reads as
    ``http://host``); another scheme is taken as it is."""
    url = url.strip(_C0_SPACE)
    scheme = _SCHEME.match(url)
    if scheme is None:
        return False, False
    rest = url[scheme.end() :]
    if scheme.group(0).lower() not in _HOST_SCHEMES:
        if not rest.startswith("//"):
            return True, True  # an opaque path: taken as it is
        # An authority: user info, and an opaque host without a forbidden host code point.
        authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
        host = authority.rsplit("@", 1)[-1]
        parses = host.startswith("[") or not any(c in _FORBIDDEN_OPAQUE for c in host.split(":", 1)[0])
        return parses, parses and not _has_user_info(url)
    as_http = "http://" + rest
    parses = http_url_problem(as_http) is None
    return parses, parses and not _has_user_info(as_http)


def check_webhook_url(check: Checker, path: Path, value: object) -> str | None:
    """``value`` checked as a webhook destination (``webhookUrlSchema``): None when it is None (not
    given), else the URL as TypeScript sends it (trimmed, ASCII tabs and newlines removed, as zod's
    ``z.url`` outputs it); each problem is added to ``check`` (the URL itself is never echoed)."""
    if value is None:
        return None
    if not isinstance(value, str):
        check.add(path, WEBHOOK_URL_RULE)
        return None
    trimmed = value.strip(_JS_SPACE)
    url = re.sub(r"[\t\n\r]", "", trimmed)
    # zod's guard (the scheme and ``//`` as typed), then the WHATWG parser's verdict (which drops tabs
    # and newlines, and C0 controls and spaces at the edges).
    guarded = re.match(r"https?://", trimmed, re.IGNORECASE) is not None
    parses, plain = _parsed_plain(url)
    accepted = guarded and parses
    problems = 0
    if not accepted:
        check.add(path, WEBHOOK_URL_RULE)
        problems += 1
        # The length and ``plainUrl`` see zod's output: the cleaned URL once it parsed, else the value
        # given (which the parser reads without its tabs and newlines, but with JavaScript's spaces).
        plain = _parsed_plain(re.sub(r"[\t\n\r]", "", value))[1]
    if len(url if accepted else value) > MAX_WEBHOOK_URL:
        check.add(path, WEBHOOK_URL_LENGTH_RULE)
        problems += 1
    # ``plainUrl``: the URL parses (any scheme), has no user name or password and no ``#``.
    if not plain or "#" in value:
        check.add(path, WEBHOOK_URL_PLAIN_RULE)
        problems += 1
    return None if problems else url
