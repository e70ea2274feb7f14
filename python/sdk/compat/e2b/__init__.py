"""The E2B SDK's public surface for sandboxes, commands, terminals and files, on this SDK's control plane (SPEC
"Compatibility shim"): a program written for E2B changes ``from e2b import ...`` to
``from sdk.compat.e2b import ...`` and points ``SDK_CONTROL_PLANE_URL`` (and ``SDK_API_KEY``) at the server; ``E2B_API_KEY`` is never
sent. See ``README.md`` beside this file for the template mapping and what is
not supported.

Example::

    from sdk.compat.e2b import CommandExitException, Sandbox

    with Sandbox.create() as sbx:
        sbx.files.write("hello.txt", "hi")
        try:
            sbx.commands.run("exit 3")
        except CommandExitException as error:
            print(error.exit_code)  # 3
"""

from .async_commands import AsyncCommandHandle, AsyncCommands, OutputHandler
from .async_files import AsyncFilesystem, AsyncWatchHandle
from .async_pty import AsyncPty
from .async_sandbox import AsyncSandbox
from .command_result import CommandExitException, CommandResult, ProcessInfo, PtyOutput, PtySize, Stderr, Stdout
from .commands import CommandHandle, Commands
from .exceptions import (
    AuthenticationException,
    FileNotFoundException,
    InvalidArgumentException,
    NotEnoughSpaceException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    TemplateException,
    TimeoutException,
    NotSupportedException,
)
from .file_types import EntryInfo, FilesystemEvent, FilesystemEventType, FileType, WriteEntry, WriteInfo
from .files import Filesystem, WatchHandle
from .pty import Pty
from ._network import (
    ALL_TRAFFIC,
    SandboxEgressProxyInfo,
    SandboxEgressProxyOpts,
    SandboxNetworkInfo,
    SandboxNetworkOpts,
    SandboxNetworkRule,
    SandboxNetworkRuleInfo,
    SandboxNetworkRules,
    SandboxNetworkSelector,
    SandboxNetworkSelectorContext,
    SandboxNetworkTransform,
    SandboxNetworkTransformContext,
    SandboxNetworkTransformResolver,
    SandboxNetworkUpdate,
)
from .refused import AsyncSecret, AsyncTemplate, AsyncVolume, RefusedApi, Secret, Template, Volume
from .sandbox import Sandbox
from .sandbox_metrics import SandboxMetrics
from .sandbox_info import (
    AsyncSandboxPaginator,
    AsyncSnapshotPaginator,
    SandboxInfo,
    SandboxListOrder,
    SandboxPaginator,
    SandboxQuery,
    SandboxState,
    SnapshotInfo,
    SnapshotPaginator,
)

__all__ = [
    "ALL_TRAFFIC",
    "AsyncCommandHandle",
    "AsyncCommands",
    "AsyncFilesystem",
    "AsyncPty",
    "AsyncSandbox",
    "AsyncSandboxPaginator",
    "AsyncSnapshotPaginator",
    "AsyncSecret",
    "AsyncTemplate",
    "AsyncVolume",
    "AsyncWatchHandle",
    "AuthenticationException",
    "CommandExitException",
    "CommandHandle",
    "CommandResult",
    "Commands",
    "EntryInfo",
    "FileNotFoundException",
    "FileType",
    "Filesystem",
    "FilesystemEvent",
    "FilesystemEventType",
    "InvalidArgumentException",
    "NotEnoughSpaceException",
    "NotFoundException",
    "NotSupportedException",
    "OutputHandler",
    "ProcessInfo",
    "Pty",
    "PtyOutput",
    "PtySize",
    "RateLimitException",
    "RefusedApi",
    "Sandbox",
    "SandboxEgressProxyInfo",
    "SandboxEgressProxyOpts",
    "SandboxException",
    "SandboxInfo",
    "SandboxListOrder",
    "SandboxMetrics",
    "SandboxNetworkInfo",
    "SandboxNetworkOpts",
    "SandboxNetworkRule",
    "SandboxNetworkRuleInfo",
    "SandboxNetworkRules",
    "SandboxNetworkSelector",
    "SandboxNetworkSelectorContext",
    "SandboxNetworkTransform",
    "SandboxNetworkTransformContext",
    "SandboxNetworkTransformResolver",
    "SandboxNetworkUpdate",
    "SandboxNotFoundException",
    "SandboxPaginator",
    "SandboxQuery",
    "SandboxState",
    "SnapshotInfo",
    "SnapshotPaginator",
    "Secret",
    "Stderr",
    "Stdout",
    "Template",
    "TemplateException",
    "TimeoutException",
    "Volume",
    "WatchHandle",
    "WriteEntry",
    "WriteInfo",
]
