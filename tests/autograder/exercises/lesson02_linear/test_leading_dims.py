"""Lesson 02's leading dimensions (lesson02_linear.leading_dims): x of any number of leading
dimensions, and the hints for a backward written for 2-D x alone."""

import pytest
import torch

from autograder.exercises.lesson02_linear.leading_dims import (IN_FEATURES, LEADING_SHAPES,
                                                               OUT_FEATURES)
from autograder.exercises.lesson02_linear.linear import MY_LINEAR, check_shapes_and_bias
from tools.solutions import solution

pytestmark = pytest.mark.lesson02


def test_shapes_the_hints_rely_on():
    """Are the layer sizes the ones the hints below quote (in=3, out=4), 1-D x included?"""
    assert (IN_FEATURES, OUT_FEATURES) == (3, 4)
    assert () in LEADING_SHAPES


class TestTwoDOnly:
    """A backward right for 2-D x alone: the hint names the gradient written for 2-D x and asks
    the question that leads to the fix, without the fix (no flattening, no reshape)."""

    @staticmethod
    def with_backward(*gradients):
        """The solution with backward's three gradients, each ``gradient(grad_output, x,
        weight)``, computed where ctx.needs_input_grad asks."""

        class Answer(solution("MyLinearFunction")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                ctx.save_for_backward(x, weight)
                ctx.has_bias = bias is not None
                return torch.nn.functional.linear(x, weight, bias)

            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                wanted = (*ctx.needs_input_grad[:2], ctx.has_bias and ctx.needs_input_grad[2])
                return tuple(gradient(grad_output, x, weight) if need else None
                             for gradient, need in zip(gradients, wanted))
        return Answer

    @pytest.mark.parametrize("gradients, hint", [
        ((lambda g, x, w: g.mm(w), lambda g, x, w: g.reshape(-1, 4).T @ x.reshape(-1, 3),
          lambda g, x, w: g.reshape(-1, 4).sum(0)),
         "MyLinearFunction.backward fails for x of shape (3,) but works for 2-D x: grad_x is "
         "written for 2-D x, one row per example, and this x has no leading dimension. grad_x "
         "needs no sum over positions: which product of grad_output (*, 4) and weight (4, 3) "
         "gives (*, 3) for any number of leading dimensions, as forward's does?"),
        ((lambda g, x, w: g @ w, lambda g, x, w: g.reshape(-1, 4).T @ x.reshape(-1, 3),
          lambda g, x, w: g.t().sum(1)),
         "MyLinearFunction.backward fails for x of shape (3,) but works for 2-D x: grad_bias is "
         "written for 2-D x, one row per example, and this x has no leading dimension. "
         "grad_bias sums grad_output over every position"),
        ((lambda g, x, w: g @ w, lambda g, x, w: g.t() @ x, lambda g, x, w: g.t().sum(1)),
         "grad_weight and grad_bias are written for 2-D x, one row per example, and this x has no "
         "leading dimension. grad_weight sums over every position, however many leading "
         "dimensions hold them: which two 2-D matrices")])
    def test_names_the_gradient_and_asks(self, raises_hint, gradients, hint):
        """Is the gradient that fails named, and the question asked instead of the fix?"""
        with raises_hint(hint) as raised:
            check_shapes_and_bias(self.with_backward(*gradients), MY_LINEAR, "cpu", fused=False)
        first_line = str(raised.value).splitlines()[0]
        assert not any(fix in first_line for fix in ("flatten", "reshape", "into rows")), \
            first_line
