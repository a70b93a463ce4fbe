"""Lesson 02 (linear): what the catalogue harness (tests/autograder/test_catalogue.py) does
not cover for MyLinearFunction and FusedLinearReLU."""

import re
from pathlib import Path

import nbformat
import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.lesson02_linear.linear import (MY_LINEAR, check_grad_x_formula,
                                                         check_needs_input_grad)
from tests.autograder.catalogued import graded_mistake, mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson02

NAMES = ["MyLinearFunction", "FusedLinearReLU"]


class TestGradXFormula:
    """check_grad_x_formula: grad_output @ weight.T caught even where the shapes allow it."""

    def test_correct(self, device):
        """Does grad_output @ weight pass?"""
        check_grad_x_formula(solution("MyLinearFunction"), MY_LINEAR, device)

    def test_other_mistakes_are_left_to_other_checks(self):
        """Is a grad_x that is merely wrong (not the weight.T one) passed on to other checks?"""
        check_grad_x_formula(mistake("MyLinearFunction", "grad_weight = x.T @ grad_output"),
                             MY_LINEAR, "cpu")


class TestNeedsInputGrad:
    """check_needs_input_grad: gradient matmuls counted in FLOPs."""

    def test_skipping(self, device):
        """Does a backward that tests ctx.needs_input_grad pass every combination?"""
        check_needs_input_grad(solution("MyLinearFunction"), MY_LINEAR, device)

    def test_not_skipping(self, raises_hint):
        """Is the first unneeded matmul named with its needs_input_grad flag?"""
        with raises_hint("backward did 288 FLOPs where 144 suffice: ctx.needs_input_grad[1] is "
                         "False for weight. Which of your products is for grad_weight"):
            check_needs_input_grad(mistake("MyLinearFunction", "ignores needs_input_grad"),
                                   MY_LINEAR, "cpu")

    def test_bias_only(self, raises_hint):
        """When only bias needs grad and backward computes grad_weight alone, is grad_weight
        named, and not grad_x, which it skipped?"""

        class WeightForBias(solution("MyLinearFunction")):
            @staticmethod
            def forward(ctx, x, weight, bias=None):  # saves both always, as this slip needs
                ctx.save_for_backward(x, weight)
                ctx.has_bias = bias is not None
                return torch.nn.functional.linear(x, weight, bias)

            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None
                wants_weight = ctx.needs_input_grad[1] or ctx.needs_input_grad[2]
                return grad_x, grad_output.T @ x if wants_weight else None, grad_output.sum(0)

        with raises_hint("backward did 144 FLOPs where 0 suffice: ctx.needs_input_grad[1] is "
                         "False for weight. Which of your products is for grad_weight"):
            check_needs_input_grad(WeightForBias, MY_LINEAR, "cpu")


class _Stub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *inputs):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


@pytest.mark.parametrize("name", NAMES)
def test_stub(name):
    """Does an unfinished stub raise NotImplementedError from the self-check?"""
    with pytest.raises(NotImplementedError):
        EXERCISES[name].run(_Stub)


@pytest.mark.parametrize("name", NAMES)
def test_not_a_function(name, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        EXERCISES[name].battery(mistake("Square", "a plain function"), torch.device("cpu"))


def test_hint_names_the_case_that_failed(raises_hint):
    """Does a hint say which inputs it failed on?"""
    with raises_hint("with x of shape (5, 3), weight of shape (3, 3)"):
        EXERCISES["MyLinearFunction"].run(
            mistake("MyLinearFunction", "needs_input_grad[2] read without a bias"))


def test_bias_gradient_as_a_matmul_is_not_blamed_on_needs_input_grad():
    """Is grad_bias = g2.new_ones(rows) @ g2 (a matmul of 48 FLOPs) accepted when only bias
    needs a gradient?"""
    from tests.autograder.catalogued import unusual

    check_needs_input_grad(unusual("MyLinearFunction", "grad_bias as new_ones(rows) @ g2"),
                           MY_LINEAR, "cpu")


def test_signature_hint_only_for_argument_count_errors(raises_hint):
    """Is `+ None` named as the missing bias=None path, and a wrong argument count as a
    signature error?"""
    with raises_hint("MyLinearFunction.forward fails for bias=None (unsupported operand"):
        EXERCISES["MyLinearFunction"].run(
            mistake("MyLinearFunction", "+ bias with no bias=None path"))

    class TwoArguments(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight):
            return x @ weight.T

        @staticmethod
        def backward(ctx, grad_output):
            return None, None

    with raises_hint("calling MyLinearFunction.apply raised TypeError: forward should take "
                     "(ctx, x, weight, bias)"):
        EXERCISES["MyLinearFunction"].run(TwoArguments)


def test_fused_layer_gets_the_transpose_hint_too(raises_hint):
    """Is grad_x = grad_pre @ weight.T named in the fused layer as well?"""
    with raises_hint("a transpose too many"):
        EXERCISES["FusedLinearReLU"].run(mistake("FusedLinearReLU", "grad_x = grad_z @ weight.T"))


def test_fusion_table_counts_what_the_lesson_counts():
    """Does the executed lesson's memory table show, after freed tensors are swept, what its
    explanation counts: activations of 64 KiB and masks of 16 KiB over eight blocks?"""
    notebook = nbformat.read(Path(__file__).parents[4] / "solutions" / "02_linear.ipynb",
                             as_version=4)
    table = next(output["text"] for cell in notebook.cells if cell.cell_type == "code"
                 for output in cell.get("outputs", []) if "kept after forward" in
                 output.get("text", ""))
    kept = {row[0].strip(): int(row[1]) for row in
            re.findall(r"^(\w+, [\w.+ ]+?)\s+(\d+) KiB\s+\d+ KiB$", table, re.MULTILINE)}
    activation, mask, depth = 64, 16, 8
    assert kept == {
        "plain, F.linear + torch.relu": depth * activation,
        "plain, FusedLinearReLU": (depth - 1) * activation + depth * mask,
        "residual, F.linear + torch.relu": (2 * depth - 1) * activation,
        "residual, FusedLinearReLU": (depth - 1) * activation + depth * mask,
    }


def test_frozen_weights_table_counts_what_the_lesson_counts():
    """With the weights frozen, does the executed lesson show what its explanation counts: the
    eight ReLU outputs composed, the eight masks alone for the solution, which saves x only
    when the weight needs a gradient?"""
    notebook = nbformat.read(Path(__file__).parents[4] / "solutions" / "02_linear.ipynb",
                             as_version=4)
    text = next(output["text"] for cell in notebook.cells if cell.cell_type == "code"
                for output in cell.get("outputs", []) if "weights frozen" in
                output.get("text", ""))
    kept = dict(re.findall(r"^plain, ([\w.+ ]+?)\s+weights frozen:\s+(\d+) KiB", text,
                           re.MULTILINE))
    assert kept == {"F.linear + torch.relu": str(8 * 64), "FusedLinearReLU": str(8 * 16)}


def test_unsaved_input_named_only_when_a_none_was_saved():
    """Is a backward that fails on a None told 'did not save' only when forward saved a None
    and not the input read? A weight.T copy saved always, failing for another None, is not."""

    class CopyThenNone(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias=None):
            ctx.save_for_backward(x, weight.T.contiguous())
            return torch.nn.functional.linear(x, weight, bias)

        @staticmethod
        def backward(ctx, grad_output):
            x, weight_t = ctx.saved_tensors
            return grad_output @ weight_t.T, ctx.needs_input_grad[1] and None @ x, None

    with pytest.raises(Exception) as info:
        EXERCISES["MyLinearFunction"].run(CopyThenNone)
    assert "NoneType" in str(info.value) and "did not save" not in str(info.value)
    with pytest.raises(Exception, match="did not save weight"):
        EXERCISES["MyLinearFunction"].run(
            mistake("MyLinearFunction", "saves x only when x needs a gradient (the reads swapped)"))


@pytest.mark.parametrize("exercise, name, expected", [
    ("MyLinearFunction", "grad_x = grad_output @ weight.T", "MyLinearFunction/grad-x-transposed"),
    ("FusedLinearReLU", "grad_x = grad_z @ weight.T", "FusedLinearReLU/grad-x-transposed"),
    ("MyLinearFunction", "ignores needs_input_grad", "MyLinearFunction/ignores-needs-input-grad"),
    ("MyLinearFunction", "grad_x always computed, returned only when needed",
     "MyLinearFunction/ignores-needs-input-grad"),
    ("FusedLinearReLU", "ignores needs_input_grad", "FusedLinearReLU/ignores-needs-input-grad"),
    ("MyLinearFunction", "every gradient without a matmul, then None where not needed",
     "MyLinearFunction/computes-unneeded-gradient"),
    ("FusedLinearReLU", "every gradient by broadcasting, needs_input_grad ignored",
     "FusedLinearReLU/computes-unneeded-gradient"),
    ("MyLinearFunction", "2-D only, as in PyTorch's docs", "MyLinearFunction/two-d-only"),
    ("MyLinearFunction", "unflattened grad_output.T @ x", "MyLinearFunction/two-d-only"),
    ("MyLinearFunction", "bias gradient summed over dim 0 only",
     "MyLinearFunction/bias-sums-features"),
    ("FusedLinearReLU", "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
     "FusedLinearReLU/bias-sums-features"),
    ("MyLinearFunction", "saves x only when x needs a gradient (the reads swapped)",
     "MyLinearFunction/drops-needed-input"),
    ("FusedLinearReLU", "saves weight only when weight needs a gradient",
     "FusedLinearReLU/drops-needed-input"),
    ("MyLinearFunction", "saves conditionally, backward reads weight.shape for g2",
     "MyLinearFunction/reads-unsaved-input"),
    ("FusedLinearReLU", "saves the float pre-activation",
     "FusedLinearReLU/saves-float-pre-activation"),
    ("FusedLinearReLU", "a float mask", "FusedLinearReLU/saves-float-mask"),
    ("FusedLinearReLU", "an int64 mask", "FusedLinearReLU/saves-integer-mask"),
    ("FusedLinearReLU", "no mask saved: the pre-activation recomputed in backward",
     "FusedLinearReLU/saves-no-mask"),
    ("FusedLinearReLU", "mask z >= 0", "FusedLinearReLU/mask-includes-zero"),
    ("Bilinear", "all four gradients computed, None returned where not needed",
     "Bilinear/computes-unneeded-gradient"),
    ("Bilinear", "saves x2 only when weight needs a gradient", "Bilinear/drops-needed-input"),
    ("Bilinear", "saves selectively, then reads x1.shape when only x1 needs a gradient",
     "Bilinear/reads-unsaved-input"),
    ("Bilinear", "needs_input_grad[3] read through a local without a bias",
     "Bilinear/reads-missing-bias-flag"),
    ("Bilinear", "bias gradient summed over dim 0 only", "Bilinear/bias-sums-features"),
    ("FusedLinearReLU", "mask taken before the bias is added", "unproven:wrong-value"),
    ("FusedLinearReLU", "the mask missing from grad_x only", "FusedLinearReLU/grad-x-unmasked"),
    ("MyLinearFunction", "grad_bias as g2.mean(0) times the number of rows",
     "MyLinearFunction/empty-batch"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves in lesson 02 (a transpose too many, work for an
    unneeded gradient, 2-D formulas, the bias summed over the features, what forward saved,
    the mask at 0 or missing from grad_x, an empty batch) carry a stable id, so that a class's
    failures group by it?"""
    assert graded_mistake(exercise, name) == expected
