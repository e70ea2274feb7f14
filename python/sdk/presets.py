"""Provider presets (SPEC "Provider preset catalogue" and preset rules 1-6): each builder takes the
secret's name (or a ``SecretRef``) and its preset's options and returns a ``SecretGateway`` restricted to
its vendor's upstream, header and POST paths, read from the same ``presets/catalogue.json`` as the
TypeScript SDK (or the file named by ``SDK_PRESET_CATALOGUE``). Building one makes no network call and
loads no optional dependency."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path as FilePath
from typing import Callable, Final, Literal, Mapping, Protocol, Sequence
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, ValidationError

from ._check import Checker, check_list, check_string, expected, fail, from_validation_error
from ._paths import base_path_problem
from ._rules import AGENT_PROVIDERS, ALLOW_RULES_PER_ROUTE, REGION, REGION_RULE
from ._upstream import parse_upstream
from .errors import InvalidArgumentException
from .secret_gateway import PresetBinding, SecretGateway, SecretSource, check_rate_per_minute, check_secret_source

#: Environment variable naming an operator's catalogue file.
CATALOGUE_ENV: Final = "SDK_PRESET_CATALOGUE"
#: The catalogue shared with the TypeScript SDK: ``sdk/catalogue.json`` is a link to the repository's
#: ``presets/catalogue.json``, whose content an installed package carries (package data).
BUNDLED_CATALOGUE: Final = FilePath(__file__).parent / "catalogue.json"
#: Every preset, by its catalogue key.
PRESET_KEYS: Final = (
    "vendor_a", "vendor_b", "compatible", "vendor_c", "vendor_d", "vendor_e",
    "vendor_f", "vendor_g", "vendor_h", "vendor_i", "vendor_j", "vendor_k",
)  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CatalogueHeader(_Strict):
    """The header a preset injects and how its secret value is formed."""

    name: str
    value: Literal["bearer", "raw"]


class CatalogueAgentModel(_Strict):
    """What a preset implies for an ``AgentModel``."""

    provider: Literal["vendor_a", "vendor_b", "vendor_c", "vendor_d", "vendor_e", "compatible"]
    basePath: str


class CatalogueDefaults(_Strict):
    """Defaults of a preset's parameters."""

    basePath: str


class PresetEntry(_Strict):
    """One preset's row of the catalogue (keys as in the JSON file)."""

    python: str
    typescript: str
    params: list[Literal["region", "models", "resource", "upstream", "basePath"]]
    defaults: CatalogueDefaults | None = None
    upstream: str
    header: CatalogueHeader
    paths: list[str]
    modelPattern: str | None = None
    agentModel: CatalogueAgentModel


class Catalogue(_Strict):
    """The catalogue's shape, checked like ``presets/catalogue.ts`` checks it."""

    version: Literal[1]
    method: Literal["POST"]
    presets: dict[str, PresetEntry]


assert set(AGENT_PROVIDERS) == {"vendor_a", "vendor_b", "vendor_c", "vendor_d", "vendor_e", "compatible"}

_cache: dict[str, Catalogue] = {}


def _parse_catalogue(data: object, source: str) -> Catalogue:
    try:
        catalogue = Catalogue.model_validate(data)
    except ValidationError as error:
        from_validation_error(f"preset catalogue {source}", error)
    if set(catalogue.presets) != set(PRESET_KEYS) or any(
        re.fullmatch(r"[a-z_]+", e.python) is None or not e.paths for e in catalogue.presets.values()
    ):
        raise InvalidArgumentException(f"preset catalogue {source}: presets: must list every preset once")
    return catalogue


def load_catalogue() -> Catalogue:
    """The catalogue in force: the operator's file when ``SDK_PRESET_CATALOGUE`` is set, else the shared
    one. Reading it makes no network call."""
    source = os.environ.get(CATALOGUE_ENV, "")
    if source not in _cache:
        path = FilePath(source) if source else BUNDLED_CATALOGUE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            shown = source or "(bundled)"
            raise InvalidArgumentException(f"preset catalogue {shown}: cannot be read as JSON") from None
        _cache[source] = _parse_catalogue(data, source or "(bundled)")
    return _cache[source]


load_catalogue()  # the shared catalogue is read at import: a broken one fails at once


def _fill(template: str, params: Mapping[str, object], model: str | None = None) -> str:
    def value(found: re.Match[str]) -> str:
        item = model if found.group(1) == "model" else params.get(found.group(1))
        return item if isinstance(item, str) else ""

    return re.sub(r"\{(\w+)\}", value, template)


def _encode(model: str) -> str:
    """``encodeURIComponent``: clients percent-encode path labels (``:`` becomes ``%3A``)."""
    return quote(model, safe="!*'()")


def _build(key: str, secret: SecretSource, params: dict[str, object]) -> SecretGateway:
    catalogue = load_catalogue()
    entry = catalogue.presets[key]
    filled: dict[str, object] = {"basePath": entry.defaults.basePath if entry.defaults else "", **params}
    models = params.get("models")
    model_list = list(models) if isinstance(models, list) else None
    paths: list[str] = []
    for template in entry.paths:
        if "{model}" not in template:
            paths.append(_fill(template, filled))
            continue
        for model in model_list or []:
            for path in dict.fromkeys([_fill(template, filled, model), _fill(template, filled, _encode(model))]):
                paths.append(path)
    binding = PresetBinding(
        preset=key,
        provider=entry.agentModel.provider,
        base_path=_fill(entry.agentModel.basePath, filled),
        models=None if model_list is None else tuple(model_list),
    )
    rate = params.get("rate_per_minute", 0)
    return SecretGateway._of_preset(
        binding,
        _fill(entry.upstream, filled),
        {entry.header.name: secret},
        [(catalogue.method, path) for path in paths],
        rate if isinstance(rate, int) else 0,
    )


def _start(name: str, secret: object, rate_per_minute: object) -> tuple[Checker, int]:
    """Checks the secret first (alone), then starts the options' checks with the rate."""
    check = Checker(name)
    if not check_secret_source(check, ("secret",), secret):
        check.done()
    return check, check_rate_per_minute(check, ("rate_per_minute",), rate_per_minute)


def _check_models(
    check: Checker, key: str, value: object, problem: Callable[[str], str | None]
) -> list[str]:
    if not check_list(check, ("models",), value):
        return []
    assert isinstance(value, (list, tuple))
    before = check.count()
    for i, model in enumerate(value):
        if not isinstance(model, str):
            check.add(("models", i), expected("a string", model))
    if check.count() > before:
        return []
    ids = [str(model) for model in value]
    if not ids:
        check.add(("models",), "must list at least one model")
        return []
    entry = load_catalogue().presets[key]
    source = entry.modelPattern or "^.+$"
    pattern = re.compile(source[:-1] + r"\Z" if source.endswith("$") and not source.endswith("\\$") else source)
    for i, model in enumerate(ids):
        message = problem(model)
        if message is None and pattern.search(model) is None:
            message = f"model id must match {source}"
        if message is not None:
            check.add(("models", i), message)
    unique = list(dict.fromkeys(ids))
    rules = sum(len(entry.paths) * (1 if _encode(m) == m else 2) for m in unique)
    if rules > ALLOW_RULES_PER_ROUTE:
        check.add(("models",), f"too many models: they need {rules} allow rules, at most {ALLOW_RULES_PER_ROUTE}")
    return unique


def _check_upstream(check: Checker, value: object) -> None:
    parsed = parse_upstream(value)
    if isinstance(parsed, str):
        check.add(("upstream",), parsed)


def _check_base_path(check: Checker, value: object) -> None:
    if check_string(check, ("base_path",), value):
        problem = base_path_problem(str(value))
        if problem is not None:
            check.add(("base_path",), problem)


class RateOnlyPreset(Protocol):
    """A preset whose only option is the rate."""

    def __call__(self, secret: SecretSource, *, rate_per_minute: int = 0) -> SecretGateway: ...


def _rate_only(key: str, name: str) -> RateOnlyPreset:
    def build(secret: SecretSource, *, rate_per_minute: int = 0) -> SecretGateway:
        check, rate = _start(name, secret, rate_per_minute)
        check.done()
        return _build(key, secret, {"rate_per_minute": rate})

    build.__name__ = build.__qualname__ = name
    return build


def vendor_a_gateway(
    secret: SecretSource, *, region: str, models: Sequence[str], rate_per_minute: int = 0
) -> SecretGateway:
    """vendor_a: region-dependent host, model id in the path; only the given models' converse paths.
    ARNs are unsupported (an encoded slash is rejected): use a model or inference-profile id.

    Example: ``vendor_a_gateway("vendor-a-key", region="us-east-1", models=["vendor.model-v1:0"])``
    """

    def problem(model: str) -> str | None:
        if model.startswith("arn:"):
            return "ARNs are unsupported: use a model or inference-profile id"
        if "/" in model or "%" in model:
            return "must not contain / or % (an encoded slash is rejected)"
        return None

    check, rate = _start("vendor_a_gateway", secret, rate_per_minute)
    check_string(check, ("region",), region, REGION, REGION_RULE)
    ids = _check_models(check, "vendor_a", models, problem)
    check.done()
    return _build("vendor_a", secret, {"rate_per_minute": rate, "region": region, "models": ids})


def vendor_d_gateway(secret: SecretSource, *, models: Sequence[str], rate_per_minute: int = 0) -> SecretGateway:
    """vendor_d: model id in the path; only the given models, without the ``models/`` prefix, which must
    include the agent's small model."""
    check, rate = _start("vendor_d_gateway", secret, rate_per_minute)
    ids = _check_models(
        check, "vendor_d", models, lambda m: "must not carry the models/ prefix" if m.startswith("models/") else None
    )
    check.done()
    return _build("vendor_d", secret, {"rate_per_minute": rate, "models": ids})


_RESOURCE: Final = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def vendor_e_gateway(secret: SecretSource, *, resource: str, rate_per_minute: int = 0) -> SecretGateway:
    """vendor_e: per-resource subdomain (``resource`` is 1-63 ``[a-z0-9-]``, no leading or trailing
    hyphen), bare key in ``api-key``; the model id is the deployment name."""
    check, rate = _start("vendor_e_gateway", secret, rate_per_minute)
    check_string(
        check, ("resource",), resource, _RESOURCE, "must be 1-63 characters [a-z0-9-], no leading or trailing hyphen"
    )
    check.done()
    return _build("vendor_e", secret, {"rate_per_minute": rate, "resource": resource})


def compatible_gateway(
    secret: SecretSource, *, upstream: str, base_path: str = "", rate_per_minute: int = 0
) -> SecretGateway:
    """Any chat-completions server the sandbox can reach over https (never localhost, loopback,
    ``0.0.0.0`` or link-local); allows ``<base_path>/chat/completions``."""
    check, rate = _start("compatible_gateway", secret, rate_per_minute)
    _check_upstream(check, upstream)
    _check_base_path(check, base_path)
    check.done()
    return _build("compatible", secret, {"rate_per_minute": rate, "upstream": upstream, "basePath": base_path})


def vendor_k_gateway(
    secret: SecretSource, *, upstream: str, base_path: str = "/v1", rate_per_minute: int = 0
) -> SecretGateway:
    """vendor_k: a customer-owned model proxy at an https upstream with no path. Give its virtual key a
    budget and a model list: the gateway cannot see the model."""
    check, rate = _start("vendor_k_gateway", secret, rate_per_minute)
    _check_upstream(check, upstream)
    _check_base_path(check, base_path)
    check.done()
    return _build("vendor_k", secret, {"rate_per_minute": rate, "upstream": upstream, "basePath": base_path})


#: vendor_b: messages API, bare key in ``x-api-key``.
vendor_b_gateway: Final[RateOnlyPreset] = _rate_only("vendor_b", "vendor_b_gateway")
#: vendor_c: responses and chat-completions, Bearer key.
vendor_c_gateway: Final[RateOnlyPreset] = _rate_only("vendor_c", "vendor_c_gateway")
#: vendor_f: multi-model router (provider ``compatible``, base path ``/api/v1``).
vendor_f_gateway: Final[RateOnlyPreset] = _rate_only("vendor_f", "vendor_f_gateway")
#: vendor_g: fast inference (provider ``compatible``, base path ``/vendor_c/v1``).
vendor_g_gateway: Final[RateOnlyPreset] = _rate_only("vendor_g", "vendor_g_gateway")
#: vendor_h: chat completions (provider ``compatible``, base path ``/v1``).
vendor_h_gateway: Final[RateOnlyPreset] = _rate_only("vendor_h", "vendor_h_gateway")
#: vendor_i: chat completions at the host root (provider ``compatible``, no base path).
vendor_i_gateway: Final[RateOnlyPreset] = _rate_only("vendor_i", "vendor_i_gateway")
#: vendor_j: responses API in vendor_c's wire style (provider ``vendor_c``).
vendor_j_gateway: Final[RateOnlyPreset] = _rate_only("vendor_j", "vendor_j_gateway")

#: Every builder by catalogue key; each is named as the catalogue's ``python`` column says.
PRESET_BUILDERS: Final[Mapping[str, Callable[..., SecretGateway]]] = {
    "vendor_a": vendor_a_gateway,
    "vendor_b": vendor_b_gateway,
    "compatible": compatible_gateway,
    "vendor_c": vendor_c_gateway,
    "vendor_d": vendor_d_gateway,
    "vendor_e": vendor_e_gateway,
    "vendor_f": vendor_f_gateway,
    "vendor_g": vendor_g_gateway,
    "vendor_h": vendor_h_gateway,
    "vendor_i": vendor_i_gateway,
    "vendor_j": vendor_j_gateway,
    "vendor_k": vendor_k_gateway,
}

for _key, _builder in PRESET_BUILDERS.items():
    if load_catalogue().presets[_key].python != _builder.__name__:
        fail("preset catalogue", ("presets", _key, "python"), "must name the Python builder of the preset")
