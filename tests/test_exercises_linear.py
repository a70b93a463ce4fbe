"""Lesson 02 (linear): grading MyLinearFunction and FusedLinearReLU, right and wrong."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.linear import (FUSED_LINEAR_RELU, IN_FEATURES, LEADING_SHAPES,
                                         MY_LINEAR, OUT_FEATURES, check_grad_x_formula,
                                         check_needs_input_grad, check_saves_bool_mask,
                                         linear_values)
from autograder.checks import make_inputs, run_forward
from functions import correct, mistakes

pytestmark = pytest.mark.lesson02

NAMES = ["MyLinearFunction", "FusedLinearReLU"]


def test_shapes_the_hints_rely_on():
    """Are the layer sizes the ones the hints below quote (in=3, out=4), 1-D x included?"""
    assert (IN_FEATURES, OUT_FEATURES) == (3, 4)
    assert () in LEADING_SHAPES


@pytest.mark.parametrize("name", NAMES)
def test_correct_passes_quick(name):
    """Does the correct solution pass the visible self-check?"""
    EXERCISES[name].quick(correct.SOLUTIONS[name])


@pytest.mark.parametrize("name", NAMES)
def test_correct_passes_full(name, device):
    """Does the correct solution pass every hidden check on this device?"""
    EXERCISES[name].full(correct.SOLUTIONS[name], device)


@pytest.mark.parametrize("name", NAMES)
def test_correct_passes_grade(name):
    """Does the correct solution pass on every grading device?"""
    EXERCISES[name].grade(correct.SOLUTIONS[name])


@pytest.mark.parametrize("variant", list(correct.VARIANTS), ids=lambda f: f.__name__)
def test_unusual_correct_variants_pass(variant, device):
    """Is a correct solution accepted when it leaves grad_bias for the engine to sum, or saves
    a flattened view of x and a (rows, out) mask?"""
    EXERCISES[correct.VARIANTS[variant]].quick(variant)
    EXERCISES[correct.VARIANTS[variant]].full(variant, device)


HIDDEN = [
    ("MyLinearFunction", mistakes.MyLinearTransposedGradWeight,
     "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?"),
    ("MyLinearFunction", mistakes.MyLinearGradXTransposed,
     "grad_x = grad_output @ weight.T is wrong: for y = x @ weight.T the gradient is "
     "grad_x = grad_output @ weight"),
    ("MyLinearFunction", mistakes.MyLinearIgnoresNeedsInputGrad,
     "backward did 288 FLOPs where 144 suffice: ctx.needs_input_grad[1] is False for weight, "
     "so skip grad_weight"),
    ("MyLinearFunction", mistakes.MyLinearNo1D,
     "MyLinearFunction.backward raised RuntimeError with x of shape (3,), weight of shape (4, 3)"),
    ("FusedLinearReLU", mistakes.FusedSavesPreActivation,
     "FusedLinearReLU saved a float64 intermediate of shape (4,) (32 bytes): save the boolean "
     "mask (pre-activation > 0) instead, 4 bytes"),
    ("FusedLinearReLU", mistakes.FusedCtxMask,
     "FusedLinearReLU stores a tensor as ctx.mask: use ctx.save_for_backward"),
    ("FusedLinearReLU", mistakes.FusedNoReLUGradient, "your gradient for x is wrong"),
]


def ids(value):
    return getattr(value, "__name__", None) or (value if value in NAMES else "")


@pytest.mark.parametrize("name, mistake, hint", HIDDEN, ids=ids)
def test_mistake_named_by_full(name, mistake, hint, device, raises_hint):
    """Do the hidden checks name each mistake?"""
    with raises_hint(hint):
        EXERCISES[name].full(mistake, device)


QUICK = [
    ("MyLinearFunction", mistakes.MyLinearTransposedGradWeight,
     "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?"),
    ("MyLinearFunction", mistakes.MyLinearGradXTransposed,
     "grad_x = grad_output @ weight.T is wrong"),
    ("FusedLinearReLU", mistakes.FusedSavesPreActivation,
     "FusedLinearReLU saved a float64 intermediate of shape (5, 4) (160 bytes): save the boolean "
     "mask (pre-activation > 0) instead, 20 bytes"),
    ("FusedLinearReLU", mistakes.FusedNoReLUGradient, "your gradient for x is wrong"),
]


@pytest.mark.parametrize("name, mistake, hint", QUICK, ids=ids)
def test_mistake_named_by_quick(name, mistake, hint, raises_hint):
    """Does the visible self-check already name the mistakes it can see? (The wrong grad_x
    "fix" must get its hint, not a matmul shape error.)"""
    with raises_hint(hint):
        EXERCISES[name].quick(mistake)


class TestGradXFormula:
    """check_grad_x_formula: grad_output @ weight.T caught even where the shapes allow it."""

    def test_correct(self, device):
        """Does grad_output @ weight pass?"""
        check_grad_x_formula(correct.MyLinearFunction, MY_LINEAR, device)

    def test_other_mistakes_are_left_to_other_checks(self):
        """Is a grad_x that is merely wrong (not the weight.T one) passed on to other checks?"""
        check_grad_x_formula(mistakes.MyLinearTransposedGradWeight, MY_LINEAR, "cpu")


class TestNeedsInputGrad:
    """check_needs_input_grad: gradient matmuls counted in FLOPs."""

    def test_skipping(self, device):
        """Does a backward that tests ctx.needs_input_grad pass every combination?"""
        check_needs_input_grad(correct.MyLinearFunction, MY_LINEAR, device)

    def test_not_skipping(self, raises_hint):
        """Is the first unneeded matmul named with its needs_input_grad flag?"""
        with raises_hint("backward did 288 FLOPs where 144 suffice: ctx.needs_input_grad[1] is "
                         "False for weight, so skip grad_weight"):
            check_needs_input_grad(mistakes.MyLinearIgnoresNeedsInputGrad, MY_LINEAR, "cpu")

    def test_bias_only(self, raises_hint):
        """When only bias needs grad, is every skippable matmul named?"""

        class WeightForBias(correct.MyLinearFunction):
            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None
                wants_weight = ctx.needs_input_grad[1] or ctx.needs_input_grad[2]
                return grad_x, grad_output.T @ x if wants_weight else None, grad_output.sum(0)

        with raises_hint("backward did 144 FLOPs where 0 suffice: ctx.needs_input_grad[0] is "
                         "False for x and ctx.needs_input_grad[1] is False for weight, so skip "
                         "grad_x and grad_weight"):
            check_needs_input_grad(WeightForBias, MY_LINEAR, "cpu")


class TestSavesBoolMask:
    """check_saves_bool_mask: one bit per output element, not a float pre-activation."""

    def forward(self, function, leading=(5,)):
        return run_forward(function, FUSED_LINEAR_RELU, make_inputs(linear_values(leading, "cpu")))

    @pytest.mark.parametrize("leading", LEADING_SHAPES)
    def test_mask(self, leading):
        """Does saving x, weight and a boolean mask pass for every leading shape?"""
        check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(correct.FusedLinearReLU, leading))

    def test_float_output(self, raises_hint):
        """Is saving the float output (instead of a mask) named with its bytes?"""

        class SavesOutput(correct.FusedLinearReLU):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                y = torch.relu(x @ weight.T + bias)
                ctx.save_for_backward(x, weight, y)
                ctx.has_bias = True
                return y

        with raises_hint("FusedLinearReLU saved a float64 output of shape (5, 4) (160 bytes)"):
            check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesOutput))

    def test_no_mask(self, raises_hint):
        """Is saving only the inputs told where the mask goes?"""

        class SavesInputsOnly(correct.FusedLinearReLU):
            @staticmethod
            def forward(ctx, x, weight, bias=None):
                ctx.save_for_backward(x, weight)
                return torch.relu(x @ weight.T + bias)

        with raises_hint("FusedLinearReLU saved no boolean mask of the output's shape: "
                         "ctx.save_for_backward(x, weight, pre_activation > 0)"):
            check_saves_bool_mask(FUSED_LINEAR_RELU, self.forward(SavesInputsOnly))


@pytest.mark.parametrize("name", NAMES)
def test_stub(name):
    """Does an unfinished stub raise NotImplementedError from the self-check?"""
    with pytest.raises(NotImplementedError):
        EXERCISES[name].quick(mistakes.Stub)


@pytest.mark.parametrize("name", NAMES)
def test_not_a_function(name, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        EXERCISES[name].full(mistakes.square_function, torch.device("cpu"))


def test_a_backward_that_forgets_the_optional_bias_is_caught_by_the_self_check(raises_hint):
    """Does the self-check already try bias=None, and explain the short needs_input_grad?"""
    with raises_hint("ctx.needs_input_grad has one entry per argument actually passed"):
        EXERCISES["MyLinearFunction"].quick(mistakes.MyLinearUnguardedBias)


def test_hint_names_the_case_that_failed(raises_hint):
    """Does a hint say which inputs it failed on?"""
    with raises_hint("with x of shape (5, 3), weight of shape (3, 3)"):
        EXERCISES["MyLinearFunction"].quick(mistakes.MyLinearUnguardedBias)


def test_fused_layer_gets_the_transpose_hint_too(raises_hint):
    """Is grad_x = grad_pre @ weight.T named in the fused layer as well?"""
    with raises_hint("a transpose too many"):
        EXERCISES["FusedLinearReLU"].quick(mistakes.FusedGradXTransposed)
