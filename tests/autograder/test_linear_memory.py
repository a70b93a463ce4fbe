"""Rule 3 in memory: a backward that builds the Jacobian as a matrix (``torch.diag``, or a NumPy
one) holds thousands of times the bytes of its inputs once they are grown, and is caught with
the shapes, the bytes and the largest tensor; backwards of tensor operations pass."""

import torch

from autograder.domain import Domain, sampled
from autograder.spec import Spec
from autograder.function_contract import rule_reference
from autograder.linear_memory import WIDE, check_linear_memory, grown
from tests.autograder.rule_answers import CPU, GATED, OUTER_DOMAIN, SQUARE_DOMAIN, function, outer

FORWARD = "ctx.save_for_backward(x)\nreturn x * x"
RIGHT = function("Square", FORWARD, "x, = ctx.saved_tensors\nreturn 2 * x * g")
JACOBIAN = function("Square", FORWARD,
                    "x, = ctx.saved_tensors\n"
                    "jacobian = torch.diag(2 * x.reshape(-1))\n"
                    "return (jacobian @ g.reshape(-1)).reshape(g.shape)")
NUMPY_JACOBIAN = function("Square", FORWARD,
                          "x, = ctx.saved_tensors\n"
                          "jacobian = numpy.diag(2 * x.detach().numpy().reshape(-1))\n"
                          "flat = jacobian @ g.detach().numpy().reshape(-1)\n"
                          "return torch.from_numpy(flat.reshape(tuple(g.shape)))",
                          prelude="import numpy")


def test_every_size_is_grown_at_once_the_widest_to_wide():
    cases = grown(SQUARE_DOMAIN, SQUARE_DOMAIN.values(CPU))
    times = -(-WIDE // 4)
    assert [(how, tuple(values["x"].shape)) for how, values in cases] == [
        (f"every dimension tiled {times} times", (3 * times, 4 * times))]


def test_each_size_alone_where_the_reference_refuses_every_size_at_once():
    """A reference that needs a last dimension of 4 takes only the other size grown."""
    fixed = Spec("Scaled", ("x",), lambda x: x * torch.arange(1.0, 5.0, dtype=x.dtype))
    domain = Domain(fixed, sampled(fixed, {"x": (3, 4)}))
    assert [(how, tuple(values["x"].shape)) for how, values in grown(domain, domain.values(CPU))
            ] == [("the dimensions of size 3 tiled", (3 * -(-WIDE // 3), 4))]


LINEAR = Spec("Linear", ("x", "weight"), lambda x, weight: x @ weight.T)
LINEAR_DOMAIN = Domain(LINEAR, sampled(LINEAR, {"x": (3, 4), "weight": (5, 4)}))
LINEAR_FORWARD = "ctx.save_for_backward(x, weight)\nreturn x @ weight.T"


def test_an_outer_product_of_two_dimensions_is_caught(raises_hint):
    """grad_weight as the sum over rows of a (rows, out, in) outer product: each size grown
    alone stays within the bound, every size grown at once does not."""
    summed_outer = function("Linear", LINEAR_FORWARD,
                            "x, weight = ctx.saved_tensors\n"
                            "return g @ weight, (g.unsqueeze(-1) * x.unsqueeze(-2)).sum(0)",
                            "x, weight")
    with raises_hint("every dimension tiled"):
        check_linear_memory(LINEAR_DOMAIN, summed_outer, CPU)
    by_matmul = function("Linear", LINEAR_FORWARD,
                         "x, weight = ctx.saved_tensors\nreturn g @ weight, g.T @ x", "x, weight")
    check_linear_memory(LINEAR_DOMAIN, by_matmul, CPU)


def test_a_jacobian_built_as_a_matrix_is_caught(raises_hint):
    with raises_hint("Square's backward held") as info:
        check_linear_memory(SQUARE_DOMAIN, JACOBIAN, CPU)
    first = str(info.value).splitlines()[0]
    assert "made by diag" in first and first.endswith(rule_reference("by-hand"))
    assert info.value.mistake == "Square/builds-jacobian"


def test_a_numpy_jacobian_is_caught(raises_hint):
    with raises_hint("Square's backward held"):
        check_linear_memory(SQUARE_DOMAIN, NUMPY_JACOBIAN, CPU)


def test_backwards_of_tensor_operations_pass():
    check_linear_memory(SQUARE_DOMAIN, RIGHT, CPU)
    check_linear_memory(OUTER_DOMAIN, outer(GATED), CPU)
