"""The shape of the code: two programs in two packages, no import cycles, small modules.

``autograder`` runs inside the learner's kernel beside untrusted code: it must stay small and
never pull in the grading machinery. ``grader`` runs on the instructor's machine and must start
without torch (``make grades`` has no reason to load it).
"""

import ast
import functools
import subprocess
import sys
from graphlib import TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "grader", "widgets", "tools")
HOST_LIBRARIES = ("nbgrader", "nbclient", "nbconvert", "jupyter_client", "dask", "distributed",
                  "grader")
# A module of code stays a few screens long. The catalogue's modules are data (answers a learner
# might write, grouped by exercise or concept), held to the same count only once each is split
# by concept (issue 69): until then they are left out, as the lesson sources are.
MAX_LINES = 410
DATA = ("tools/catalogue",)


def _modules(package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of ``package``."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = {name: path for package in PACKAGES for name, path in _modules(package).items()}


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, at module level or inside a function, resolved to
    absolute names (``from package import module`` counts as importing the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names
                      if f"{base}.{alias.name}" in MODULES}
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (built when a test asks, not at collection)."""
    return {name: {imported for imported in _imports(name, path) if imported in MODULES}
            for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(_modules("autograder")))
def test_the_kernel_package_imports_no_host_library(name):
    """Does this module of the in-kernel grading library stay off nbgrader, kernels and Dask?"""
    banned = sorted(imported for imported in _imports(name, MODULES[name])
                    if imported.split(".")[0] in HOST_LIBRARIES)
    assert banned == [], f"{name} imports {banned}"


def test_importing_the_kernel_package_loads_no_host_library():
    """Does a kernel that imports the whole grading library load none of the host's?"""
    names = sorted(_modules("autograder"))
    probe = (f"import importlib, sys\nfor name in {names!r}: importlib.import_module(name)\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HOST_LIBRARIES!r}))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_the_host_package_starts_without_torch():
    """Can the instructor's side import every module of ``grader`` without loading torch?
    (One interpreter imports them, each after the modules it imports, and names the first that
    brought torch in: the culprit, since what it imports was already clean.)"""
    modules = _modules("grader").keys()
    host = {name: _graph()[name] & modules for name in modules}
    names = list(TopologicalSorter(host).static_order())
    probe = ("import importlib, sys\n"
             f"for name in {names!r}:\n"
             "    importlib.import_module(name)\n"
             "    if 'torch' in sys.modules:\n"
             "        print(name)\n"
             "        break\n")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert loaded == "", f"importing {loaded} imports torch"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or a self-import."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    """Can every module be understood (and imported) without going round in circles?
    Imports inside functions count: hiding a cycle there does not remove it."""
    graph = {name: {imported for imported in imports if imported != name
                    and not name.startswith(imported + ".")}  # a package's own parents
             for name, imports in _graph().items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles():
    """Would the cycle test notice one (a test that cannot fail proves nothing)?"""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_widgets_may_import_autograder_never_the_reverse():
    """Does the grading library stay free of the views built on it?"""
    reverse = sorted((name, imported) for name in _modules("autograder")
                     for imported in _graph()[name] if imported.split(".")[0] == "widgets")
    assert reverse == []


def test_no_module_is_too_long():
    """Is every module outside the lesson sources at most a few screens long?"""
    files = [path for path in ROOT.rglob("*.py")
             if not any(part in (".venv", "lessons", ".git", "instructor", "artifacts", "build")
                        or part.startswith(".") for part in path.relative_to(ROOT).parts)
             and not str(path.relative_to(ROOT)).startswith(DATA)]
    long = sorted(f"{path.relative_to(ROOT)}: {len(path.read_text().splitlines())}"
                  for path in files if len(path.read_text().splitlines()) > MAX_LINES)
    assert long == []
