"""The package's shape as it runs: no import cycle (imports inside functions counted), and the quarantine imports
nothing from the layers above it.

``pytest tests/unit/test_structure.py -q -s`` prints the graph's size (modules, edges) with the checks.
"""

from __future__ import annotations

import ast
from pathlib import Path

TUNER = Path(__file__).resolve().parents[2] / "tuner"
ABOVE_THE_QUARANTINE = ("algorithms", "api", "cli", "experiment", "launch", "replay", "review", "schedulers",
                        "searchers", "where")


def runtime_imports() -> dict[str, set[str]]:
    """Each tuner module -> the tuner modules it imports when it runs, at load time or inside a function (the
    imports under ``if TYPE_CHECKING:`` aside: they never run). ``from tuner.x import y`` names the module
    ``tuner.x.y`` where there is one, else ``tuner.x``."""
    modules = {}
    for path in TUNER.rglob("*.py"):
        name = ".".join(path.relative_to(TUNER.parent).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _runtime_nodes(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                         for a in node.names]  # fmt: skip
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            graph[name] |= {n for n in named if n in modules and n != name}
    return graph


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    hidden = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    return [node for node in ast.walk(tree) if id(node) not in hidden]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back():
    graph = runtime_imports()
    print(f"\ntuner/: {len(graph)} modules, {sum(map(len, graph.values()))} runtime imports between them")
    assert cycles(graph) == []


def test_the_quarantine_imports_nothing_from_the_layers_above_it():
    graph = runtime_imports()
    up = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if m.startswith("tuner.ray_compat")
        for t in targets
        if t.count(".") and t.split(".")[1] in ABOVE_THE_QUARANTINE
    )
    assert up == []


def test_the_sweep_reads_an_experiment_through_its_one_reader_and_only_writes_the_review():
    """Schedulers, searchers and the launch path read an experiment through tuner/experiment.py, never the
    review; of the review, the launch path only writes the page and the summary at a sweep's end."""
    writes = {"tuner.review.report.page_file", "tuner.review.results"}
    graph = runtime_imports()
    reads = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if m.startswith(("tuner.schedulers", "tuner.searchers", "tuner.launch"))
        for t in targets
        if t.startswith("tuner.review") and not (m.startswith("tuner.launch") and t in writes)
    )
    assert reads == []
