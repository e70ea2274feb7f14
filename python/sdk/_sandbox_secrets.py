"""``Sandbox.create(secrets=...)`` (SPEC "What the service does" 6) and what a new handle does before it is
returned: gateways opened, credential rules sent, ``secrets`` sent, the sandbox ended on failure unless
``keep_on_failure`` (``sdk/sandbox-secrets.ts``, ``openSandbox``/``connectSandbox`` of
``sdk/sandbox-lifecycle.ts``).

``secrets`` puts each secret's value in the environment of every command: unlike a gateway this protects
nothing from sandbox code. Values are read with the handle's ``SecretCache`` just before the one call
that sends them and are held nowhere else in the SDK."""

from __future__ import annotations

from typing import Mapping

from ._http import Op
from ._sandbox_core import SandboxCore
from ._sandbox_options import CreateOptions
from ._secret_ops import ReadSecrets, SecretOp
from .credentials import CredentialCore
from .errors import AuthenticationException, SandboxException
from .gateways import GatewayCore
from .secret_cache import SecretCache
from .secret_gateway import SecretSource

def deliver_secrets_op(gateways: GatewayCore, secrets: Mapping[str, SecretSource]) -> SecretOp[None]:
    """Reads every secret, then sends them all in one call: a missing one fails before any value has
    left this process. Nothing is sent when ``secrets`` is empty.

    :raises SecretNotFoundException: when the store has no such secret
    :raises SandboxException: (class ``UnimplementedError``) when the daemon predates ``secrets``
    """
    if not secrets:
        return
    names = list(secrets)
    values: list[str] = yield ReadSecrets(tuple(secrets[name] for name in names))
    refused: SandboxException | None = None
    try:
        yield gateways.core.put_secrets_call(dict(zip(names, values)))
    except SandboxException as error:
        # A daemon without the endpoint answers ``not_found``: say what is missing, as gateways do.
        if error.code != "not_found":
            raise
        refused = error
    if refused is not None:
        raise SandboxException(
            "UnimplementedError: this sandbox image predates secrets", "unimplemented", "UnimplementedError"
        )


def open_op(
    gateways: GatewayCore,
    credentials: CredentialCore,
    secrets: Mapping[str, SecretSource],
    keep_on_failure: bool,
) -> SecretOp[None]:
    """A new creating handle: its gateways configured, then its credential rules sent, then its
    ``secrets``; on any failure the sandbox is ended (unless ``keep_on_failure``) and the failure
    raised."""
    if not gateways.definitions and not credentials.rules and not secrets:
        return
    try:
        if gateways.definitions:
            yield from gateways.configure_op()
        # Before any command of the caller's runs: every one gets the proxy and the CA.
        if credentials.rules:
            yield from credentials.configure_op()
        yield from deliver_secrets_op(gateways, secrets)
    except GeneratorExit:
        raise  # the operation was abandoned: nothing may be sent any more
    except BaseException:
        if not keep_on_failure:
            try:
                yield from gateways.core.kill_op()
            except Exception:
                pass  # the failure that matters is the one raised below
        raise


def connect_state_op(gateways: GatewayCore) -> Op[None]:
    """ConfigureStatus on a connected handle; a refused token leaves the gateways empty (SPEC
    "Authentication" 1: the first authenticated call raises)."""
    try:
        yield from gateways.read_state_op()
    except AuthenticationException:
        pass


def gateway_core(core: SandboxCore, creating: CreateOptions | None) -> GatewayCore:
    """The routes of a new handle: the definitions and a cache on the creating handle (a cache of the
    local default store when none was given), state only on a connected one."""
    if creating is None:
        return GatewayCore(core, {}, None)
    return GatewayCore(core, creating.gateways, creating.secret_cache or SecretCache())


def credential_core(
    core: SandboxCore, creating: CreateOptions | None, cache: SecretCache | None
) -> CredentialCore:
    """The credential broker of a new handle: the rules and ``cache`` (the gateways' own) on the creating
    handle, state only on a connected one."""
    if creating is None:
        return CredentialCore(core, (), None)
    return CredentialCore(core, creating.credentials, cache)


def start_op(
    gateways: GatewayCore, credentials: CredentialCore, creating: CreateOptions | None
) -> SecretOp[None]:
    """What a new handle does before it is returned: ``open_op`` on a creating handle,
    ``connect_state_op`` on a connected one (which reads no credential state, as TypeScript's
    ``connectSandbox``: ``sbx.credentials.refresh()`` does)."""
    if creating is None:
        yield from connect_state_op(gateways)
    else:
        yield from open_op(gateways, credentials, creating.secrets, creating.keep_on_failure)
