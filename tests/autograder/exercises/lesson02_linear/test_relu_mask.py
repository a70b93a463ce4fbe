"""Lesson 02's ReLU mask (lesson02_linear.relu_mask): what FusedLinearReLU saves for the ReLU
part of its backward."""

import pytest
import torch

from autograder.checks import make_inputs, run_forward
from autograder.exercises.lesson02_linear.leading_dims import LEADING_SHAPES, linear_values
from autograder.exercises.lesson02_linear.linear import FUSED_LINEAR_RELU
from autograder.exercises.lesson02_linear.relu_mask import (check_mask_from_sign,
                                                             check_saves_bool_mask)
from tools.solutions import solution

pytestmark = pytest.mark.lesson02


class TestSavesBoolMask:
    """check_saves_bool_mask: one bit per output element, not a float pre-activation."""

    def forward(self, function, leading=(5,)):
        return run_forward(function, FUSED_LINEAR_RELU, make_inputs(linear_values(leading, "cpu")))

    @pytest.mark.parametrize("leading", LEADING_SHAPES)
    def test_mask(self, leading):
        """Does saving x, weight and a boolean mask pass for every leading shape?"""
        check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(solution("FusedLinearReLU"), leading))

    def test_float_output(self, raises_hint):
        """Is saving the float output (instead of a mask) named with its bytes?"""

        class SavesOutput(solution("FusedLinearReLU")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                y = torch.relu(x @ weight.T + bias)
                ctx.save_for_backward(x, weight, y)
                ctx.has_bias = True
                return y

        with raises_hint("FusedLinearReLU saved a float64 output of shape (5, 4) (160 bytes) "
                         "for backward: 8 bytes per output element where the contract allows "
                         "the ReLU part one. What does the ReLU part of backward need to know "
                         "about the pre-activation at each element, and how few bytes hold "
                         "that (question 1 before the exercise)?") as hint:
            check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesOutput))
        assert "> 0" not in str(hint.value) and "bool" not in str(hint.value), \
            "the hint gives the answer"

    def test_no_mask(self, raises_hint):
        """Is saving only the inputs told what is missing, without the answer's line?"""

        class SavesInputsOnly(solution("FusedLinearReLU")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                ctx.save_for_backward(x, weight)
                return torch.relu(x @ weight.T + bias)

        with raises_hint("FusedLinearReLU saved nothing for the ReLU part of backward "
                         "besides its inputs: backward needs to know something of the "
                         "pre-activation at each output element") as hint:
            check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesInputsOnly))
        assert "> 0" not in str(hint.value), "the hint gives the answer's line"

    @pytest.mark.parametrize("dtype, named, size", [(torch.int16, "an int16", "2 bytes"),
                                                    (torch.int64, "an int64", "8 bytes")])
    def test_integer_mask_article(self, raises_hint, dtype, named, size):
        """Is a mask of a wider integer named with its dtype, the right article ('an int64')
        and its bytes per element?"""

        class SavesIntegerMask(solution("FusedLinearReLU")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                z = x @ weight.T + bias
                ctx.save_for_backward(x, weight, (z > 0).to(dtype))
                ctx.has_bias = True
                return torch.relu(z)

        with raises_hint(f"FusedLinearReLU saved {named} tensor of shape (5, 4), {size} per "
                         "element"):
            check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesIntegerMask))

    @pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
    def test_one_byte_integer_mask_passes(self, dtype):
        """Is a mask of 1 byte per element accepted whatever its dtype (the contract's bound
        is one byte per output element, which uint8 and int8 take as bool does)?"""

        class SavesByteMask(solution("FusedLinearReLU")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                z = x @ weight.T + bias
                ctx.save_for_backward(x, weight, (z > 0).to(dtype))
                ctx.has_bias = True
                return torch.relu(z)

        check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesByteMask))


def _masked_by(make_mask):
    """The solution with forward's mask made by ``make_mask(z)``, backward reading it as bool."""

    class Masked(solution("FusedLinearReLU")):
        @staticmethod
        def forward(ctx, x, weight, bias=None):
            z = x @ weight.T if bias is None else x @ weight.T + bias
            ctx.save_for_backward(x, weight, make_mask(z).bool())
            ctx.has_bias = bias is not None
            return torch.relu(z)

    return Masked


class TestMaskFromSign:
    """check_mask_from_sign: a mask made from the activation truncated to an integer is named,
    and only that one."""

    def test_truncated_activation_named(self, raises_hint):
        """Is relu(z).to(torch.uint8) as the mask (0 wherever 0 < z < 1) named by its cause?"""
        with raises_hint("your mask is the activation's value converted to an integer"):
            check_mask_from_sign(_masked_by(lambda z: torch.relu(z).to(torch.uint8)),
                                 FUSED_LINEAR_RELU, "cpu")

    @pytest.mark.parametrize("make_mask", [lambda z: z > 0, lambda z: z > 0.5,
                                           lambda z: torch.relu(z).round().to(torch.uint8)],
                             ids=["sign", "threshold 0.5", "rounded to nearest"])
    def test_other_masks_not_blamed(self, make_mask):
        """Does the solution's mask pass, and a mask with another threshold (z > 0.5, or the
        activation rounded to nearest) stay unnamed here, for the value checks to report?"""
        check_mask_from_sign(_masked_by(make_mask), FUSED_LINEAR_RELU, "cpu")


def test_workspace_per_shape_fails_every_run():
    """Does a pre-activation written into a global workspace kept per shape fail the self-check
    on a second run in the same process too (each run probes a batch size not used before)?"""
    import autograder
    from autograder.errors import GradingError
    from tests.autograder.catalogued import mistake

    function = mistake("FusedLinearReLU", "the pre-activation written into a global workspace "
                                          "per shape")
    for _ in range(2):
        with pytest.raises(GradingError, match="keeps a float64 tensor of the output's size"):
            autograder.self_check("FusedLinearReLU", function)
