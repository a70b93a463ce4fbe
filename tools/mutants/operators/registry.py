"""The named operators, each in one family, in the order they are tried: where two make the
same mutant, the first names it (a threshold moved before a constant nudged)."""

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .tree import Edit, Tree

FAMILIES = ("autograd", "numeric", "code")  # the autograd contract, numerics, plain code


@dataclass(frozen=True)
class Operator:
    name: str
    family: str
    edits: Callable[[ast.AST, Tree], Iterator[Edit]]  # the mutants it makes at one node

    @property
    def description(self) -> str:
        return (self.edits.__doc__ or "").strip().splitlines()[0]


OPERATORS: list[Operator] = []


def operator(family: str):
    """Register the decorated ``edits(node, tree)`` as an operator of ``family``."""
    if family not in FAMILIES:
        raise ValueError(f"unknown operator family {family!r}; known: {', '.join(FAMILIES)}")

    def register(edits):
        OPERATORS.append(Operator(edits.__name__, family, edits))
        return edits

    return register
