"""Lesson 01 (sigmoid): grading MySigmoid, MyReLU and ScaledSigmoid, right and wrong."""

import pytest
import torch

from autograder.checks import check_version_tracking, make_inputs, run_forward
from autograder.exercises import EXERCISES
from autograder.exercises.sigmoid import (MY_SIGMOID, SHAPES, check_extreme_inputs,
                                          check_saves_only_output)
from autograder.probes import ForwardTrace, SavedTensor
from functions import correct, mistakes

pytestmark = pytest.mark.lesson01

NAMES = ["MySigmoid", "MyReLU", "ScaledSigmoid"]


def run(check: str, name: str, submission, device="cpu"):
    """Run the quick (always CPU) or the full checks of one exercise."""
    exercise = EXERCISES[name]
    if check == "quick":
        exercise.quick(submission)
    else:
        exercise.full(submission, torch.device(device))


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


def test_zero_dimensional_shape_is_graded_last():
    """Is 0-d graded, and after a shape whose hint can tell a factor from a sign?"""
    assert () in SHAPES and SHAPES[0] != () and SHAPES[-1] == ()


HIDDEN = [
    ("MySigmoid", mistakes.MySigmoidSavesInput,
     "MySigmoid saved its input x: save the output y instead"),
    ("MySigmoid", mistakes.MySigmoidUnstable,
     "MySigmoid returns inf or nan for large |x|: exp(x) overflows for x > 709; use exp(-|x|)"),
    ("MySigmoid", mistakes.MySigmoidCtxAttribute,
     "MySigmoid stores a tensor as ctx.y: use ctx.save_for_backward"),
    ("MySigmoid", mistakes.MySigmoidNestedCtxAttribute,
     "MySigmoid stores a tensor as ctx.cache['saved'][0]"),
    ("MySigmoid", mistakes.MySigmoidReentrant,
     "MySigmoid.backward calls torch.autograd.grad: write the gradient formula by hand"),
    ("MySigmoid", mistakes.MySigmoidBuiltinBackward,
     "MySigmoid.backward uses the built-in op sigmoid_backward: write the gradient formula "
     "by hand"),
    ("MyReLU", mistakes.MyReLUMasksGradOutputInPlace,
     "backward modified grad_output in place: compute a new tensor instead"),
    ("MyReLU", mistakes.MyReLUInPlaceInput,
     "MyReLU modified its input x in place: inputs must stay untouched"),
    ("MyReLU", mistakes.MyReLUReturnsInPlaceInput,
     "MyReLU modified its input x in place: inputs must stay untouched"),
    ("MyReLU", mistakes.MyReLUInPlaceInBackward,
     "MyReLU modified its input x in place: inputs must stay untouched"),
    ("MyReLU", mistakes.MyReLUCtxMask,
     "MyReLU stores a tensor as ctx.mask: use ctx.save_for_backward"),
    ("MyReLU", mistakes.MyReLULeaky, "your gradient for x is wrong: largest error"),
    ("ScaledSigmoid", mistakes.ScaledSigmoidFloatGradient,
     "backward returned a gradient for scale, which is not a tensor: return None for scale"),
    ("ScaledSigmoid", mistakes.ScaledSigmoidForgetsScale,
     "your gradient for x is off by a constant factor 0.4: a missing scale?"),
]


def ids(value):
    return getattr(value, "__name__", None) or (value if value in NAMES else "")


@pytest.mark.parametrize("name, mistake, hint", HIDDEN, ids=ids)
def test_mistake_named_by_full(name, mistake, hint, device, raises_hint):
    """Do the hidden checks name each mistake?"""
    with raises_hint(hint):
        EXERCISES[name].full(mistake, device)


QUICK = [
    ("MySigmoid", mistakes.MySigmoidSavesInput, "MySigmoid saved its input x"),
    ("MySigmoid", mistakes.MySigmoidCtxAttribute,
     "MySigmoid saved nothing with ctx.save_for_backward: save the output y"),
    ("MyReLU", mistakes.MyReLUMasksGradOutputInPlace, "backward modified grad_output in place"),
    ("MyReLU", mistakes.MyReLUInPlaceInput, "MyReLU modified its input x in place"),
    ("ScaledSigmoid", mistakes.ScaledSigmoidFloatGradient, "return None for scale"),
    ("ScaledSigmoid", mistakes.ScaledSigmoidForgetsScale, "off by a constant factor 0.4"),
]


@pytest.mark.parametrize("name, mistake, hint", QUICK, ids=ids)
def test_mistake_named_by_quick(name, mistake, hint, raises_hint):
    """Does the visible self-check already name the mistakes it can see?"""
    with raises_hint(hint):
        EXERCISES[name].quick(mistake)


def test_ctx_output_escapes_version_tracking(raises_hint):
    """Is an output kept as ctx.y caught by the in-place version check, and a saved one not?"""
    values = {"x": torch.randn(4, dtype=torch.float64)}
    check_version_tracking(correct.MySigmoid, MY_SIGMOID, values)
    with raises_hint("MySigmoid did not notice its saved output was changed in place"):
        check_version_tracking(mistakes.MySigmoidCtxAttribute, MY_SIGMOID, values)


class TestSavesOnlyOutput:
    """check_saves_only_output, on the roles probes report."""

    @staticmethod
    def trace(*roles):
        tensor = torch.zeros(1)
        saved = [SavedTensor(role, (1,), torch.float32, 4, tensor) for role in roles]
        return ForwardTrace(tensor, saved, [], {})

    def test_output_only(self):
        """Does saving exactly the output pass?"""
        check_saves_only_output(MY_SIGMOID, self.trace("output"))

    @pytest.mark.parametrize("roles, hint", [
        (("input x",), "MySigmoid saved its input x: save the output y instead"),
        (("input x", "output"), "MySigmoid saved its input x"),
        ((), "MySigmoid saved nothing with ctx.save_for_backward: save the output y"),
        (("intermediate",), "MySigmoid saved 1 tensors (intermediate): save exactly the output y"),
        (("output", "output"), "MySigmoid saved 2 tensors (output, output): save exactly"),
    ])
    def test_anything_else(self, roles, hint, raises_hint):
        """Is every other set of saved tensors named?"""
        with raises_hint(hint):
            check_saves_only_output(MY_SIGMOID, self.trace(*roles))


class TestExtremeInputs:
    """check_extreme_inputs: |x| up to 800 in float64."""

    def test_stable(self, device):
        """Does the exp(-|x|) formulation stay finite?"""
        check_extreme_inputs(correct.MySigmoid, MY_SIGMOID, device)

    def test_unstable(self, device, raises_hint):
        """Does exp(x) / (1 + exp(x)) really produce nan at 800, and is that named?"""
        forward = run_forward(mistakes.MySigmoidUnstable, MY_SIGMOID,
                              make_inputs({"x": torch.tensor([800.0], dtype=torch.float64)}))
        assert forward.output.isnan().all()
        with raises_hint("MySigmoid returns inf or nan for large |x|"):
            check_extreme_inputs(mistakes.MySigmoidUnstable, MY_SIGMOID, device)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("check", ["quick", "full"])
def test_not_a_function(name, check, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        run(check, name, mistakes.square_function)


def test_hint_names_the_scale_that_broke_the_gradient(raises_hint):
    """Does dividing by scale fail with a hint that says scale=0.0 was the problem?"""
    with raises_hint("scale=0.0"):
        EXERCISES["ScaledSigmoid"].full(mistakes.ScaledSigmoidDividesByScale, torch.device("cpu"))
