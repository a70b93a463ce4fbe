"""Small inline Functions and domains for the tests of the Function contract's rule checks
(``autograder.properties.RULE_CHECKS``): each test there builds a wrong answer and a correct
one from these."""

import torch

from autograder.domain import Domain, sampled
from autograder.spec import Spec

OUTER = Spec("Outer", ("u", "v"), lambda u, v: torch.outer(u, v))
OUTER_DOMAIN = Domain(OUTER, sampled(OUTER, {"u": (4,), "v": (3,)}))
SQUARE = Spec("Square", ("x",), lambda x: x * x)
SQUARE_DOMAIN = Domain(SQUARE, sampled(SQUARE, {"x": (3, 4)}))
CPU = torch.device("cpu")


def function(name: str, forward: str, backward: str, arguments: str = "x", prelude: str = ""):
    """A Function class ``name`` with the given bodies (indented by the caller's lines)."""
    namespace = {"torch": torch}
    exec(f"{prelude}\nclass {name}(torch.autograd.Function):\n"
         f"    @staticmethod\n    def forward(ctx, {arguments}):\n{_body(forward)}"
         f"    @staticmethod\n    def backward(ctx, g):\n{_body(backward)}", namespace)
    return namespace[name]


def _body(lines: str) -> str:
    return "".join(f"        {line}\n" for line in lines.strip("\n").splitlines())


def outer(backward: str):
    """Outer with u and v saved and ``backward``'s body."""
    return function("Outer", "ctx.save_for_backward(u, v)\nreturn torch.outer(u, v)",
                    "u, v = ctx.saved_tensors\n" + backward, "u, v")


GATED = ("gu = g @ v if ctx.needs_input_grad[0] else None\n"
         "gv = g.T @ u if ctx.needs_input_grad[1] else None\n"
         "return gu, gv")
