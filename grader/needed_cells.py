"""Which cells grading needs: a lesson's demo cells (plots, timings, explorations) cost most of a
notebook's grading time and decide no mark, so a demo cell is left out when no cell that runs
reads a name it could have set.

Only a demo cell exactly as the lesson released it may be left out (its source is one of the
released notebook's code cells that are neither answers nor tests); a cell the learner wrote or
changed always runs. Walking from the last cell back, a name is *live* when a cell that runs
reads it; a released demo cell runs when a name it may set is live: every name it binds, and
every name a call may mutate, whatever it is given and the object whose method it calls (a demo
that calls the learner's ``MySigmoid.apply`` before its test runs), imported names excepted. A
cell that reaches names the analysis cannot see (``eval``, ``globals()``, ``import *``, a
magic, a syntax error) makes every earlier cell run, or, if it is a demo cell, runs itself. Grading's torch settings and random generators
are its own (``autograder.torch_state``), so a demo cell's global settings cannot move a mark.
"""

import ast
import builtins
import functools
import symtable
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager
from nbgrader.utils import is_grade, is_solution

from .notebook_format import skipped_when_grading

# What reaches the notebook's names behind the analysis's back: by name, or through an attribute
UNSEEN_ACCESS = frozenset({"eval", "exec", "globals", "locals", "get_ipython", "__import__",
                           "__builtins__", "__main__"})
NAMESPACE_WITHOUT_ARGUMENTS = frozenset({"vars", "dir"})  # vars(obj) reads obj, vars() globals
UNSEEN_ATTRIBUTES = frozenset({"modules", "f_globals", "f_locals", "f_back", "user_ns",
                               "__dict__", "__globals__"})
BUILTIN_NAMES = frozenset(dir(builtins)) - UNSEEN_ACCESS
NOT_NEEDED_NOTE = ("Not run while grading: a demo cell, as released, that sets nothing a graded "
                   "cell uses.\n")


@dataclass(frozen=True)
class CellNames:
    binds: frozenset[str]  # names the cell assigns, defines, imports or deletes
    imported: frozenset[str]  # of those, names bound by an import (a call does not mutate them)
    reads: frozenset[str]  # names it loads (in nested functions too), builtins excepted
    late_reads: frozenset[str]  # of those, the ones loaded in a function body: when it is called
    handed: frozenset[str]  # names given to a call, or whose method it calls: it may mutate them
    opaque: bool  # reaches names no analysis of its text can see


OPAQUE = CellNames(*[frozenset()] * 5, True)
_transformer = TransformerManager()


@functools.lru_cache(maxsize=4096)
def cell_names(source: str) -> CellNames:
    """The global names a code cell binds and reads, from its text (IPython syntax included);
    a function's parameters and locals are its own (Python's ``symtable``). Kept per source
    text (the answer is immutable): a lesson's released cells are read once per grading
    process, not once per notebook."""
    try:
        code = _transformer.transform_cell(source)
        tree, table = ast.parse(code), symtable.symtable(code, "<cell>", "exec")
    except (SyntaxError, ValueError):
        return OPAQUE
    binds, reads, late = set(), set(), set()
    _scope_names(table, binds, reads, late, in_function=False)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return OPAQUE
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in NAMESPACE_WITHOUT_ARGUMENTS and not node.args:
            return OPAQUE
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.ctx, (ast.Store, ast.Del)):
            binds.add(_base_name(node) or "")
        if isinstance(node, ast.Attribute) and node.attr in UNSEEN_ATTRIBUTES:
            return OPAQUE
    if reads & UNSEEN_ACCESS or "__main__" in source:
        return OPAQUE
    binds.discard("")
    handed = {name.id for call in ast.walk(tree) if isinstance(call, ast.Call)
              for part in [*call.args, *call.keywords] for name in ast.walk(part)
              if isinstance(name, ast.Name)}
    handed |= {_base_name(call.func) for call in ast.walk(tree)
               if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)}
    reads -= BUILTIN_NAMES
    return CellNames(frozenset(binds), frozenset(imported), frozenset(reads),
                     frozenset(late & reads), frozenset(handed & reads), False)


def _scope_names(table, binds: set, reads: set, late: set, in_function: bool) -> None:
    """Collect the global names ``table``'s scope and those inside it bind and read."""
    top = table.get_type() == "module"
    for symbol in table.get_symbols():
        name = symbol.get_name()
        is_global = top or symbol.is_global()
        if not is_global:
            continue
        if symbol.is_referenced():
            reads.add(name)
            if in_function:
                late.add(name)
        if symbol.is_assigned() or symbol.is_imported() or (top and symbol.is_namespace()) or \
                (not top and symbol.is_declared_global()):
            binds.add(name)
    for child in table.get_children():
        _scope_names(child, binds, reads, late, in_function or child.get_type() == "function")


def _base_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def demo_sources(released) -> list[str]:
    """The code cells of a released notebook that grading may leave out: neither answers nor
    tests (locked ones included: nbgrader puts their released source back)."""
    return [cell.source for cell in released.cells if cell.cell_type == "code"
            and not is_grade(cell) and not is_solution(cell) and cell.source.strip()]


def unneeded_cells(notebook, released_demos: list[str]) -> set[int]:
    """Indices of ``notebook``'s code cells that grading need not run (module docstring). A
    name read inside a function body is read whenever the function is called, possibly after
    any later cell: such names are live everywhere, until no new one appears."""
    demos = set(released_demos)
    code = [(index, cell) for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" and cell.source.strip() and not skipped_when_grading(cell)]
    names = {index: cell_names(cell.source) for index, cell in code}
    imported = set().union(*(found.imported for found in names.values()))
    imported -= set().union(*(found.binds - found.imported for found in names.values()))
    candidates = {index for index, cell in code if cell.source in demos
                  and not is_grade(cell) and not is_solution(cell) and not names[index].opaque}
    live_everywhere: set[str] = set()
    while True:
        live, unneeded, everything_live = set(live_everywhere), set(), False
        for index, _ in reversed(code):
            found = names[index]
            may_set = found.binds | (found.handed - imported)
            if index in candidates and not everything_live and not may_set & live:
                unneeded.add(index)
                continue
            everything_live = everything_live or found.opaque
            live |= found.reads
        late = set().union(*(names[index].late_reads for index, _ in code
                             if index not in unneeded))
        if late <= live_everywhere:
            return unneeded
        live_everywhere |= late
