"""What an operator sees of an answer: its parsed source, each node's parent, and the helpers
that name autograd's parts (``ctx``, its methods, the saved tensors, the incoming gradients)."""

import ast
from collections.abc import Iterator

from ..edits import Replacement, Text

Edit = tuple[Replacement, ...]  # one mutant: every replacement applied at once
MODULES = {"torch", "F", "tl", "triton", "math", "np", "numpy"}  # `torch.sum(x, 0)`: dim second


class Tree:
    """A parsed answer cell with parent links."""

    def __init__(self, source: str):
        self.text = Text(source)
        self.module = ast.parse(source)
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(self.module):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def function(self, node: ast.AST) -> ast.FunctionDef | None:
        """The innermost function around ``node``."""
        return next((a for a in self.ancestors(node) if isinstance(a, ast.FunctionDef)), None)

    def owner(self, node: ast.AST) -> ast.ClassDef | None:
        """The class around ``node`` (a Function subclass), if any."""
        return next((a for a in self.ancestors(node) if isinstance(a, ast.ClassDef)), None)

    def statement(self, node: ast.AST) -> ast.stmt:
        """The statement that holds ``node``."""
        return node if isinstance(node, ast.stmt) else next(
            a for a in self.ancestors(node) if isinstance(a, ast.stmt))


def parameters(function: ast.FunctionDef) -> list[str]:
    return [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]


def takes_ctx(function: ast.FunctionDef | None) -> bool:
    """A forward, backward or setup_context: its first parameter is ``ctx``."""
    return function is not None and parameters(function)[:1] == ["ctx"]


def is_backward(function: ast.FunctionDef | None) -> bool:
    """A backward: ``ctx`` then the incoming gradients (``grad_output``, ``grad_y1``, ...)."""
    return takes_ctx(function) and any(name.startswith("grad") for name in parameters(function))


def incoming_gradients(function: ast.FunctionDef) -> set[str]:
    return {name for name in parameters(function)[1:] if name.startswith("grad")}


def is_ctx_attribute(node: ast.AST, attribute: str | None = None) -> bool:
    """``ctx.<attribute>`` (any attribute when None)."""
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "ctx" and attribute in (None, node.attr))


def method_name(call: ast.AST) -> str | None:
    """``sum`` for ``x.sum(...)`` or ``torch.sum(...)``; None for a bare name's call."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def on_module(call: ast.Call) -> bool:
    """``torch.sum(x, ...)`` rather than ``x.sum(...)``: the tensor is the first argument."""
    value = call.func.value if isinstance(call.func, ast.Attribute) else None
    return isinstance(value, ast.Name) and value.id in MODULES


def bound_from(function: ast.FunctionDef, source: ast.AST) -> set[str]:
    """Names a statement of ``function`` binds from an expression equal to ``source``
    (``x, w = ctx.saved_tensors``; ``needs = ctx.needs_input_grad``)."""
    wanted, names = ast.dump(source), set()
    for statement in ast.walk(function):
        if isinstance(statement, ast.Assign) and ast.dump(statement.value) == wanted:
            for target in statement.targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def saved_tensor_names(function: ast.FunctionDef) -> set[str]:
    """The names a backward unpacks ``ctx.saved_tensors`` into."""
    saved = ast.Attribute(value=ast.Name(id="ctx", ctx=ast.Load()), attr="saved_tensors",
                          ctx=ast.Load())
    return bound_from(function, saved)


PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2,
              ast.MatMult: 2, ast.Pow: 3}


def grouped(text: Text, node: ast.AST, replacing: ast.AST | None = None) -> str:
    """The node's text, bracketed where an operator around it could bind tighter: always, or,
    when it takes the place of the operation ``replacing``, only if it binds looser than that."""
    loose = (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.UnaryOp)
    if (isinstance(node, ast.BinOp) and isinstance(replacing, ast.BinOp)
            and PRECEDENCE.get(type(node.op), 0) >= PRECEDENCE.get(type(replacing.op), 9)):
        return text.segment(node)
    return f"({text.segment(node)})" if isinstance(node, loose) else text.segment(node)


def numeric_value(node: ast.AST) -> int | float | None:
    """The value of a number literal, ``-1`` included; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = numeric_value(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None
