"""Numerical edits: a branch threshold moved, eps moved across a root, a dtype narrowed."""

import ast

from .registry import operator
from .tree import Tree, grouped, method_name, numeric_value

ROOTS = {"sqrt", "rsqrt"}
NARROWER = {"float64": "float32", "float32": "float16", "double": "float", "float": "half"}


@operator("numeric")
def move_threshold(node, tree: Tree):
    """A number a comparison tests against doubled or halved (0 to +-1e-6)."""
    if not isinstance(node, ast.Compare):
        return
    for side in [node.left, *node.comparators]:
        value = numeric_value(side)
        if value is None or isinstance(value, bool):
            continue
        for moved in ([value * 2, value / 2] if value else [1e-06, -1e-06]):
            yield (tree.text.replace(side, repr(moved)),)


def _is_root(node) -> bool:
    """``torch.sqrt(a)``, ``sqrt(a)``, ``a.sqrt()``, ``torch.rsqrt(a)``, ..."""
    return method_name(node) in ROOTS or (
        isinstance(node, ast.Call) and getattr(node.func, "id", None) in ROOTS)


def _root_argument(root: ast.Call) -> ast.AST:
    return root.args[0] if root.args else root.func.value


@operator("numeric")
def move_eps_across_root(node, tree: Tree):
    """``sqrt(a + eps)`` as ``sqrt(a) + eps``, and ``sqrt(a) + eps`` as ``sqrt(a + eps)``."""
    text = tree.text
    if _is_root(node) and isinstance(total := _root_argument(node), ast.BinOp) and isinstance(
            total.op, ast.Add):
        root = text.source[text.start(node):text.start(total)] + text.segment(total.left) + \
            text.source[text.end(total):text.end(node)]
        yield (text.replace(node, f"{root} + {grouped(text, total.right)}"),)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_root(node.left):
        root = node.left
        argument = _root_argument(root)
        inside = f"{text.segment(argument)} + {grouped(text, node.right)}"
        if root.args:
            edited = (text.source[text.start(root):text.start(argument)] + inside
                      + text.source[text.end(argument):text.end(root)])
        else:  # `a.sqrt()`: the sum needs its brackets
            edited = f"({inside}).{root.func.attr}()"
        yield (text.replace(node, edited),)


@operator("numeric")
def narrow_accumulator(node, tree: Tree):
    """A dtype one step narrower: float64 to float32, float32 to float16 (``.float()`` to
    ``.half()``), where an accumulator or a result is made."""
    if (isinstance(node, ast.Attribute) and node.attr in ("float64", "float32")
            and isinstance(node.value, ast.Name) and node.value.id in ("torch", "tl")):
        yield (tree.text.replace(node, f"{node.value.id}.{NARROWER[node.attr]}"),)
    elif method_name(node) in ("double", "float") and not node.args:
        yield (tree.text.replace(node, f"{tree.text.segment(node.func.value)}"
                                 f".{NARROWER[node.func.attr]}()"),)
