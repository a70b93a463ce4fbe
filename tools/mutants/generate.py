"""Every single-point mutant of an answer: each operator at each live node of the exercise's
own statements, as replacements of the cell's text, deduplicated by the lines they change. A
mutant that is not valid Python is dropped before it runs (``Mutant.compiles``); one that fails
to define the exercise is dropped when run."""

import ast
import difflib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from .answers import Answer, scope
from .edits import Replacement, Text, splice
from .operators import OPERATORS
from .operators.tree import Edit, Tree

SILENT_CALLS = {"print", "warn"}  # what a statement only shows: never graded


@dataclass(frozen=True)
class Mutant:
    exercise: str
    origin: str  # the answer it was made from: "solution" or a catalogued answer's name
    operator: str
    family: str
    cell: int  # which of the answer's sources it edits
    edit: Edit  # the replacements in that cell's text
    before: str  # the edited lines, stripped, joined by newlines
    after: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What an ``EquivalentMutant`` names: (exercise, operator, before, after)."""
        return self.exercise, self.operator, self.before, self.after

    @property
    def rank(self) -> str:
        """A stable pseudo-random rank, for capping: unchanged by edits elsewhere."""
        return hashlib.sha1("\0".join([self.origin, *self.key]).encode()).hexdigest()

    def sources(self, answer: Answer) -> tuple[str, ...]:
        """The answer's cells with this mutant's edit."""
        return tuple(splice(source, self.edit) if index == self.cell else source
                     for index, source in enumerate(answer.sources))

    def compiles(self, answer: Answer) -> bool:
        try:
            compile(self.sources(answer)[self.cell], "<mutant>", "exec")
        except SyntaxError:
            return False
        return True

    def diff(self, answer: Answer) -> str:
        """A unified diff of the edited lines, without context."""
        old, new = answer.sources[self.cell], self.sources(answer)[self.cell]
        title = f"{self.exercise} ({self.origin}, cell {self.cell})"
        return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), title,
                                               f"mutant ({self.operator})", n=0, lineterm=""))


def _arid(node: ast.AST, parent: ast.AST | None) -> bool:
    """A node no grader sees: a docstring, an import, an assert, a raise, an annotation, a
    decorator (``drop_once_differentiable`` edits those from the function), a print."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assert, ast.Raise)):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        function = node.value.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        if name in SILENT_CALLS:
            return True
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node in parent.decorator_list or node is getattr(parent, "returns", None)
    return (isinstance(parent, ast.arg) and node is parent.annotation) or (
        isinstance(parent, ast.AnnAssign) and node is parent.annotation)


def _live_nodes(statements: list[ast.stmt], tree: Tree) -> Iterator[ast.AST]:
    pending = list(reversed(statements))
    while pending:
        node = pending.pop()
        if _arid(node, tree.parents.get(node)):
            continue
        yield node
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def _before_after(text: Text, edit: Edit) -> tuple[tuple[int, ...], str, str]:
    """(where, before, after): the offsets of the lines an edit touches, and those whole
    lines, stripped, before and after it (several places: each place's lines in turn)."""
    places: list[list] = []  # [first, last, replacements] of each run of touched lines
    for replacement in sorted(edit, key=lambda r: (r.start, r.end)):
        first = text.source.rfind("\n", 0, replacement.start) + 1
        last = text.source.find("\n", replacement.end)
        last = len(text.source) if last == -1 else last
        if places and first <= places[-1][1]:
            places[-1][1] = max(last, places[-1][1])
            places[-1][2].append(replacement)
        else:
            places.append([first, last, [replacement]])
    before, after = [], []
    for first, last, replacements in places:
        lines = text.source[first:last]
        before += _lines(lines)
        after += _lines(splice(lines, tuple(Replacement(r.start - first, r.end - first, r.text)
                                            for r in replacements)))
    return tuple(place[0] for place in places), "\n".join(before), "\n".join(after)


def mutants(answer: Answer) -> list[Mutant]:
    """Every distinct mutant of ``answer``, in source order then operator order (not yet
    compiled: ``Mutant.compiles``)."""
    found, seen = [], set()
    for cell, positions in scope(answer).items():
        original = answer.sources[cell]
        tree = Tree(original)
        statements = [tree.module.body[position] for position in positions]
        for node in _live_nodes(statements, tree):
            for operator in OPERATORS:
                for edit in operator.edits(node, tree):
                    places, before, after = _before_after(tree.text, edit)
                    if before == after or (cell, places, after) in seen:
                        continue
                    seen.add((cell, places, after))
                    found.append(Mutant(answer.exercise, answer.origin, operator.name,
                                        operator.family, cell, edit, before, after))
    return found
