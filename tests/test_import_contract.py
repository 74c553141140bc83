"""The house's import contract: imports point one way (pages → workflows → models → plain
computations), and no module imports itself back through others.

Every import counts, a function's local import too: a cycle hidden inside a function is
still a cycle. A new module is ranked by its name (views, admin, urls, forms and commands
are pages; models are models; COMPUTATIONS below are plain; the rest are workflows).
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("exams", "cohorts", "jobs", "accounts", "config")

PAGES, WORKFLOWS, MODELS, COMPUTATIONS = 4, 3, 2, 1
LAYER_NAMES = {PAGES: "pages", WORKFLOWS: "workflows", MODELS: "models", COMPUTATIONS: "plain computations"}

# Plain computations: no HTTP, no models; every layer may import them.
COMPUTATION_MODULES = {
    "exams.letters", "exams.bounds", "exams.csvcells", "exams.markdown", "exams.tuning",
    "exams.room.grading", "exams.room.draw", "exams.room.navigation",
    "exams.study.builder", "exams.study.scheduling", "exams.study.readiness",
    "exams.statistics.formulas", "exams.statistics.rasch",
    "exams.bank.cues", "exams.bank.exhibits",
    "config.prepared", "config.routers", "config.envvars",
}
COMPUTATION_PACKAGES = ("exams.bank.formats",)
PAGE_PARTS = {"views", "admin", "admin_imports", "urls", "forms", "templatetags", "management", "apps", "wsgi", "asgi",
              "settings"}


def layer(module: str) -> int:
    parts = module.split(".")
    if module in COMPUTATION_MODULES or module.startswith(COMPUTATION_PACKAGES):
        return COMPUTATIONS
    if PAGE_PARTS & set(parts):
        return PAGES
    if "models" in parts:
        return MODELS
    return WORKFLOWS


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).with_suffix("")
            if "migrations" in relative.parts:
                continue
            parts = list(relative.parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """The project modules this file imports (a name imported from a package counts as its
    submodule when there is one, else as the package)."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    found.discard(module)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    return {module: imports_of(path, module, known) for module, path in modules.items()}


def test_imports_point_down_the_layers(graph):
    upward = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            # A package's __init__ re-exporting its own modules is not an upward import.
            if target.startswith(module + "."):
                continue
            if layer(target) > layer(module):
                upward.append(f"{module} ({LAYER_NAMES[layer(module)]}) imports {target} ({LAYER_NAMES[layer(target)]})")
    assert upward == []


def test_no_import_cycle(graph):
    cycles = strongly_connected(graph)
    assert [sorted(c) for c in cycles if len(c) > 1] == []


def test_background_tasks_call_workflows_never_admin_code(graph):
    tasks = [module for module in graph if module.endswith(".tasks")]
    assert tasks
    for module in tasks:
        assert not [t for t in graph[module] if "admin" in t.split(".") or "views" in t.split(".")], module


def test_the_letters_module_imports_nothing_of_the_project(graph):
    assert graph["exams.letters"] == set()


def test_no_top_level_package_holds_more_than_twelve_modules():
    for package in PACKAGES:
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            if {"migrations", "commands", "__pycache__"} & set(folder.relative_to(ROOT).parts):
                continue
            assert len(list(folder.glob("*.py"))) <= 12, folder


def test_the_contract_catches_an_upward_import_and_a_cycle():
    """The checks above can fail: a computation importing a model, and two modules importing each other."""
    assert layer("exams.room.grading") < layer("exams.models")
    assert strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}) == [{"a", "b"}, {"c"}] or \
        sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}))) == [["a", "b"], ["c"]]


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]

    def visit(root):
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    result.append(component)
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result
