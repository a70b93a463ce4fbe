"""Each operator on a small answer: the one-line edits it makes, and nothing else."""

import ast
import textwrap

import pytest

from tools.mutants.edits import splice
from tools.mutants.operators import FAMILIES, OPERATORS
from tools.mutants.operators.tree import Tree

FUNCTION = textwrap.dedent('''
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, s):
            ctx.s = s
            y = x * s
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            grad_x = grad_output * ctx.s if ctx.needs_input_grad[0] else None
            return grad_x, None
''')

# operator -> (source, every (line before, line after) it makes there)
CASES = {
    "swap_arithmetic": ("y = a - b ** 2\n", [("y = a - b ** 2", "y = a + b ** 2"),
                                             ("y = a - b ** 2", "y = a - b * 2")]),
    "swap_comparison": ("m = x <= t\n", [("m = x <= t", "m = x < t")]),
    "nudge_constant": ("y = x[0] * 0.5\n", [("y = x[0] * 0.5", "y = x[1] * 0.5"),
                                            ("y = x[0] * 0.5", "y = x[-1] * 0.5"),
                                            ("y = x[0] * 0.5", "y = x[0] * 1.0"),
                                            ("y = x[0] * 0.5", "y = x[0] * 0.25")]),
    "flip_boolean": ("f(strict=True)\n", [("f(strict=True)", "f(strict=False)")]),
    "change_dim": ("s = x.sum(dim=-1)\n", [("s = x.sum(dim=-1)", "s = x.sum(dim=0)"),
                                           ("s = x.sum(dim=-1)", "s = x.sum(dim=-2)")]),
    "flip_keepdim": ("s = torch.sum(x, 0)\n", [("s = torch.sum(x, 0)",
                                                 "s = torch.sum(x, 0, keepdim=True)")]),
    "swap_reduction": ("s = x.mean(0)\n", [("s = x.mean(0)", "s = x.sum(0)")]),
    "drop_term": ("y = a + b / c\n", [("y = a + b / c", "y = a"), ("y = a + b / c", "y = b / c"),
                                      ("y = a + b / c", "y = a + b")]),
    "drop_statement": ("def f(y):\n    y = y + 1\n    g(y)\n    return y\n",
                       [("y = y + 1", "pass"), ("g(y)", "pass")]),
    "drop_copy": ("z = x.contiguous()\n", [("z = x.contiguous()", "z = x")]),
    "add_copy": ("def f(x):\n    return x\n", [("return x", "return x.clone()")]),
    "reshape_to_view": ("z = x.reshape(-1)\n", [("z = x.reshape(-1)", "z = x.view(-1)")]),
    "move_threshold": ("m = x > 0\n", [("m = x > 0", "m = x > 1e-06"),
                                       ("m = x > 0", "m = x > -1e-06")]),
    "move_eps_across_root": ("r = torch.sqrt(v + eps)\n",
                             [("r = torch.sqrt(v + eps)", "r = torch.sqrt(v) + eps")]),
    "narrow_accumulator": ("a = torch.zeros(3, dtype=torch.float64)\n",
                           [("a = torch.zeros(3, dtype=torch.float64)",
                             "a = torch.zeros(3, dtype=torch.float32)")]),
    "ctx_to_class_attribute": (FUNCTION, [("ctx.s = s\ngrad_x = grad_output * ctx.s if "
                                           "ctx.needs_input_grad[0] else None",
                                           "Scale.s = s\ngrad_x = grad_output * Scale.s if "
                                           "ctx.needs_input_grad[0] else None")]),
    "ctx_to_global": (FUNCTION, [("ctx.s = s\ngrad_x = grad_output * ctx.s if "
                                  "ctx.needs_input_grad[0] else None",
                                  "global _shared_s; _shared_s = s\ngrad_x = grad_output * "
                                  "_shared_s if ctx.needs_input_grad[0] else None")]),
    "random_state_outside_ctx": (
        "class F:\n    def forward(ctx, x):\n        ctx.state = torch.get_rng_state()\n\n"
        "    def backward(ctx, g):\n        torch.set_rng_state(ctx.state)\n",
        [("ctx.state = torch.get_rng_state()\ntorch.set_rng_state(ctx.state)",
          "F.state = torch.get_rng_state()\ntorch.set_rng_state(F.state)")]),
    "save_copy": (FUNCTION, [("ctx.save_for_backward(y)", "ctx.save_for_backward(y.clone())")]),
    "save_narrowed": (FUNCTION, [("ctx.save_for_backward(y)", "ctx.save_for_backward(y.half())"),
                                 ("ctx.save_for_backward(y)",
                                  "ctx.save_for_backward(y.float())")]),
    "save_widened": (FUNCTION, [("ctx.save_for_backward(y)",
                                 "ctx.save_for_backward(y.double())")]),
    "save_input_not_output": (FUNCTION, [("ctx.save_for_backward(y)",
                                          "ctx.save_for_backward(x)")]),
    "grad_output_in_place": (FUNCTION, [
        ("grad_x = grad_output * ctx.s if ctx.needs_input_grad[0] else None",
         "grad_x = grad_output.mul_(ctx.s) if ctx.needs_input_grad[0] else None")]),
    "saved_in_place": ("def backward(ctx, grad_output):\n    x, = ctx.saved_tensors\n"
                       "    return grad_output * (x / 2)\n",
                       [("return grad_output * (x / 2)", "return grad_output * (x.div_(2))")]),
    "drop_ctx_declaration": ("def forward(ctx, x):\n    ctx.mark_dirty(x)\n    return x\n",
                             [("ctx.mark_dirty(x)", "pass")]),
    "drop_once_differentiable": (FUNCTION, [("@once_differentiable", "")]),
    "ignore_needs_input_grad": (FUNCTION, [
        ("grad_x = grad_output * ctx.s if ctx.needs_input_grad[0] else None",
         "grad_x = grad_output * ctx.s if True else None")]),
}


def _edits(name: str, source: str) -> list[tuple[str, str]]:
    """(before, after) of every edit the operator makes anywhere in ``source``."""
    operator = next(op for op in OPERATORS if op.name == name)
    tree, made = Tree(source), []
    for node in ast.walk(tree.module):
        for edit in operator.edits(node, tree):
            mutated = splice(source, edit)
            ast.parse(mutated)  # every edit is valid Python
            old, new = source.splitlines(), mutated.splitlines()
            made.append(("\n".join(line.strip() for line in old if line not in new),
                         "\n".join(line.strip() for line in new if line not in old)))
    return made


@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_makes_its_edits(name):
    """Does the operator make exactly these edits on this answer?"""
    source, expected = CASES[name]
    assert sorted(_edits(name, source)) == sorted(expected)


def test_every_operator_has_a_case_a_family_and_a_description():
    """Is each operator tested here, in a known family, with a one-line docstring?"""
    assert {op.name for op in OPERATORS} == set(CASES)
    assert all(op.family in FAMILIES and op.description for op in OPERATORS)
    assert {op.family for op in OPERATORS} == set(FAMILIES)
