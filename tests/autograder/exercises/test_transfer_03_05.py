"""The transfer exercises of lessons 03 to 05 (StraightThroughSoftmax, NumpyTanh,
ReversibleCoupling): what the catalogue harness does not cover."""

import pytest
import torch
from torch import nn

from autograder.exercises import EXERCISES
from autograder.exercises.numpy_tanh import CONVERSIONS
from autograder.exercises.reversible import coupling
from autograder.exercises.straight_through_softmax import one_hot_argmax, reference, tied_values
from tests.autograder.exercises.battery import run
from tools.solutions import solution


@pytest.mark.lesson03
def test_ties_go_to_the_first_maximum_as_torch_argmax():
    """Does the reference one-hot put a tied row's 1 where torch.argmax does?"""
    logits = tied_values("cpu")["logits"]
    assert torch.equal(one_hot_argmax(logits).argmax(-1), logits.argmax(-1))
    assert torch.equal(one_hot_argmax(logits).sum(-1), torch.ones(len(logits), dtype=logits.dtype))


@pytest.mark.lesson03
def test_the_reference_is_one_hot_in_value_and_softmax_in_gradient():
    """Is the detach-trick reference exactly the one-hot, with softmax(logits / tau)'s gradient?"""
    logits = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    tau, grad_output = 0.3, torch.randn(3, 5, dtype=torch.float64)
    value = reference(logits, tau)
    assert torch.equal(value.detach(), one_hot_argmax(logits.detach()))
    got, = torch.autograd.grad(value, logits, grad_output)
    expected, = torch.autograd.grad(torch.softmax(logits / tau, -1), logits, grad_output)
    assert torch.allclose(got, expected, rtol=0, atol=1e-15)


@pytest.mark.lesson03
def test_a_backward_that_views_grad_output_quotes_the_learners_error(raises_hint):
    """Does a backward that needs a contiguous grad_output fail on the transposed one, quoting
    the learner's own error rather than guessing a cause?"""
    class Viewing(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, tau):
            soft = torch.softmax(logits / tau, -1)
            ctx.save_for_backward(soft)
            ctx.tau = tau
            return one_hot_argmax(logits)

        @staticmethod
        def backward(ctx, grad_output):
            soft, = ctx.saved_tensors
            flat_g = grad_output.view(-1).view(-1, soft.shape[-1])
            flat_s = soft.reshape(-1, soft.shape[-1])
            row = (flat_g * flat_s).sum(-1, keepdim=True)
            return (flat_s * (flat_g - row) / ctx.tau).view(soft.shape), None

    with raises_hint("view size is not compatible"):
        run("StraightThroughSoftmax", Viewing)


@pytest.mark.lesson04
def test_conversions_hold_no_arithmetic():
    """Is every op the NumPy checks allow a conversion, copy or view, never arithmetic?"""
    assert not CONVERSIONS & {"mul", "add", "sub", "div", "pow", "tanh", "tanh_backward", "neg"}


@pytest.mark.lesson04
def test_numpy_tanh_is_graded_on_the_cpu_whatever_the_device():
    """Does the battery keep to CPU tensors, as the contract says, even when asked for CUDA?"""
    run("NumpyTanh", solution("NumpyTanh"), device="meta")  # a device nothing could run on


@pytest.mark.lesson05
def test_reconstruction_recovers_the_inputs():
    """Does inverting the coupling give back x1 and x2 (to rounding), as backward relies on?"""
    f, g = nn.Linear(4, 4, dtype=torch.float64), nn.Tanh()
    x1, x2 = torch.randn(2, 3, 4, dtype=torch.float64)
    with torch.no_grad():
        y1, y2 = coupling(x1, x2, f, g)
        back2 = y2 - g(y1)
        back1 = y1 - f(back2)
    assert torch.allclose(back1, x1, rtol=0, atol=1e-14)
    assert torch.allclose(back2, x2, rtol=0, atol=1e-14)


@pytest.mark.lesson05
def test_the_transfer_exercises_come_last_in_their_lessons():
    """Is each transfer exercise collected after its lesson's other exercises?"""
    for lesson, last in [("03_ste", "StraightThroughSoftmax"),
                         ("04_double_backward", "NumpyTanh"),
                         ("05_checkpointing", "ReversibleCoupling")]:
        assert [n for n, e in EXERCISES.items() if e.lesson == lesson][-1] == last


def test_a_recorded_inversion_is_named():
    """ReversibleCoupling: a backward that rebuilds x1 and x2 under grad and differentiates with
    respect to them adds f's vector-Jacobian product to x2's gradient; the probe names it."""
    from tests.autograder.catalogued import graded_mistake
    assert graded_mistake("ReversibleCoupling", "records the inversion under grad and "
                          "differentiates with respect to the rebuilt x1 and x2") \
        == "ReversibleCoupling/records-inversion"
