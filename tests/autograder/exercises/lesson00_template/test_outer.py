"""Lesson 00's transfer exercise Outer: what the catalogue harness does not cover."""

import pytest
import torch

from autograder.exercises.lesson00_template.outer import SIZES, outer_full
from tests.autograder.catalogued import mistake
from tools.catalogue import load

pytestmark = pytest.mark.lesson00

SWAPPED = """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        return (grad_output.T @ u if need_u else None, grad_output @ v if need_v else None)
"""

VIEWS = """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u.unsqueeze(1), v.unsqueeze(0))
        return u.unsqueeze(1) * v.unsqueeze(0)

    @staticmethod
    def backward(ctx, grad_output):
        column, row = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        return ((grad_output * row).sum(1) if need_u else None,
                (grad_output * column).sum(0) if need_v else None)
"""


def test_a_square_case_comes_after_a_rectangular_one():
    """Does the battery try m != n first (a swap cannot even have the right shape) and then
    m == n, where a swapped answer runs?"""
    assert SIZES[0][0] != SIZES[0][1]
    assert any(m == n for m, n in SIZES)


def test_u_and_v_swapped_are_named_by_shape(raises_hint):
    """Is grad_u built from u (the other input's formula) caught at m != n by its shape?"""
    with raises_hint("grad_u has shape (3,) but u has shape (4,)"):
        outer_full(load("Outer", SWAPPED), torch.device("cpu"))


def test_views_of_the_inputs_count_as_the_inputs():
    """Does saving u.unsqueeze(1) and v.unsqueeze(0), views that cost no memory, meet "forward
    saves no memory it allocated"?"""
    outer_full(load("Outer", VIEWS), torch.device("cpu"))


def test_only_when_needed_is_measured_as_work(raises_hint):
    """Is a backward that computes both gradients and returns None for the unneeded one told
    which gradient it computed and which input's values it read, with u alone requiring grad?"""
    with raises_hint("Outer.backward computed grad_v, which nothing asked for: with only u "
                     "requiring grad it read u's values (in aten.mm)"):
        outer_full(mistake("Outer", "both gradients computed, None returned for the unneeded "
                                    "one"), torch.device("cpu"))


def test_asking_autograd_for_both_gradients_is_refused(raises_hint):
    """Is a backward that asks torch.autograd.grad for both gradients and returns None where
    none is needed (the unneeded-work probe leaves re-entry to this check) told to write the
    formula by hand?"""
    with raises_hint("Outer.backward calls torch.autograd.grad: write the gradient formula by "
                     "hand"):
        outer_full(mistake("Outer", "asks autograd for both gradients inside backward"),
                   torch.device("cpu"))


def test_a_non_contiguous_grad_output_is_tried(raises_hint):
    """Is a backward that flattens grad_output with .view(-1), right for a contiguous one, run
    on a transposed grad_output, and told which?"""
    with raises_hint("(with a transposed grad_output of shape (4, 3), strides (1, 4))"):
        outer_full(mistake("Outer", "grad_output flattened with .view(-1)"), torch.device("cpu"))


def test_a_saved_output_is_not_called_new_memory():
    """Is an Outer that saves its output told that it keeps the output alive until backward
    (which does not need it), not that it is new memory; and a saved clone told it is memory
    forward allocated?"""
    from autograder.errors import GradingError

    with pytest.raises(GradingError) as output:
        outer_full(mistake("Outer", "saves the output"), torch.device("cpu"))
    assert "keeps the (m, n) output alive until backward" in str(output.value)
    assert "new memory" not in str(output.value)
    with pytest.raises(GradingError) as clone:
        outer_full(mistake("Outer", "saves clones of u and v"), torch.device("cpu"))
    assert "is memory forward allocated" in str(clone.value)


TRANSPOSES_IN_PLACE = """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        grad_output.{method}
        return grad_output.mT @ v, u @ grad_output.mT
"""


@pytest.mark.parametrize("method, what", [("t_()", "shape in place, from (4, 3) to (3, 4)"),
                                          ("as_strided_((4, 3), (1, 4))",
                                           "strides in place, from (3, 1) to (1, 4)")])
def test_grad_output_relaid_in_place_is_named_not_blamed_on_the_reference(raises_hint, method,
                                                                          what):
    """Is a backward that transposes grad_output in place (t_, or as_strided_ at the same shape:
    no value written, no version bumped) told that it changed grad_output's shape or strides,
    never 'Outer raised' for the error the grader's reference call then met, nor the wrong side
    a probe reading the changed tensor would prove?"""
    with raises_hint(f"Outer's backward changed grad_output's {what}") as info:
        outer_full(load("Outer", TRANSPOSES_IN_PLACE.format(method=method)), "cpu")
    assert info.value.mistake == "Outer/writes-grad-output"


def test_a_relaid_grad_output_is_named_before_the_error_it_causes(raises_hint):
    """When the changed layout makes the learner's own backward raise, is the change named, not
    the shape error?"""
    from autograder.checks import run_backward
    from autograder.exercises.lesson00_template.outer import OUTER

    broken = load("Outer", TRANSPOSES_IN_PLACE.replace(
        "return grad_output.mT @ v", "return grad_output @ v").format(method="t_()"))
    u, v = (torch.randn(n, dtype=torch.float64, requires_grad=True) for n in (4, 3))
    with raises_hint("Outer's backward changed grad_output's shape in place"):
        run_backward(OUTER, broken.apply(u, v), {"u": u, "v": v},
                     torch.ones(4, 3, dtype=torch.float64))
