"""The answers an exercise's mutants are made from, and the part of each that belongs to it.

An exercise's answers are the lesson's solution (its answer cells, run after the lesson's first
code cell) and its catalogued correct-but-unusual answers. Of an answer, only the exercise's own
definition and the helpers it reaches are mutated: a top-level statement belongs when it binds a
name the exercise reads (its class, a kernel, ``BLOCK``), or registers something on one
(``@silu_mul.register_fake``, ``op.register_autograd(...)``); another exercise's definition in
the same cell never does.
"""

import ast
from dataclasses import dataclass

from autograder.exercises import EXERCISES
from tools import catalogue
from tools.solutions import cells, namespace, run_cells

SOLUTION = "solution"


@dataclass(frozen=True)
class Answer:
    exercise: str
    origin: str  # "solution", or the name of a catalogued unusual answer
    sources: tuple[str, ...]  # the cells that run, in order
    lesson: str | None = None  # the course lesson whose cells these are
    notebook: str | None = None  # or the instructor's notebook they come from

    def load(self, sources: tuple[str, ...]):
        """What ``sources`` (these cells, one perhaps mutated) define as the exercise."""
        if self.lesson is not None:
            return namespace(self.lesson, list(sources))[self.exercise]
        if self.notebook is not None:
            return run_cells(list(sources), "instructor_notebook", self.notebook)[self.exercise]
        (code,) = sources
        return catalogue.load(self.exercise, code)

    @property
    def answer_cells(self) -> range:
        """The cells a mutant may edit: not a notebook's first cell (its imports)."""
        whole_notebook = self.lesson is not None or self.notebook is not None
        return range(1 if whole_notebook else 0, len(self.sources))


def solution(exercise: str) -> Answer:
    """The lesson's solution of ``exercise``: the lesson's first code cell and answer cells."""
    lesson = EXERCISES[exercise].lesson
    return Answer(exercise, SOLUTION, tuple(cells(lesson)), lesson)


def answers(exercise: str) -> list[Answer]:
    """The lesson's solution of ``exercise``, then its catalogued unusual answers."""
    return [solution(exercise), *(Answer(exercise, entry.name, (entry.code,))
                                  for entry in catalogue.unusual() if entry.exercise == exercise)]


def _binds(statement: ast.stmt) -> set[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    targets = {ast.Assign: lambda s: s.targets, ast.AnnAssign: lambda s: [s.target],
               ast.AugAssign: lambda s: [s.target]}.get(type(statement), lambda s: [])(statement)
    return {node.id for target in targets for node in ast.walk(target)
            if isinstance(node, ast.Name)}


def _reads(node: ast.AST) -> set[str]:
    return {name.id for name in ast.walk(node)
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)}


def _registers_on(statement: ast.stmt, names: set[str]) -> bool:
    """A call on one of ``names`` (reached, and defined in the answer: not ``triton``), or a
    definition decorated by one (``@op.register_fake``)."""
    if isinstance(statement, ast.Expr):
        return bool(_reads(statement) & names)
    decorators = getattr(statement, "decorator_list", [])
    return any(_reads(decorator) & names for decorator in decorators)


def scope(answer: Answer) -> dict[int, list[int]]:
    """Cell index -> the positions, in that cell's module body, of the top-level statements
    that belong to the exercise."""
    others = set(EXERCISES) - {answer.exercise}
    statements = [(index, position, statement) for index in answer.answer_cells
                  for position, statement in enumerate(ast.parse(answer.sources[index]).body)]
    defined = {name for _, _, statement in statements for name in _binds(statement)}
    reached, chosen = {answer.exercise}, set()
    grown = True
    while grown:
        grown = False
        for key, (_, _, statement) in enumerate(statements):
            bound = _binds(statement)
            if key in chosen or bound & others:
                continue
            if bound & reached or _registers_on(statement, reached & defined):
                chosen.add(key)
                reached |= _reads(statement)
                grown = True
    found: dict[int, list[int]] = {}
    for key in sorted(chosen):
        index, position, _ = statements[key]
        found.setdefault(index, []).append(position)
    return found
