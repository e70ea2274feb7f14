"""The package's import graph is one-way (issue 29, item 4; ``python/README.md``, "Layers"): no import
cycle among ``sdk``'s modules (``sdk.compat`` included), counting every intra-package import wherever it
is written (at module level, inside a function, under ``if TYPE_CHECKING:``), so a cycle cannot come back
hidden behind a deferred import; and the lifecycle layer (option checks, control-plane calls, the
``Launched`` record, pool slots, snapshots) reaches no handle module. Read from the source with ``ast``:
nothing is imported, no control plane needed."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sdk"

#: The lifecycle layer: what creates, connects, lists, reads and ends sandboxes and returns data.
LIFECYCLE = (
    "sdk._option_checks",
    "sdk._sandbox_options",
    "sdk._lifecycle_options",
    "sdk._command_options",
    "sdk._snapshot_facts",
    "sdk._control_plane",
    "sdk._sandbox_lifecycle",
    "sdk._pool_core",
    "sdk.snapshot",
)
#: What the lifecycle layer must not reach: the handles, and the handle state every part of a handle
#: (commands, files, pty, agent...) is built on, so none of those either.
HANDLES = (
    "sdk.sandbox",
    "sdk._sandbox_handle",
    "sdk.async_sandbox",
    "sdk.sandbox_pool",
    "sdk._sandbox_core",
    "sdk",
)


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package under ``package`` (a folder named as the package), by dotted name."""
    names = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(package: Path) -> dict[str, set[str]]:
    """Each module's intra-package imports, from every import statement of its source (module level,
    functions, ``if TYPE_CHECKING:`` blocks alike); ``from .m import name`` counts as importing
    ``m.name`` when that is a module, else ``m``."""
    modules = module_names(package)
    root = package.name
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" for alias in node.names]
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target.split(".")[0] == root and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            pushed = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    pushed = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or not."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph(PACKAGE))
    assert found == [], "import cycles among sdk's modules (deferred and TYPE_CHECKING imports counted):\n" + (
        "\n".join(" ".join(component) for component in found)
    )


def test_the_lifecycle_layer_reaches_no_handle() -> None:
    graph = import_graph(PACKAGE)
    assert set(LIFECYCLE) | set(HANDLES) <= set(graph)  # a module renamed must be renamed here too
    for module in LIFECYCLE:
        assert reached(graph, module) & set(HANDLES) == set(), module


def test_a_deferred_import_closing_a_cycle_is_found(tmp_path: Path) -> None:
    """The check itself: a cycle held by a function-level import, or one under ``TYPE_CHECKING``, is a
    cycle (the shape ``sdk._sandbox_options`` and ``sdk._sandbox_extras`` had before issue 29)."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from .handle import Handle\n",
        "handle.py": "from . import options\nclass Handle: ...\n",
        "options.py": "def check(pool):\n    from .pool import Pool  # sdk.pool imports this module\n",
        "pool.py": "from .handle import Handle\nclass Pool: ...\n",
        "sub/__init__.py": "",
        "sub/extras.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..sub.base import Base\n"
        ),
        "sub/base.py": "from . import extras\nclass Base: ...\n",
        "leaf.py": "import pkg.options\n",
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    graph = import_graph(package)
    assert graph["pkg.leaf"] == {"pkg.options"}
    assert cycles(graph) == [["pkg.handle", "pkg.options", "pkg.pool"], ["pkg.sub.base", "pkg.sub.extras"]]
