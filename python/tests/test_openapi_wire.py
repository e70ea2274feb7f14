"""The Python wire types checked against the control plane's OpenAPI document (issue 15: "the wire types
generated from or checked against the control plane's OpenAPI document").

The document is the one the session's control plane serves at ``GET /v1/openapi.json`` (generated from
the zod schemas of ``protocol/``). :data:`ANSWERS` and :data:`REQUESTS` map every pydantic model the SDK
parses a control-plane answer with, or builds a control-plane request with, to the operations whose
schema it stands for. For each pair the wire names (aliases), requiredness and JSON types (``type``,
``enum``/``const``, nullability, lower bounds, nested objects, maps and arrays) must agree:

- an answer model must take exactly the schema's properties (its models refuse unknown keys), require
  exactly the schema's required ones, and accept exactly the schema's types;
- a request model must send only properties the schema has, always send the schema's required ones,
  and send each with the schema's type (an optional field is ``X | None = None``, dumped without nulls);
- a property an answer may leave out (not ``required``, not nullable: ``previewKey`` of connect) is
  ``X | None = None`` in its model, None when absent; the model refuses an explicit ``null`` itself
  (``ConnectedSandbox``'s validator, tested in ``test_ports.py``).

Every control-plane call the SDK makes (each ``*_call`` of ``sdk._control_plane`` and each ``*_feed`` of
``sdk._feeds``) must be an operation of the document, and its parser must take an answer made from that
operation's schema and give the mapped model (a list of it for an operation that answers an array:
:data:`ARRAY_ANSWERS`), and each query parameter it sends must be one of the operation's.
"""

from __future__ import annotations

import inspect
import json
import types
import urllib.request
from urllib.parse import parse_qsl
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from conftest import ControlPlane
from sdk import _control_plane as plane_calls
from sdk import _feeds as feeds
from sdk import daemon_events
from sdk._feeds import SandboxEvent
from sdk.daemon_events import InspectionRecord
from sdk._wire import (
    BuildTemplateRequest,
    ConnectedSandbox,
    CreatedSandbox,
    CreateSandboxRequest,
    EgressPolicyWire,
    EmptyAnswer,
    ExposePortRequest,
    ForkedSandboxes,
    ForkRequest,
    PreviewPortInfo,
    PreviewPorts,
    SandboxInfo,
    SandboxMetrics,
    SetTimeoutRequest,
    SnapshotInfo,
    SnapshotList,
    TemplateBuiltLine,
    TemplateFailedLine,
    TemplateStepLine,
)

#: Answer model -> (method, path, status, media type) of every operation it parses the answer of.
ANSWERS: dict[type[BaseModel], list[tuple[str, str, str, str]]] = {
    CreatedSandbox: [("post", "/v1/sandboxes", "201", "application/json")],
    ConnectedSandbox: [("post", "/v1/sandboxes/{sandboxId}/connect", "200", "application/json")],
    SandboxInfo: [
        ("get", "/v1/sandboxes/{sandboxId}", "200", "application/json"),
        ("delete", "/v1/sandboxes/{sandboxId}", "200", "application/json"),
        ("post", "/v1/sandboxes/{sandboxId}/pause", "200", "application/json"),
        ("post", "/v1/sandboxes/{sandboxId}/timeout", "200", "application/json"),
    ],
    SandboxEvent: [
        ("get", "/v1/sandboxes/{sandboxId}/events", "200", "application/x-ndjson"),
        ("get", "/v1/events", "200", "application/x-ndjson"),
    ],
    InspectionRecord: [("get", "/v1/inspect", "200", "application/x-ndjson")],
    SandboxMetrics: [("get", "/v1/sandboxes/{sandboxId}/metrics", "200", "application/json")],
    SnapshotInfo: [("post", "/v1/sandboxes/{sandboxId}/snapshots", "201", "application/json")],
    SnapshotList: [
        ("get", "/v1/snapshots", "200", "application/json"),
        ("get", "/v1/sandboxes/{sandboxId}/snapshots", "200", "application/json"),
    ],
    ForkedSandboxes: [("post", "/v1/sandboxes/{sandboxId}/fork", "201", "application/json")],
    EmptyAnswer: [("delete", "/v1/snapshots/{snapshotId}", "200", "application/json")],
    EgressPolicyWire: [("put", "/v1/sandboxes/{sandboxId}/egress", "200", "application/json")],
    PreviewPorts: [("get", "/v1/sandboxes/{sandboxId}/previews", "200", "application/json")],
    PreviewPortInfo: [("put", "/v1/sandboxes/{sandboxId}/previews/{port}", "200", "application/json")],
    # The lines of a template build: each model is the alternative of the answer's ``oneOf`` whose
    # ``type`` it has.
    TemplateStepLine: [("post", "/v1/templates", "200", "application/x-ndjson")],
    TemplateBuiltLine: [("post", "/v1/templates", "200", "application/x-ndjson")],
    TemplateFailedLine: [("post", "/v1/templates", "200", "application/x-ndjson")],
}

#: Answer model -> (method, path, status, media type) of every operation whose answer is a JSON array of
#: it (the model is checked against the array's ``items``).
ARRAY_ANSWERS: dict[type[BaseModel], list[tuple[str, str, str, str]]] = {
    SandboxInfo: [("get", "/v1/sandboxes", "200", "application/json")],
}

#: Request model -> (method, path) of the operation whose JSON body it builds.
REQUESTS: dict[type[BaseModel], tuple[str, str]] = {
    CreateSandboxRequest: ("post", "/v1/sandboxes"),
    BuildTemplateRequest: ("post", "/v1/templates"),
    ForkRequest: ("post", "/v1/sandboxes/{sandboxId}/fork"),
    EgressPolicyWire: ("put", "/v1/sandboxes/{sandboxId}/egress"),
    ExposePortRequest: ("put", "/v1/sandboxes/{sandboxId}/previews/{port}"),
    SetTimeoutRequest: ("post", "/v1/sandboxes/{sandboxId}/timeout"),
}

#: Each control-plane call of the SDK: how the test makes it (sandbox id ``SBX``), and its operation.
SBX = "0123456789ab"
SNAP = "snap_0123456789abcdef"
CALLS: dict[str, tuple[Any, tuple[str, str]]] = {
    "create_call": (lambda p: plane_calls.create_call(p, {}), ("post", "/v1/sandboxes")),
    "connect_call": (lambda p: plane_calls.connect_call(p, SBX, "t"), ("post", "/v1/sandboxes/{sandboxId}/connect")),
    "info_call": (lambda p: plane_calls.info_call(p, SBX, "t"), ("get", "/v1/sandboxes/{sandboxId}")),
    "list_call": (lambda p: plane_calls.list_call(p, "k"), ("get", "/v1/sandboxes")),
    "list_call:filtered": (
        lambda p: plane_calls.list_call(p, "k", ("running", "ended"), {"owner": "ci", "a b": "c&d=e"}),
        ("get", "/v1/sandboxes"),
    ),
    "timeout_call": (
        lambda p: plane_calls.timeout_call(p, SBX, "t", 60_000),
        ("post", "/v1/sandboxes/{sandboxId}/timeout"),
    ),
    "metrics_call": (lambda p: plane_calls.metrics_call(p, SBX, "t"), ("get", "/v1/sandboxes/{sandboxId}/metrics")),
    "metrics_call:range": (
        lambda p: plane_calls.metrics_call(p, SBX, "k", 1_700_000_000_000, 1_700_000_060_000),
        ("get", "/v1/sandboxes/{sandboxId}/metrics"),
    ),
    "kill_call": (lambda p: plane_calls.kill_call(p, SBX, "t"), ("delete", "/v1/sandboxes/{sandboxId}")),
    "pause_call": (
        lambda p: plane_calls.pause_call(p, SBX, "t"),
        ("post", "/v1/sandboxes/{sandboxId}/pause"),
    ),
    "egress_call": (
        lambda p: plane_calls.egress_call(p, SBX, "t", {"mode": "closed", "allow": [], "deny": []}),
        ("put", "/v1/sandboxes/{sandboxId}/egress"),
    ),
    "build_template_call": (lambda p: plane_calls.build_template_call(p, {}), ("post", "/v1/templates")),
    "snapshot_call": (
        lambda p: plane_calls.snapshot_call(p, SBX, "t"),
        ("post", "/v1/sandboxes/{sandboxId}/snapshots"),
    ),
    "snapshots_call": (lambda p: plane_calls.snapshots_call(p, "k"), ("get", "/v1/snapshots")),
    "snapshots_call:sandbox": (
        lambda p: plane_calls.snapshots_call(p, "k", SBX),
        ("get", "/v1/sandboxes/{sandboxId}/snapshots"),
    ),
    "fork_call": (lambda p: plane_calls.fork_call(p, SBX, "k", 2), ("post", "/v1/sandboxes/{sandboxId}/fork")),
    "expose_port_call": (
        lambda p: plane_calls.expose_port_call(p, SBX, "t", 8000, True),
        ("put", "/v1/sandboxes/{sandboxId}/previews/{port}"),
    ),
    "public_ports_call": (
        lambda p: plane_calls.public_ports_call(p, SBX, "t"),
        ("get", "/v1/sandboxes/{sandboxId}/previews"),
    ),
    "delete_snapshot_call": (
        lambda p: plane_calls.delete_snapshot_call(p, SNAP, "k"),
        ("delete", "/v1/snapshots/{snapshotId}"),
    ),
}
FEEDS: dict[str, tuple[Any, tuple[str, str]]] = {
    "sandbox_feed": (lambda url: feeds.sandbox_feed(url, SBX, "t", 1), ("get", "/v1/sandboxes/{sandboxId}/events")),
    "all_sandboxes_feed": (lambda url: feeds.all_sandboxes_feed(url, "k"), ("get", "/v1/events")),
    "inspection_feed": (lambda url: daemon_events.inspection_feed(url, "k", None), ("get", "/v1/inspect")),
}
#: Feeds of sandboxd, not of the control plane (not in the document).
DAEMON_FEEDS = {"daemon_feed"}

#: A JSON type in a form both sides reduce to: ``("string",)``, ``("enum", values)``, ``("null",)``,
#: ``("array", item)``, ``("map", value)``, ``("object", name)``, ``("any",)`` or a frozenset of them.
JsonType = Any


@pytest.fixture(scope="module")
def document(control_plane: ControlPlane) -> dict[str, Any]:
    """The OpenAPI document the control plane serves."""
    with urllib.request.urlopen(f"{control_plane.url}/v1/openapi.json", timeout=60) as answer:
        loaded: dict[str, Any] = json.loads(answer.read())
    assert loaded["openapi"].startswith("3.1"), "not an OpenAPI 3.1 document"
    return loaded


def _union(kinds: list[JsonType]) -> JsonType:
    flat: set[JsonType] = set()
    for kind in kinds:
        flat |= kind if isinstance(kind, frozenset) else {kind}
    return next(iter(flat)) if len(flat) == 1 else frozenset(flat)


def _kinds(kind: JsonType) -> set[JsonType]:
    return set(kind) if isinstance(kind, frozenset) else {kind}


def schema_type(schema: dict[str, Any], where: str, objects: dict[str, dict[str, Any]]) -> JsonType:
    """``schema``'s JSON type; an object with properties is recorded in ``objects`` under ``where``."""
    alternatives = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(alternatives, list):
        return _union([schema_type(s, where, objects) for s in alternatives])
    if "const" in schema:
        return ("enum", frozenset([schema["const"]]))
    if "enum" in schema:
        return ("enum", frozenset(schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([schema_type({**schema, "type": k}, where, objects) for k in kind])
    if kind == "array":
        return ("array", schema_type(schema.get("items", {}), f"{where}[]", objects))
    if kind == "object" and "properties" in schema:
        objects[where] = schema
        return ("object", where)
    if kind == "object":
        return ("map", schema_type(schema.get("additionalProperties", {}), f"{where}{{}}", objects))
    return (kind,) if isinstance(kind, str) else ("any",)


def python_type(annotation: Any, where: str, models: dict[str, type[BaseModel]]) -> JsonType:
    """The JSON type a strict pydantic field of ``annotation`` accepts; a model is recorded in
    ``models`` under ``where``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is type(None) or annotation is None:
        return ("null",)
    if origin in (Union, types.UnionType):
        return _union([python_type(a, where, models) for a in args])
    if origin is Literal:
        return ("enum", frozenset(args))
    if origin is list:
        return ("array", python_type(args[0], f"{where}[]", models))
    if origin is dict:
        return ("map", python_type(args[1], f"{where}{{}}", models))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        models[where] = annotation
        return ("object", where)
    simple = {str: ("string",), bool: ("boolean",), int: ("integer",), float: ("number",)}
    if annotation in simple:
        return simple[annotation]
    return ("any",) if annotation is Any else ("unknown", repr(annotation))


def _bounds(info: FieldInfo) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            found["minimum"] = float(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Gt):
            found["exclusiveMinimum"] = float(item.gt)  # type: ignore[arg-type]
    return found


def _schema_bounds(schema: dict[str, Any]) -> dict[str, float]:
    return {k: float(schema[k]) for k in ("minimum", "exclusiveMinimum") if k in schema}


def compare(model: type[BaseModel], schema: dict[str, Any], where: str, request: bool) -> list[str]:
    """Every difference between ``model`` and the object ``schema`` (empty when they agree)."""
    problems: list[str] = []
    properties: dict[str, Any] = schema["properties"]
    required = set(schema.get("required", []))
    fields = {(info.alias or name): info for name, info in model.model_fields.items()}
    closed = schema.get("additionalProperties") is False
    if not request and (model.model_config.get("extra") == "forbid") != closed:
        rule = "refuse unknown keys (the schema's object is closed)" if closed else "take other keys (open)"
        problems.append(f"{where}: {model.__name__} must {rule}")
    for name in sorted(set(fields) - set(properties)):
        problems.append(f"{where}.{name}: {model.__name__} has it, the schema does not")
    for name in sorted(set(properties) - set(fields)):
        if not request or name in required:
            problems.append(f"{where}.{name}: the schema has it, {model.__name__} does not")
    for name in sorted(set(fields) & set(properties)):
        info, prop = fields[name], properties[name]
        here = f"{where}.{name}"
        if request and name in required and not info.is_required():
            problems.append(f"{here}: required by the schema, optional in {model.__name__}")
        elif not request and info.is_required() != (name in required):
            problems.append(f"{here}: required {name in required} in the schema, {info.is_required()} in the model")
        models: dict[str, type[BaseModel]] = {}
        objects: dict[str, dict[str, Any]] = {}
        mine = python_type(info.annotation, here, models)
        theirs = schema_type(prop, here, objects)
        # An answer's property that may be left out but is never null reads as None when absent.
        absent = not request and name not in required and ("null",) not in _kinds(theirs)
        if request and not info.is_required():
            if info.default is not None:
                problems.append(f"{here}: an optional request field must default to None (left out)")
            mine = _union([k for k in _kinds(mine) if k != ("null",)])
        elif absent and not info.is_required() and info.default is None:
            mine = _union([k for k in _kinds(mine) if k != ("null",)])
        if mine != theirs:
            problems.append(f"{here}: JSON type {mine} in {model.__name__}, {theirs} in the schema")
        if _bounds(info) != _schema_bounds(prop) and not (request and not _bounds(info)):
            problems.append(f"{here}: bounds {_bounds(info)} in the model, {_schema_bounds(prop)} in the schema")
        for path in sorted(set(models) & set(objects)):
            problems += compare(models[path], objects[path], path, request)
    return problems


def operation(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The document's operation, or a failure naming it."""
    found = document["paths"].get(path, {}).get(method)
    if not isinstance(found, dict):
        pytest.fail(f"{method.upper()} {path} is not in the control plane's OpenAPI document")
    return found


def answer_schema(document: dict[str, Any], method: str, path: str, status: str, media: str) -> dict[str, Any]:
    """The schema of an operation's answer."""
    responses = operation(document, method, path)["responses"]
    assert status in responses, f"{method.upper()} {path} answers no {status}"
    schema: dict[str, Any] = responses[status]["content"][media]["schema"]
    return schema


def variant(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``schema``, or for a ``oneOf`` of lines the alternative whose ``type`` constant is ``model``'s."""
    if "oneOf" not in schema:
        return schema
    kind = get_args(model.model_fields["type"].annotation)
    found = [s for s in schema["oneOf"] if s["properties"]["type"].get("const") in kind]
    assert len(found) == 1, f"{model.__name__}: no single alternative of the answer has its type"
    alternative: dict[str, Any] = found[0]
    return alternative


def example(schema: dict[str, Any]) -> Any:
    """A value of ``schema`` with every property, for the parsers (the first alternative of a union)."""
    if "anyOf" in schema:
        return example(schema["anyOf"][0])
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: example(prop) for name, prop in schema.get("properties", {}).items()}
    values = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None, "array": []}
    return values.get(kind, None) if isinstance(kind, str) else None


@pytest.mark.parametrize("model", list(dict.fromkeys([*ANSWERS, *ARRAY_ANSWERS])), ids=lambda m: m.__name__)
def test_answer_models_match_the_document(document: dict[str, Any], model: type[BaseModel]) -> None:
    """Each answer model agrees with the schema of every operation it parses (the items of an array)."""
    problems: list[str] = []
    for method, path, status, media in ANSWERS.get(model, []):
        schema = variant(answer_schema(document, method, path, status, media), model)
        problems += compare(model, schema, f"{method.upper()} {path} {status}", request=False)
    for method, path, status, media in ARRAY_ANSWERS.get(model, []):
        schema = answer_schema(document, method, path, status, media)
        assert schema.get("type") == "array", f"{method.upper()} {path} does not answer an array"
        problems += compare(model, schema["items"], f"{method.upper()} {path} {status}[]", request=False)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("model", list(REQUESTS), ids=lambda m: m.__name__)
def test_request_models_match_the_document(document: dict[str, Any], model: type[BaseModel]) -> None:
    """Each request model sends only what the operation's body schema takes, with its types."""
    method, path = REQUESTS[model]
    schema = operation(document, method, path)["requestBody"]["content"]["application/json"]["schema"]
    problems = compare(model, schema, f"{method.upper()} {path} body", request=True)
    assert not problems, "\n".join(problems)


def test_every_control_plane_call_is_in_the_document(document: dict[str, Any]) -> None:
    """Every ``*_call`` of ``sdk._control_plane`` is an operation of the document, parsed with its model."""
    plane = plane_calls.control_plane("http://plane.test")
    made = {name for name, f in inspect.getmembers(plane_calls, inspect.isfunction) if name.endswith("_call")}
    covered = {name.split(":")[0] for name in CALLS}
    assert made == covered, f"control-plane calls this test does not map: {sorted(made ^ covered)}"
    for name, (make, (method, path)) in CALLS.items():
        call = make(plane)
        made_path, _, query = call.path.partition("?")
        made_path = made_path.replace(SNAP, "{snapshotId}").replace(SBX, "{sandboxId}").replace("/8000", "/{port}")
        assert (call.method.lower(), made_path) == (method, path), name
        spec = operation(document, method, path)
        sent = {key for key, _ in parse_qsl(query, keep_blank_values=True)}
        taken = {p["name"] for p in spec.get("parameters", []) if p.get("in") == "query"}
        assert sent <= taken, f"{name}: query parameters {sorted(sent - taken)} are not the operation's"
        models = [m for m, ops in ANSWERS.items() if any(op[:2] == (method, path) for op in ops)]
        status = next(s for s in spec["responses"] if s.startswith("2"))
        (schema,) = [content["schema"] for content in spec["responses"][status]["content"].values()]
        if schema.get("type") == "array":  # an array of a model
            (model,) = [m for m, ops in ARRAY_ANSWERS.items() if any(op[:2] == (method, path) for op in ops)]
            assert not models, f"{name}: {method.upper()} {path} answers an array, not {models}"
            parsed_items = call.parse([example(schema["items"])])
            assert isinstance(parsed_items, list) and len(parsed_items) == 1, f"{name} does not parse a list"
            assert isinstance(parsed_items[0], model), f"{name} does not parse with {model}"
            continue
        alternatives = schema.get("oneOf", [schema])  # an NDJSON answer's kinds of line
        assert len(models) == len(alternatives), f"{name}: answer models of {method.upper()} {path}: {models}"
        for alternative in alternatives:
            parsed = call.parse(example(alternative))
            assert isinstance(parsed, tuple(models)), f"{name} does not parse with {models}"


def test_every_feed_is_in_the_document(document: dict[str, Any]) -> None:
    """Every control-plane feed is an NDJSON operation of the document whose lines it takes."""
    made = {
        name
        for module in (feeds, daemon_events)
        for name, f in inspect.getmembers(module, inspect.isfunction)
        if name.endswith("_feed") and f.__module__ == module.__name__
    } - DAEMON_FEEDS
    assert made == set(FEEDS), f"feeds this test does not map: {sorted(made ^ set(FEEDS))}"
    for name, (make, (method, path)) in FEEDS.items():
        feed = make("http://plane.test")
        assert feed.url.removeprefix("http://plane.test").replace(SBX, "{sandboxId}") == path, name
        schema = answer_schema(document, method, path, "200", "application/x-ndjson")
        assert feed.accept([example(schema)]), f"{name} skips an event made from the document's schema"


def test_the_create_body_is_a_create_request() -> None:
    """``CreateOptions.body()`` is built with :class:`CreateSandboxRequest` (so the check above covers
    what is sent), without nulls."""
    from sdk._sandbox_options import resolve_create_options

    options = resolve_create_options(
        template="sdk-base", allow_internet_access=False, timeout=60, memory_mb=None, cpus=0.5,
        control_plane_url=None, request_timeout=None, isolation="gvisor", egress={"mode": "closed"},
        metadata={"owner": "ci"},
    )
    body = options.body()
    assert CreateSandboxRequest.model_validate(body, strict=True).wire() == body
    assert "memoryMb" not in body and body["cpus"] == 0.5 and None not in body.values()
    assert body["isolation"] == "gvisor"
    assert body["egress"] == {"mode": "closed", "allow": [], "deny": []}
    assert body["metadata"] == {"owner": "ci"}


def test_every_error_code_of_the_document_has_its_exception(document: dict[str, Any]) -> None:
    """The error envelope (parsed by hand in ``sdk.errors``): its codes are the SDK's, and its keys."""
    from sdk.errors import ERROR_CLASS

    envelope = answer_schema(document, "get", "/v1/sandboxes/{sandboxId}", "default", "application/json")
    assert set(envelope["properties"]) == {"code", "message", "context"}
    assert set(envelope["required"]) == {"code", "message"}
    assert set(envelope["properties"]["code"]["enum"]) == set(ERROR_CLASS)
