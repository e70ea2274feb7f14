"""The egress policy through the Python SDK against the session's control plane (TypeScript's
``test/integration/sandbox/egress.test.ts`` tests the network itself): a policy given at create is the
sandbox's, normalised, and decides its DNS (a name it does not allow is NXDOMAIN, which Python reads as
``EAI_NONAME``); ``sbx.egress.update`` changes it on the running sandbox (the name, now allowed, is
asked of the upstream server, which the tests' control planes never have: ``EAI_AGAIN``), and a
connected handle reads it back. Every test ends the sandbox it created."""

from __future__ import annotations

from conftest import ControlPlane
from sdk import EgressPolicy, Sandbox

#: The resolver's answer for ``name``, as Python's ``getaddrinfo`` reports it.
LOOKUP = (
    "python3 -c \"import socket\n"
    "try:\n"
    "    socket.gethostbyname('{name}'); print('resolved')\n"
    "except socket.gaierror as e:\n"
    "    print(e.errno)\""
)
EAI_NONAME = "-2"  # NXDOMAIN: refused by the policy
EAI_AGAIN = "-3"  # allowed, and the upstream did not answer


def lookup(sbx: Sandbox, name: str) -> str:
    return sbx.commands.run(LOOKUP.format(name=name)).stdout.strip()


def test_a_policy_decides_names_and_changes_on_the_running_sandbox(control_plane: ControlPlane) -> None:
    sbx = Sandbox.create(
        template="sdk-base", egress=EgressPolicy(mode="allowlist", allow=("Allowed.test.", "10.9.0.0/16"))
    )
    try:
        assert sbx.egress.policy == EgressPolicy(mode="allowlist", allow=("allowed.test", "10.9.0.0/16"))
        assert lookup(sbx, "other.test") == EAI_NONAME
        assert lookup(sbx, "allowed.test") == EAI_AGAIN
        updated = sbx.egress.update({"mode": "allowlist", "allow": ["other.test"]})
        assert updated == EgressPolicy(mode="allowlist", allow=("other.test",))
        assert sbx.egress.policy == updated
        assert lookup(sbx, "other.test") == EAI_AGAIN
        assert lookup(sbx, "allowed.test") == EAI_NONAME
        again = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        assert again.egress.policy == updated
    finally:
        sbx.kill()
