"""A lesson's code as its solutions show it (every WORKED region filled in) or as the learner's
copy has it, taken piece by piece, so that a test can run one live checker on one answer."""

import ast
import contextlib
import io
import math

import torch

from grader.lessons import LESSONS, WORKED, with_worked


def source(lesson: str, learner: bool = False) -> str:
    """``lesson``'s source with its worked regions as the solutions (or the learner) have them."""
    return with_worked((LESSONS / f"{lesson}.py").read_text(), not learner)


def worked_regions(lesson: str) -> list[str]:
    """The worked halves of ``lesson``'s WORKED regions, in order."""
    return [match[1] for match in WORKED.finditer((LESSONS / f"{lesson}.py").read_text())]


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    return set()


def definitions(lesson: str, *names: str, learner: bool = False, **given) -> dict:
    """A fresh namespace (torch, F, math and ``given``) in which every top-level function,
    class or assignment of ``lesson`` that defines one of ``names`` has run, in lesson order."""
    text = source(lesson, learner)
    namespace = {"torch": torch, "F": torch.nn.functional, "math": math, **given}
    for node in ast.parse(text).body:
        if _defined(node) & set(names):
            exec(ast.get_source_segment(text, node), namespace)  # noqa: S102 - our lesson
    return namespace


def code_cells(lesson: str, learner: bool = False) -> list[str]:
    """The code of ``lesson``'s code cells, header lines dropped."""
    return [cell.split("\n", 1)[1] for cell in source(lesson, learner).split("\n# %%")[1:]
            if not cell.startswith((" [markdown]", " nbgrader"))]


def cell_from(lesson: str, start: str) -> str:
    """The solutions' code of ``lesson`` from ``start`` to the end of the cell holding it."""
    text = source(lesson)
    begin = text.index(start)
    end = text.find("\n# %%", begin)
    return text[begin:end if end >= 0 else len(text)]


def printed(run, *args, **kwargs) -> list[str]:
    """The lines ``run(*args, **kwargs)`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run(*args, **kwargs)
    return out.getvalue().splitlines()


def run_code(code: str, namespace: dict) -> list[str]:
    """The lines ``code`` prints when run in ``namespace``."""
    return printed(exec, code, namespace)


def run_cells(lesson: str, starts: list[str], learner: bool = False, **slip) -> list[str]:
    """What the cells holding each of ``starts`` print, run in order in one namespace, with
    ``slip`` replacing names once the first has run (the learner's answer cell, typically)."""
    cells = code_cells(lesson, learner)
    namespace = {"torch": torch, "F": torch.nn.functional, "math": math}
    lines = []
    for index, start in enumerate(starts):
        lines += run_code(next(cell for cell in cells if start in cell), namespace)
        if index == 0:
            namespace.update(slip)
    return lines


def live_check(lesson: str, name: str, learner: bool = False, **slip) -> list[str]:
    """What the checker cell of ``name`` prints after the cell that defines ``name``: the cell
    that starts ``if name is None:``, or the collapsed one that defines ``check_name`` and
    calls it; ``slip`` replaces that definition."""
    cells = code_cells(lesson, learner)
    namespace = {"torch": torch, "math": math}
    exec(next(cell for cell in cells if cell.startswith((f"{name} = ", f"def {name}("))),
         namespace)  # noqa: S102 - our lesson
    namespace.update(slip)
    return run_code(next(cell for cell in cells if cell.startswith(
        (f"if {name} is None:", f"def check_{name}("))), namespace)
