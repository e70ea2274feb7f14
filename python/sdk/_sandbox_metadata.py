"""A sandbox's metadata (issue 28; ``rules/sandbox-metadata.ts``): a string map given at create
(``Sandbox.create(metadata=...)``), shown by ``get_info`` and ``Sandbox.list`` and matched by
``Sandbox.list(metadata=...)``. At most 64 entries; keys 1 to 128 characters, values at most 1024 (Unicode
code points, as zod measures strings: Python's ``len``); no control character (Unicode ``Cc``) in either,
since metadata is shown in pages and logs. Never a place for a secret: whoever may read the sandbox's facts
reads it.

A refusal names ``metadata`` (or ``metadata.<key>`` for a value, once its key is a valid one), never a
value, and never a key that breaks the rules (it may hold a control character).
"""

from __future__ import annotations

import re
from typing import Final, Mapping

from ._check import Checker, Path, expected

#: At most this many entries.
MAX_METADATA_ENTRIES: Final = 64
MAX_KEY: Final = 128
MAX_VALUE: Final = 1024

#: A Unicode ``Cc`` character (JavaScript's ``\p{Cc}``: U+0000-U+001F and U+007F-U+009F).
_CONTROL: Final = re.compile("[\u0000-\u001f\u007f-\u009f]")

KEY_RULE: Final = f"a key must be 1 to {MAX_KEY} characters, no control characters"


def check_metadata(check: Checker, path: Path, value: object) -> dict[str, str] | None:
    """``value`` checked as a sandbox's metadata (``sandboxMetadataSchema``): None when it is None (not
    given), else a copy as a plain dict; each problem is added to ``check``."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        check.add(path, expected("a mapping of strings to strings", value))
        return None
    metadata: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or _CONTROL.search(key):
            check.add(path, KEY_RULE)
            continue
        if not isinstance(item, str):
            check.add(path + (key,), expected("a string", item))
        elif len(item) > MAX_VALUE:
            check.add(path + (key,), f"must be at most {MAX_VALUE} characters")
        elif _CONTROL.search(item):
            check.add(path + (key,), "no control characters")
        else:
            metadata[key] = item
    if len(value) > MAX_METADATA_ENTRIES:
        check.add(path, f"at most {MAX_METADATA_ENTRIES} entries")
    return metadata
