"""Rule 1 on the smallest shapes: a forward that branches on ``x.max()`` raises on an empty batch
and a backward that reads its gradient's batch size breaks a 0-d input; both are caught with
the shapes tried, and a correct answer passes. A 0-d input is tried in every dtype the exercise
names (a 0-d constant of another dtype promotes it). An op along a ``dim`` is not tried at 0-d."""

import torch

from autograder.domain import Constant, Domain, sampled
from autograder.empty_and_scalar import check_empty_and_scalar, empty_and_scalar_cases
from autograder.function_contract import rule_reference
from autograder.spec import Spec
from tests.autograder.rule_answers import CPU, OUTER_DOMAIN, SQUARE_DOMAIN, function

RIGHT = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                 "x, = ctx.saved_tensors\nreturn 2 * x * g")
BRANCHES_ON_MAX = function("Square", "ctx.save_for_backward(x)\n"
                           "return x * x if x.abs().max() < 1e100 else x.square()",
                           "x, = ctx.saved_tensors\nreturn 2 * x * g")
BATCH_KEPT = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                      "x, = ctx.saved_tensors\ngrad = 2 * x * g\n"
                      "return grad.reshape(grad.shape[0], *grad.shape[1:])")


def test_the_cases_are_an_empty_batch_and_a_0_d_input_in_each_dtype():
    cases = empty_and_scalar_cases(SQUARE_DOMAIN, CPU)
    assert [(what, tuple(values["x"].shape), values["x"].dtype) for what, values in cases] == [
        ("an empty batch", (0, 4), torch.float64), ("0-d inputs", (), torch.float64),
        ("0-d float32 inputs", (), torch.float32)]


def test_an_empty_batch_keeps_a_weight_s_rows_and_outer_has_no_0_d_case():
    """Outer's u and v differ in shape: only u's leading size is the batch's, so v keeps its."""
    cases = empty_and_scalar_cases(OUTER_DOMAIN, CPU)
    assert [(what, tuple(v["u"].shape), tuple(v["v"].shape)) for what, v in cases] == [
        ("an empty batch", (0,), (3,))]


CUMSUM = Spec("Cumsum", ("x", "dim"), lambda x, dim: torch.cumsum(x, dim))
CUMSUM_DOMAIN = Domain(CUMSUM, sampled(CUMSUM, {"x": (3, 4)}, {"dim": 1}),
                       constants={"dim": Constant(0, 1, "a dimension of x", integer=True)})


def test_an_op_along_a_dim_is_not_tried_at_0_d():
    assert [what for what, _ in empty_and_scalar_cases(CUMSUM_DOMAIN, CPU)] == ["an empty batch"]


def test_a_0_d_constant_of_another_dtype_is_caught_at_0_d_float32(raises_hint):
    promoting = function("Square", "ctx.save_for_backward(x)\n"
                         "return x * x + torch.tensor(0.0, dtype=torch.float64)",
                         "x, = ctx.saved_tensors\nreturn 2 * x * g")
    with raises_hint("has dtype torch.float64 for torch.float32 inputs"):
        check_empty_and_scalar(SQUARE_DOMAIN, promoting, CPU)


def test_a_forward_that_raises_on_an_empty_batch_is_caught(raises_hint):
    with raises_hint("raised RuntimeError") as info:
        check_empty_and_scalar(SQUARE_DOMAIN, BRANCHES_ON_MAX, CPU)
    first = str(info.value).splitlines()[0]
    assert "an empty batch: x of shape (0, 4)" in first
    assert first.endswith(rule_reference("values"))


def test_a_gradient_read_as_a_batch_is_caught_at_0_d(raises_hint):
    with raises_hint("0-d inputs: x of shape ()") as info:
        check_empty_and_scalar(SQUARE_DOMAIN, BATCH_KEPT, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("values"))


def test_a_correct_answer_passes():
    check_empty_and_scalar(SQUARE_DOMAIN, RIGHT, CPU)
