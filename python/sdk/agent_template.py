"""``AgentTemplate`` (SPEC "Image tooling"), mirroring ``sdk/agent-template.ts``: the agent image on
``sdk-base-caps`` (or ``sdk-base``) with runtime_a and a search tool under /opt/agents, runtime_b unless
left out, ``prefetch`` on and ``kernel_warmup`` off by default. Options are checked at construction with
the rules of ``agentTemplateSpecSchema``; ``build()`` (sync) / ``await abuild()`` (async) asks the control
plane to build it (``POST /v1/templates`` with the operator key, ``SDK_API_KEY``) and reports each step.
Both share every step but the I/O: the checked request, the call, and what each answer line means."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Final, Literal

from . import _control_plane as plane_calls
from ._check import Checker, check_bool, check_int, check_string, expected, whole
from ._http import AsyncTransport, Call, Transport
from ._option_checks import check_seconds, check_url
from ._wire import (
    AgentTemplateBody,
    BuildTemplateRequest,
    BuiltTemplate,
    TemplateBuildLine,
    TemplateBuiltLine,
    TemplateFailedLine,
    TemplateStepLine,
)
from .errors import SandboxException, error_from_envelope

#: A name a template build may take: 1-63 characters ``[a-z0-9-]``, starting with a letter or digit.
BUILT_TEMPLATE_NAME: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")

#: The templates the driver makes itself, which a build can stand on and never replaces.
BUILD_BASES: Final = ("sdk-base-caps", "sdk-base")

#: A base a build stands on.
BuildBase = Literal["sdk-base-caps", "sdk-base"]

#: Longest a build may run, seconds (3 hours; the control plane's default is 30 minutes).
MAX_BUILD_TIMEOUT: Final = 3 * 60 * 60


@dataclass(frozen=True)
class TemplateBuildStep:
    """One step of a build: its name, whether its layer was already built, ``index`` of ``total`` from 1."""

    step: str
    cached: bool
    index: int
    total: int


#: Hears each step of a build as it begins.
StepCallback = Callable[[TemplateBuildStep], object]


class AgentTemplate:
    """An agent template, checked; ``build()`` / ``abuild()`` make it on the control plane's host.

    Example: ``AgentTemplate(name="lean-agent", runtime_b=False).build(on_step=print)``
    """

    def __init__(
        self,
        name: str = "sdk-agent",
        base: BuildBase = "sdk-base-caps",
        memory_mb: int | None = None,
        runtime_b: bool = True,
        prefetch: bool = True,
        kernel_warmup: bool = False,
    ) -> None:
        """
        :param memory_mb: memory of sandbox code by default in sandboxes of this template, MiB (256-16384;
            1024 when None)
        :raises InvalidArgumentException: naming the field (never the value): a name that is not 1-63
            characters ``[a-z0-9-]`` or names a base template, a base other than ``sdk-base-caps`` /
            ``sdk-base``, ``memory_mb`` outside 256-16384, ``kernel_warmup=True`` (this engine has no
            kernel of its own), a flag that is not a bool
        """
        check = Checker("AgentTemplate")
        if check_string(check, ("name",), name, BUILT_TEMPLATE_NAME, "must be 1-63 characters [a-z0-9-]"):
            if name in BUILD_BASES:
                check.add(("name",), "must not name a base template")
        if base not in BUILD_BASES:
            check.add(("base",), "must be sdk-base-caps or sdk-base")
        if memory_mb is not None:
            check_int(check, ("memory_mb",), memory_mb, 256, 16_384)
        check_bool(check, ("runtime_b",), runtime_b)
        check_bool(check, ("prefetch",), prefetch)
        if kernel_warmup is not False:
            check.add(("kernel_warmup",), "must be false: the namespace engine has no kernel of its own")
        check.done()
        self._body = AgentTemplateBody(
            name=name,
            base="sdk-base" if base == "sdk-base" else "sdk-base-caps",
            memory_mb=None if memory_mb is None else whole(memory_mb),
            runtime_b=runtime_b,
            prefetch=prefetch,
            kernel_warmup=False,
        )

    @property
    def name(self) -> str:
        """The template's name, the ``template`` a create gives to use it."""
        return self._body.name

    @property
    def options(self) -> dict[str, Any]:
        """The options, defaults filled (a copy): ``name``, ``base``, ``memory_mb`` (None for the
        default), ``runtime_b``, ``prefetch``, ``kernel_warmup``."""
        return self._body.model_dump()

    def __repr__(self) -> str:
        return f"AgentTemplate({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"

    def build(
        self,
        force: bool = False,
        timeout: float | None = None,
        on_step: StepCallback | None = None,
        control_plane_url: str | None = None,
    ) -> BuiltTemplate:
        """Builds the template, every step (cached ones too) reported to ``on_step``. A template of these
        options already built is left as it is (``built=False``) unless ``force``.

        :param force: build again even when the template exists (its own layers too); replaces a
            template of the name with other options
        :param timeout: longest the build may take, seconds (the control plane's 30 minutes when None,
            3 hours at most)
        :param control_plane_url: the control plane (``SDK_CONTROL_PLANE_URL``, else
            ``http://127.0.0.1:4780``)
        :raises InvalidArgumentException: for bad options (before any call), or a template of the name
            with other options (without ``force``)
        :raises AuthenticationException: without the operator key
        :raises SandboxException: naming the step that failed or timed out; nothing of the build is left
        """
        build = _Build(self._body, force, timeout, on_step, control_plane_url)
        transport = Transport()
        try:
            with transport.lines(build.call) as lines:
                while True:
                    try:
                        line = next(lines)
                    except StopIteration:
                        break
                    except SandboxException:
                        raise _broken() from None
                    built = build.take(line)
                    if built is not None:
                        return built
        finally:
            transport.close()
        raise _unended()

    async def abuild(
        self,
        force: bool = False,
        timeout: float | None = None,
        on_step: StepCallback | None = None,
        control_plane_url: str | None = None,
    ) -> BuiltTemplate:
        """``build()``, awaited (``on_step`` is called in the event loop's thread). Cancelling the
        awaiting task closes the stream, which stops the build and leaves nothing of it."""
        build = _Build(self._body, force, timeout, on_step, control_plane_url)
        transport = AsyncTransport()
        try:
            async with transport.lines(build.call) as lines:
                while True:
                    try:
                        line = await anext(lines)
                    except StopAsyncIteration:
                        break
                    except SandboxException:
                        raise _broken() from None
                    built = build.take(line)
                    if built is not None:
                        return built
        finally:
            await transport.aclose()
        raise _unended()


class _Build:
    """One build of both drivers: its options checked, its call, and what each line of the answer means."""

    def __init__(
        self,
        template: AgentTemplateBody,
        force: object,
        timeout: object,
        on_step: object,
        control_plane_url: object,
    ) -> None:
        check = Checker("AgentTemplate.build")
        check_bool(check, ("force",), force)
        timeout_ms = None if timeout is None else check_seconds(check, "timeout", timeout, 1, MAX_BUILD_TIMEOUT)
        if on_step is not None and not callable(on_step):
            check.add(("on_step",), expected("a callable", on_step))
        url = check_url(check, "control_plane_url", control_plane_url)
        check.done()
        self._on_step: StepCallback | None = on_step if callable(on_step) else None
        body = BuildTemplateRequest(template=template, force=force is True, timeout_ms=timeout_ms).wire()
        plane = plane_calls.control_plane(plane_calls.control_plane_url(url))
        self.call: Call[TemplateBuildLine | None] = plane_calls.build_template_call(plane, body)

    def take(self, line: TemplateBuildLine | None) -> BuiltTemplate | None:
        """The built template once the last line says so; a step is reported, a failure raised as its
        envelope's exception (``SandboxException`` naming the step), a line of another kind skipped."""
        if isinstance(line, TemplateStepLine):
            if self._on_step is not None:
                self._on_step(TemplateBuildStep(line.step, line.cached, line.index, line.total))
        elif isinstance(line, TemplateBuiltLine):
            return line.template
        elif isinstance(line, TemplateFailedLine):
            raise error_from_envelope(line.error.model_dump(by_alias=True))
        return None


def _broken() -> SandboxException:
    return SandboxException("the template build stream broke")


def _unended() -> SandboxException:
    return SandboxException("the template build ended without saying how")
