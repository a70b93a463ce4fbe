"""Edits that break the Function's contract with autograd while the maths may stay right:
per-call state shared between calls, what forward saves, writes into what backward must not
change, and the declarations autograd reads (``mark_dirty``, ``needs_input_grad``, ...)."""

import ast

from .registry import operator
from .tree import (Tree, bound_from, grouped, incoming_gradients, is_backward, is_ctx_attribute,
                   method_name, parameters, saved_tensor_names, takes_ctx)

CTX_API = {"save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
           "mark_non_differentiable", "set_materialize_grads", "materialize_grads"}
DECLARATIONS = {"mark_dirty", "mark_non_differentiable", "set_materialize_grads"}
RANDOM_STATE = ("rng_state", "seed", "Generator")
IN_PLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _stored_ctx_attribute(node, tree: Tree) -> str | None:
    """``a`` where ``node`` is ``ctx.a = ...`` in a forward or setup_context (a per-call value)."""
    if (is_ctx_attribute(node) and isinstance(node.ctx, ast.Store) and node.attr not in CTX_API
            and takes_ctx(tree.function(node))):
        return node.attr
    return None


def _uses(tree: Tree, node, attribute: str) -> list[ast.Attribute]:
    """Every ``ctx.<attribute>`` of the class around ``node`` (of the cell, outside a class)."""
    region = tree.owner(node) or tree.module
    return [n for n in ast.walk(region) if is_ctx_attribute(n, attribute)]


def _moved(node, tree: Tree, attribute: str, name: str):
    """Every ``ctx.<attribute>`` read and written as ``name``."""
    return tuple(tree.text.replace(use, name) for use in _uses(tree, node, attribute))


def _random_state(node, tree: Tree) -> bool:
    value = tree.statement(node).value if isinstance(tree.statement(node), ast.Assign) else None
    return value is not None and any(word in tree.text.segment(value) for word in RANDOM_STATE)


@operator("autograd")
def random_state_outside_ctx(node, tree: Tree):
    """A random state forward keeps for backward held on the class, shared by every call."""
    attribute = _stored_ctx_attribute(node, tree)
    owner = tree.owner(node)
    if attribute and owner is not None and _random_state(node, tree):
        yield _moved(node, tree, attribute, f"{owner.name}.{attribute}")


@operator("autograd")
def ctx_to_class_attribute(node, tree: Tree):
    """A per-call ``ctx`` attribute held on the Function class, shared by every call."""
    attribute = _stored_ctx_attribute(node, tree)
    owner = tree.owner(node)
    if attribute and owner is not None:
        yield _moved(node, tree, attribute, f"{owner.name}.{attribute}")


@operator("autograd")
def ctx_to_global(node, tree: Tree):
    """A per-call ``ctx`` attribute held in a module global, shared by every call."""
    attribute = _stored_ctx_attribute(node, tree)
    if attribute:
        name = f"_shared_{attribute}"
        stores = {tree.statement(use) for use in _uses(tree, node, attribute)
                  if isinstance(use.ctx, ast.Store)}
        declarations = tuple(tree.text.insert(tree.text.start(statement), f"global {name}; ")
                             for statement in stores)
        yield _moved(node, tree, attribute, name) + declarations


def _saved_values(call: ast.Call) -> list[ast.AST]:
    """What ``ctx.save_for_backward(...)`` saves, seen through ``x if needs else None``."""
    values = []
    for argument in call.args:
        if isinstance(argument, ast.IfExp):
            values += [branch for branch in (argument.body, argument.orelse)
                       if not (isinstance(branch, ast.Constant) and branch.value is None)]
        elif not isinstance(argument, ast.Starred):
            values.append(argument)
    return values


def _saved(node, tree: Tree, method: str):
    if method_name(node) == "save_for_backward" and is_ctx_attribute(node.func):
        for value in _saved_values(node):
            yield (tree.text.replace(value, f"{grouped(tree.text, value)}.{method}()"),)


@operator("autograd")
def save_copy(node, tree: Tree):
    """A saved tensor replaced by a copy of it (``.clone()``)."""
    yield from _saved(node, tree, "clone")


@operator("autograd")
def save_narrowed(node, tree: Tree):
    """A saved tensor narrowed: saved as float16 or float32."""
    yield from _saved(node, tree, "half")
    yield from _saved(node, tree, "float")


@operator("autograd")
def save_widened(node, tree: Tree):
    """A saved tensor widened: saved as float64 (a bool mask saved as a float tensor)."""
    yield from _saved(node, tree, "double")


def _returned_names(function: ast.FunctionDef) -> set[str]:
    names = set()
    for statement in ast.walk(function):
        if isinstance(statement, ast.Return) and statement.value is not None:
            values = statement.value.elts if isinstance(statement.value, ast.Tuple) else [
                statement.value]
            names |= {value.id for value in values if isinstance(value, ast.Name)}
    return names


@operator("autograd")
def save_input_not_output(node, tree: Tree):
    """Forward saves its first input where it saved its output."""
    function = tree.function(node)
    if not (takes_ctx(function) and method_name(node) == "save_for_backward"):
        return
    if function.name == "setup_context" or "output" in parameters(function):
        outputs, first_input = bound_from(function, ast.Name(id="output", ctx=ast.Load())), \
            "inputs[0]"
        outputs.add("output")
    else:
        outputs, first_input = _returned_names(function), parameters(function)[1]
    for value in _saved_values(node):
        if isinstance(value, ast.Name) and value.id in outputs:
            yield (tree.text.replace(value, first_input),)


def _in_place(node, tree: Tree, names: set[str]):
    """``a * b`` as ``a.mul_(b)`` where ``a`` (or ``b``, for + and *) is one of ``names``."""
    if not (isinstance(node, ast.BinOp) and type(node.op) in IN_PLACE):
        return
    method = IN_PLACE[type(node.op)]
    pairs = [(node.left, node.right)]
    if isinstance(node.op, (ast.Add, ast.Mult)):
        pairs.append((node.right, node.left))
    for written, other in pairs:
        if isinstance(written, ast.Name) and written.id in names:
            yield (tree.text.replace(node, f"{written.id}.{method}({tree.text.segment(other)})"),)


@operator("autograd")
def grad_output_in_place(node, tree: Tree):
    """Backward writes into ``grad_output`` (``g * s`` as ``g.mul_(s)``)."""
    function = tree.function(node)
    if is_backward(function):
        yield from _in_place(node, tree, incoming_gradients(function))


@operator("autograd")
def saved_in_place(node, tree: Tree):
    """Backward writes into a saved tensor (``x * s`` as ``x.mul_(s)``)."""
    function = tree.function(node)
    if is_backward(function):
        yield from _in_place(node, tree, saved_tensor_names(function))


@operator("autograd")
def drop_ctx_declaration(node, tree: Tree):
    """``ctx.mark_dirty``, ``mark_non_differentiable`` or ``set_materialize_grads`` left out."""
    if (isinstance(node, ast.Expr) and method_name(node.value) in DECLARATIONS
            and is_ctx_attribute(node.value.func)):
        yield (tree.text.replace(node, "pass"),)


@operator("autograd")
def drop_once_differentiable(node, tree: Tree):
    """``@once_differentiable`` removed from a backward."""
    if isinstance(node, ast.FunctionDef):
        for decorator in node.decorator_list:
            name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(
                decorator, "id", None)
            if name == "once_differentiable":
                yield (tree.text.whole_lines(decorator),)


@operator("autograd")
def ignore_needs_input_grad(node, tree: Tree):
    """``ctx.needs_input_grad[i]`` (or an alias of it) read as True."""
    if not isinstance(node, ast.Subscript) or tree.function(node) is None:
        return
    needs = ast.Attribute(value=ast.Name(id="ctx", ctx=ast.Load()), attr="needs_input_grad",
                          ctx=ast.Load())
    aliases = bound_from(tree.function(node), needs)
    if is_ctx_attribute(node.value, "needs_input_grad") or (
            isinstance(node.value, ast.Name) and node.value.id in aliases):
        yield (tree.text.replace(node, "True"),)
