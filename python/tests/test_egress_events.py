"""The egress records of sandboxd's feed (issue 27) as the Python SDK reads them: every ``via`` the
daemon writes (its name checks, its resolver, the egress proxy, the credential broker), an allowed
connection with its upstream and bytes, a refusal with its rule; a malformed one is skipped."""

from __future__ import annotations

from sdk import EgressDecision
from sdk.daemon_events import parse_daemon_event


def test_every_via_the_daemon_writes_is_read() -> None:
    for via in ["dns", "tls", "http", "proxy", "credential"]:
        record = parse_daemon_event(
            {"seq": 3, "at": 1.5, "type": "egress", "event": "refused", "via": via, "name": "x.test", "rule": "allowlist"}
        )
        assert isinstance(record, EgressDecision)
        assert (record.via, record.event, record.rule, record.address) == (via, "refused", "allowlist", None)


def test_an_allowed_connection_keeps_its_upstream_and_bytes() -> None:
    record = parse_daemon_event(
        {
            "seq": 9,
            "at": 2.0,
            "type": "egress",
            "event": "allowed",
            "via": "proxy",
            "name": "pypi.test",
            "rule": "*.test",
            "address": "198.18.0.2",
            "port": 443,
            "bytes": 5120,
        }
    )
    assert isinstance(record, EgressDecision)
    assert (record.address, record.port, record.bytes) == ("198.18.0.2", 443, 5120)


def test_a_malformed_record_is_skipped() -> None:
    base = {"seq": 1, "at": 1.0, "type": "egress", "event": "allowed", "name": "a.test", "rule": "open"}
    assert parse_daemon_event({**base, "via": "smtp"}) is None
    assert parse_daemon_event({**base, "via": "tls", "bytes": -1}) is None
    assert parse_daemon_event({**base, "via": "tls", "header": "x"}) is None
