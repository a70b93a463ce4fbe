"""Plain-code edits: arithmetic and comparisons, constants, dims, reductions, terms,
statements, copies and views."""

import ast

from ..edits import Replacement
from .registry import operator
from .tree import Tree, grouped, method_name, numeric_value, on_module

ARITHMETIC = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"),
              ast.Div: ("/", "*"), ast.Pow: ("**", "*"), ast.FloorDiv: ("//", "/")}
COMPARISONS = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="),
               ast.GtE: (">=", ">"), ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="),
               ast.IsNot: ("is not", "is"), ast.Is: ("is", "is not"),
               ast.NotIn: ("not in", "in"), ast.In: ("in", "not in")}
DIM_METHODS = {"sum", "mean", "softmax", "log_softmax", "logsumexp", "amax", "amin", "max",
               "min", "cumsum", "cumprod", "prod", "argmax", "argmin", "unsqueeze", "squeeze",
               "norm", "var", "std", "cummax", "sort", "flip", "size", "transpose", "narrow",
               "select", "gather", "index_select", "all", "any", "flatten", "movedim"}
REDUCTIONS = {"sum", "mean", "amax", "amin", "logsumexp", "norm", "var", "std", "prod", "all",
              "any"}
COPIES = {"contiguous", "clone"}


def _swap_between(tree: Tree, left: ast.AST, right: ast.AST, old: str, new: str):
    start, end, between = tree.text.between(left, right)
    if old in between:
        yield (Replacement(start, end, between.replace(old, new, 1)),)


@operator("code")
def swap_arithmetic(node, tree: Tree):
    """+ and -, * and /, ** to *, // to /; a negation dropped."""
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        yield from _swap_between(tree, node.left, node.right, *ARITHMETIC[type(node.op)])
    elif isinstance(node, ast.AugAssign) and type(node.op) in ARITHMETIC:
        old, new = ARITHMETIC[type(node.op)]
        yield from _swap_between(tree, node.target, node.value, f"{old}=", f"{new}=")
    elif (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
          and numeric_value(node) is None):
        yield (tree.text.replace(node, grouped(tree.text, node.operand)),)


@operator("code")
def swap_comparison(node, tree: Tree):
    """< and <=, > and >=, == and !=, is and is not, in and not in."""
    if isinstance(node, ast.Compare):
        for left, op, right in zip([node.left, *node.comparators], node.ops, node.comparators):
            if type(op) in COMPARISONS:
                yield from _swap_between(tree, left, right, *COMPARISONS[type(op)])


def _dim_argument(call: ast.Call) -> ast.AST | None:
    """The literal dim of a reduction or shape method, positional or keyword."""
    for keyword in call.keywords:
        if keyword.arg in ("dim", "axis") and numeric_value(keyword.value) is not None:
            return keyword.value
    position = 1 if on_module(call) else 0
    if method_name(call) in DIM_METHODS and len(call.args) > position:
        argument = call.args[position]
        return argument if isinstance(numeric_value(argument), int) else None
    return None


@operator("code")
def change_dim(node, tree: Tree):
    """A literal dim (or axis) moved by one: -1 to 0 or -2, 1 to 0 or 2."""
    if isinstance(node, ast.Call) and (argument := _dim_argument(node)) is not None:
        dim = numeric_value(argument)
        for other in (dim + 1, dim - 1):
            yield (tree.text.replace(argument, str(other)),)


@operator("code")
def flip_keepdim(node, tree: Tree):
    """keepdim flipped, or keepdim=True added to a reduction over a dim."""
    if not isinstance(node, ast.Call):
        return
    for keyword in node.keywords:
        if keyword.arg == "keepdim" and isinstance(keyword.value, ast.Constant):
            yield (tree.text.replace(keyword.value, str(not keyword.value.value)),)
            return
    if method_name(node) in REDUCTIONS and _dim_argument(node) is not None:
        last = [*node.args, *node.keywords][-1]
        yield (tree.text.insert(tree.text.end(last), ", keepdim=True"),)


@operator("code")
def swap_reduction(node, tree: Tree):
    """sum and mean swapped (torch and tensor methods; Triton has no mean)."""
    name = method_name(node)
    if name in ("sum", "mean") and not (on_module(node) and node.func.value.id == "tl"):
        start, end = tree.text.end(node.func.value), tree.text.end(node.func)
        dotted = tree.text.source[start:end]
        yield (Replacement(start, end, dotted.replace(name, "mean" if name == "sum" else "sum")),)


@operator("code")
def drop_term(node, tree: Tree):
    """A term of a sum or difference, or a factor or divisor of a product, left out."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        yield (tree.text.replace(node, grouped(tree.text, node.left, node)),)
        if isinstance(node.op, (ast.Add, ast.Mult)):
            yield (tree.text.replace(node, grouped(tree.text, node.right, node)),)


def _bound_before(statement: ast.stmt, tree: Tree) -> set[str]:
    """Names the enclosing function binds (parameters included) before ``statement``."""
    function = tree.function(statement)
    if function is None:
        return set()
    names = {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}
    for node in ast.walk(function):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                and (node.lineno, node.col_offset) < (statement.lineno, statement.col_offset)):
            names.add(node.id)
    return names


@operator("code")
def drop_statement(node, tree: Tree):
    """A call, an update or a reassignment left out (``pass`` in its place)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield (tree.text.replace(node, "pass"),)
    elif isinstance(node, ast.AugAssign):
        yield (tree.text.replace(node, "pass"),)
    elif isinstance(node, ast.Assign):
        targets = [leaf for target in node.targets for leaf in ast.walk(target)
                   if isinstance(leaf, (ast.Name, ast.Attribute, ast.Subscript))]
        names = {leaf.id for leaf in targets if isinstance(leaf, ast.Name)}
        if tree.function(node) is not None and names <= _bound_before(node, tree):
            yield (tree.text.replace(node, "pass"),)


@operator("code")
def drop_copy(node, tree: Tree):
    """``.contiguous()`` or ``.clone()`` left out."""
    if method_name(node) in COPIES and not node.args and not on_module(node):
        yield (tree.text.replace(node, tree.text.segment(node.func.value)),)


@operator("code")
def add_copy(node, tree: Tree):
    """A returned tensor cloned, or a saved tensor made contiguous (a copy where none was)."""
    if isinstance(node, ast.Return) and node.value is not None:
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        for value in values:
            if isinstance(value, ast.Name):
                yield (tree.text.replace(value, f"{value.id}.clone()"),)
    elif method_name(node) == "save_for_backward":
        for argument in node.args:
            if isinstance(argument, ast.Name):
                yield (tree.text.replace(argument, f"{argument.id}.contiguous()"),)


@operator("code")
def reshape_to_view(node, tree: Tree):
    """``.reshape(...)`` as ``.view(...)`` (fails on a tensor no view can reshape)."""
    if method_name(node) == "reshape" and not on_module(node):
        start, end = tree.text.end(node.func.value), tree.text.end(node.func)
        yield (Replacement(start, end, tree.text.source[start:end].replace("reshape", "view")),)


@operator("code")
def nudge_constant(node, tree: Tree):
    """A number moved: an int by one, a float doubled or halved (0.0 to 1.0)."""
    if isinstance(node, ast.Constant) and isinstance(tree.parents.get(node), ast.UnaryOp):
        return  # `-1` is nudged whole
    value = numeric_value(node)
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        others = [value + 1, value - 1]
    else:
        others = [value * 2, value / 2] if value else [1.0]
    for other in others:
        yield (tree.text.replace(node, repr(other)),)


@operator("code")
def flip_boolean(node, tree: Tree):
    """True and False swapped."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield (tree.text.replace(node, str(not node.value)),)
