"""``S3Prefix``: where a sandbox's home directory is saved (SPEC "Persistence and pools")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ._check import Checker, check_string
from ._rules import REGION, REGION_RULE
from ._urls import http_url_problem

_BUCKET: Final = re.compile(r"(?!xn--)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX: Final = re.compile(r"(?:[A-Za-z0-9!_.*'()-]+(?:/[A-Za-z0-9!_.*'()-]+)*)?")
_NAME: Final = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
_LOOPBACK_HTTP: Final = re.compile(r"http://(?:127\.\d+\.\d+\.\d+|\[::1\]|localhost)(?::\d+)?(?:/|\Z)")


@dataclass(frozen=True, init=False)
class S3Prefix:
    """A bucket, a key prefix and a name: the home directory is saved at
    ``<prefix>/<name>/home.tar.gz``. ``region`` is the bucket's (the AWS SDK's own chain when None);
    ``endpoint`` overrides S3 and STS (https, or http only to a loopback address).

    Example: ``S3Prefix("team-sandboxes", "homes", "alice").key == "homes/alice/home.tar.gz"``
    """

    bucket: str
    prefix: str
    name: str
    region: str | None
    endpoint: str | None

    def __init__(
        self, bucket: str, prefix: str, name: str, *, region: str | None = None, endpoint: str | None = None
    ) -> None:
        check = Checker("S3Prefix")
        if check_string(check, ("bucket",), bucket, _BUCKET, "must be a bucket name: 3-63 characters [a-z0-9.-]"):
            if ".." in bucket:
                check.add(("bucket",), "must not contain ..")
        if check_string(check, ("prefix",), prefix):
            if len(prefix) > 900:
                check.add(("prefix",), "must be at most 900 characters")
            elif _PREFIX.fullmatch(prefix) is None:
                check.add(("prefix",), "must be key segments joined by /, with no leading, trailing or double /")
        check_string(check, ("name",), name, _NAME, "must be 1-128 characters [A-Za-z0-9._-], not starting with .")
        if region is not None:
            check_string(check, ("region",), region, REGION, REGION_RULE)
        if endpoint is not None and check_string(check, ("endpoint",), endpoint):
            endpoint = re.sub(r"[\t\n\r]", "", endpoint.strip())
            problem = http_url_problem(endpoint)
            if problem is not None:
                check.add(("endpoint",), problem)
            if not endpoint.startswith("https://") and _LOOPBACK_HTTP.match(endpoint) is None:
                check.add(("endpoint",), "must be https (http only to a loopback address)")
        check.done()
        for key, value in (("bucket", bucket), ("prefix", prefix), ("name", name)):
            object.__setattr__(self, key, value)
        object.__setattr__(self, "region", region)
        object.__setattr__(self, "endpoint", endpoint)

    @property
    def key(self) -> str:
        """Object key of the saved home directory."""
        return f"{self.prefix + '/' if self.prefix else ''}{self.name}/home.tar.gz"
