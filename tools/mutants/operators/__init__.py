"""Single-point edits of an answer, by family: ``autograd`` (what the Function's contract
with autograd requires), ``numeric`` (thresholds, eps, precision) and ``code`` (arithmetic,
dims, reductions, copies). Each operator is a small function ``edits(node, tree)`` that yields
the edits it makes at one AST node."""

from . import autograd, numeric, code  # noqa: F401 (registers them, in this order)
from .registry import FAMILIES, OPERATORS, Operator

__all__ = ["FAMILIES", "OPERATORS", "Operator"]
