"""Lesson 00 (template): grading Square and WeightedSum, right and wrong."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.template import SHAPES
from functions import correct, mistakes

pytestmark = pytest.mark.lesson00

NAMES = ["Square", "WeightedSum"]


def run(check: str, name: str, submission):
    """Run the quick or the full (CPU) checks of one exercise."""
    exercise = EXERCISES[name]
    if check == "quick":
        exercise.quick(submission)
    else:
        exercise.full(submission, torch.device("cpu"))


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


MISTAKES = [
    (mistakes.SquareWrongSign, "your gradient for x is the numerical one times -1: check the sign"),
    (mistakes.SquareScaled,
     "your gradient for x is off by a constant factor 2.5: a missing scale?"),
    (mistakes.SquareZeroGradient, "your gradient for x is zero everywhere: is backward finished?"),
    (mistakes.SquareForgetsGradOutput, "your gradient for x is wrong: largest error"),
    (mistakes.SquareWrongForward, "Square's output is wrong"),
]


@pytest.mark.parametrize("mistake, hint", MISTAKES, ids=lambda v: getattr(v, "__name__", ""))
def test_square_mistake_named_by_quick(mistake, hint, raises_hint):
    """Does the self-check already name each Square mistake?"""
    with raises_hint(hint):
        EXERCISES["Square"].quick(mistake)


@pytest.mark.parametrize("mistake, hint", MISTAKES + [
    (mistakes.SquareCtxTensor, "Square stores a tensor as ctx.x: use ctx.save_for_backward"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_square_mistake_named_by_full(mistake, hint, device, raises_hint):
    """Do the hidden checks name each Square mistake?"""
    with raises_hint(hint):
        EXERCISES["Square"].full(mistake, device)


def test_ctx_tensor_caught_on_every_grading_device(raises_hint):
    """Storing x on ctx gives the right numbers: does grading still name it?"""
    with raises_hint("Square stores a tensor as ctx.x"):
        EXERCISES["Square"].grade(mistakes.SquareCtxTensor)


@pytest.mark.parametrize("check", ["quick", "full"])
def test_weighted_sum_missing_nones(check, raises_hint):
    """Is a backward that returns 2 gradients for 4 inputs told to return None for w1 and w2?"""
    with raises_hint("backward returned 2 gradients for 4 inputs: return None for w1 and w2"):
        run(check, "WeightedSum", mistakes.WeightedSumTwoGradients)


@pytest.mark.parametrize("check", ["quick", "full"])
def test_weighted_sum_swapped_weights(check, raises_hint):
    """Are swapped weights (w2 for x1) reported on x1 with the ratio w2 / w1 = -4?"""
    with raises_hint("your gradient for x1 is off by a constant factor -4"):
        run(check, "WeightedSum", mistakes.WeightedSumSwapped)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("check", ["quick", "full"])
def test_not_a_function(name, check, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        run(check, name, mistakes.square_function)


@pytest.mark.parametrize("check", ["quick", "full"])
def test_instance_instead_of_class(check, raises_hint):
    """Is an instance told to pass the class itself?"""
    with pytest.warns(DeprecationWarning):
        instance = correct.Square()
    with raises_hint("Square is an instance: pass the class itself and call Square.apply(...)"):
        run(check, "Square", instance)


@pytest.mark.parametrize("stub", [mistakes.NotImplementedSquare,
                                  mistakes.BackwardNotImplementedSquare])
@pytest.mark.parametrize("check", ["quick", "full"])
def test_stub_raises_not_implemented(stub, check):
    """Does an unfinished stub raise NotImplementedError itself, as learners' copies expect?"""
    with pytest.raises(NotImplementedError):
        run(check, "Square", stub)
