"""Lesson 03's transfer exercise, StraightThroughSoftmax: the float32 tolerance of its gradient
check, which the catalogue's single answers cannot cover, and the overflow hint, named only where
exp overflowed."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises.lesson03_straight_through.straight_through_softmax import (
    check_gradient, one_hot_argmax, reference, tied_values)
from tests.autograder.exercises.battery import run

pytestmark = pytest.mark.lesson03


def _by_hand(logits, tau, grad_output, order):
    """Correct vector-Jacobian products of softmax(logits / tau), computed in different orders."""
    z = logits / tau
    if order == "shifted":
        e = torch.exp(z - z.amax(-1, keepdim=True))
        s = e / e.sum(-1, keepdim=True)
    elif order == "log_softmax":
        s = torch.exp(torch.log_softmax(z, -1))
    else:
        s = torch.softmax(z, -1)
    if order == "jacobian":
        jacobian = torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
        return torch.einsum("...ij,...j->...i", jacobian, grad_output) / tau
    return s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) / tau


@pytest.mark.parametrize("tau", [0.05, 0.1, 0.7, 2.5])
@pytest.mark.parametrize("order", ["shifted", "log_softmax", "jacobian"])
def test_correct_float32_orderings_pass_at_small_tau(tau, order):
    """Does every correct float32 ordering pass, where 1 / tau magnifies rounding that cancels?"""
    for seed in range(25):
        generator = torch.Generator().manual_seed(seed)
        logits = 1.5 * torch.randn(4, 7, generator=generator)
        grad_output = torch.randn(4, 7, generator=generator)
        check_gradient({"logits": logits, "tau": tau},
                       _by_hand(logits, tau, grad_output, order), grad_output)


def test_the_tolerance_still_rejects_a_small_real_error():
    """Is a gradient off by 1e-3 of its scale still rejected in float32?"""
    generator = torch.Generator().manual_seed(0)
    logits, grad_output = torch.randn(4, 7, generator=generator), torch.randn(4, 7, generator=generator)
    right = _by_hand(logits, 0.1, grad_output, "softmax")
    wrong = right.clone()
    wrong[1, 2] += 1e-3 * right.abs().max()
    with pytest.raises(GradingError):
        check_gradient({"logits": logits, "tau": 0.1}, wrong, grad_output)


def _by_definition(logits, tau, grad_output):
    """The mistake the lesson's overflow cell shows: softmax rebuilt as exp(z) / sum exp(z)."""
    e = (logits / tau).exp()
    s = e / e.sum(-1, keepdim=True)
    return s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) / tau


def test_is_the_overflow_named_only_where_exp_overflowed():
    """Non-finite exactly where exp(z) / sum exp(z) is: the overflow hint; non-finite elsewhere
    (a nan from another slip): not the overflow hint."""
    near_tie = torch.tensor([[12.0, 11.8, -2.0]])
    unit = torch.tensor([[1.0, 0.0, 0.0]])
    values = {"logits": near_tie, "tau": 0.1}
    with pytest.raises(GradingError, match="^StraightThroughSoftmax's gradient for logits is "
                       "not finite where the softmax's is: logits / tau reaches 120"):
        check_gradient(values, _by_definition(near_tie, 0.1, unit), unit)
    elsewhere = _by_hand(near_tie, 0.1, unit, "shifted").clone()
    elsewhere[0, 2] = float("nan")
    with pytest.raises(GradingError) as other:
        check_gradient(values, elsewhere, unit)
    assert "not finite where the softmax's is" not in str(other.value)
    assert torch.isfinite(_by_hand(near_tie, 0.1, unit, "shifted")).all()


def _rows_apart_case():
    from autograder.exercises.lesson03_straight_through.straight_through_softmax import rows_apart
    made = rows_apart("cpu", torch.float64)
    grad_output = torch.randn(made["logits"].shape, dtype=torch.float64,
                              generator=torch.Generator().manual_seed(3))
    return made, grad_output


def test_a_softmax_shifted_by_the_whole_tensors_maximum_is_named_with_its_row(raises_hint):
    """Is a gradient that is nan in the small rows, as the global shift gives, named so?"""
    made, grad_output = _rows_apart_case()
    z = made["logits"] / made["tau"]
    e = torch.exp(z - z.max())
    s = e / e.sum(-1, keepdim=True)
    got = s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) / made["tau"]
    with raises_hint("is not finite in row [0] (logits 0, 1, -1, 0.5, tau=0.7), where the "
                     "softmax's gradient is finite: it is what a softmax shifted by the whole"):
        check_gradient(made, got, grad_output)


def test_a_non_finite_row_from_another_cause_is_not_blamed_on_the_shift():
    """Is a nan in one row alone (not the global shift's pattern) told only which row?"""
    made, grad_output = _rows_apart_case()
    got = torch.softmax(made["logits"] / made["tau"], -1)
    got = got * (grad_output - (got * grad_output).sum(-1, keepdim=True)) / made["tau"]
    got[2, 1] = float("nan")
    with pytest.raises(GradingError) as raised:
        check_gradient(made, got, grad_output)
    first = str(raised.value).splitlines()[0]
    assert "not finite in row [2]" in first and "shifted" not in first


def test_the_small_near_ties_are_what_the_docstring_says():
    """Does 1e-20 above 0 tie a softmax at every tau, and 4e-17 tie float64's at tau = 1 only,
    while argmax of the logits tells both apart?"""
    from autograder.exercises.lesson03_straight_through.straight_through_softmax import near_ties
    logits = near_ties("cpu", torch.float64)["logits"][3:5]
    assert logits.argmax(-1).tolist() == [1, 1]
    assert torch.softmax(logits, -1).argmax(-1).tolist() == [0, 0]
    assert torch.softmax(logits / 0.5, -1).argmax(-1).tolist() == [0, 1]
    assert torch.softmax(logits / 10, -1).argmax(-1).tolist() == [0, 0]


@pytest.mark.parametrize("entry, over", [
    ("one-hot of the softmax's argmax, as the Gumbel cell writes", "softmax(logits / tau),"),
    ("one-hot of softmax(logits)'s argmax, without tau", "softmax(logits),")])
def test_an_argmax_of_a_softmax_is_named_with_its_temperature(entry, over, raises_hint):
    """Is a one-hot of a softmax's argmax, with tau or without, named as such at the first
    near tie (0 and 1e-20, tau = 0.5), with the softmax it took, and graded with its id?"""
    from tests.autograder.catalogued import graded_mistake, mistake
    from tests.autograder.exercises.battery import run
    with raises_hint("StraightThroughSoftmax's output picks another maximum in row [3] (logits "
                     f"0.0, 1e-20, -1.0, -2.0, tau=0.5): it is the one-hot of argmax over {over}"):
        run("StraightThroughSoftmax", mistake("StraightThroughSoftmax", entry))
    expected = "StraightThroughSoftmax/argmax-of-softmax"
    assert graded_mistake("StraightThroughSoftmax", entry) == expected


def test_a_zero_gradient_is_named_the_one_hots_true_derivative(raises_hint):
    """Is a backward returning zeros_like(grad_output), without the saved one-hot, told that
    zero is the one-hot's true derivative, and graded with its id?"""
    from tests.autograder.catalogued import graded_mistake, mistake
    from tests.autograder.exercises.battery import run
    entry = "zero gradient (the one-hot's true derivative)"
    with raises_hint("StraightThroughSoftmax's gradient for logits is zero everywhere: that is "
                     "the true derivative of the one-hot, which a straight-through softmax "
                     "replaces with softmax(logits / tau)'s"):
        run("StraightThroughSoftmax", mistake("StraightThroughSoftmax", entry))
    expected = "StraightThroughSoftmax/true-zero-gradient"
    assert graded_mistake("StraightThroughSoftmax", entry) == expected


def test_ties_go_to_the_first_maximum_as_torch_argmax():
    """Does the reference one-hot put a tied row's 1 where torch.argmax does?"""
    logits = tied_values("cpu")["logits"]
    assert torch.equal(one_hot_argmax(logits).argmax(-1), logits.argmax(-1))
    assert torch.equal(one_hot_argmax(logits).sum(-1), torch.ones(len(logits), dtype=logits.dtype))


def test_the_reference_is_one_hot_in_value_and_softmax_in_gradient():
    """Is the detach-trick reference exactly the one-hot, with softmax(logits / tau)'s gradient?"""
    logits = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    tau, grad_output = 0.3, torch.randn(3, 5, dtype=torch.float64)
    value = reference(logits, tau)
    assert torch.equal(value.detach(), one_hot_argmax(logits.detach()))
    got, = torch.autograd.grad(value, logits, grad_output)
    expected, = torch.autograd.grad(torch.softmax(logits / tau, -1), logits, grad_output)
    assert torch.allclose(got, expected, rtol=0, atol=1e-15)


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


def test_a_softmax_saved_wider_than_the_logits_is_named_by_its_dtype():
    """A softmax computed and saved in float64 for float32 logits (the review's W24) passes every
    precision check: only the saved dtype shows it, and the check names that dtype; a float32
    softmax and a saved int64 index (no floating dtype) pass it."""
    from types import SimpleNamespace

    from autograder.exercises.lesson03_straight_through.straight_through_softmax import (
        _check_saved_wider)

    logits = torch.randn(3, 4)
    saved = lambda tensor: SimpleNamespace(role="intermediate", shape=tuple(tensor.shape),
                                           dtype=tensor.dtype, tensor=tensor,
                                           nbytes=tensor.numel() * tensor.element_size())
    wide = torch.softmax(logits.double() / 0.5, -1)
    with pytest.raises(GradingError) as raised:
        _check_saved_wider(SimpleNamespace(saved=[saved(wide)]), logits)
    assert raised.value.hint.startswith(
        "StraightThroughSoftmax's forward saved a float64 tensor of shape (3, 4) for float32 "
        "logits"), raised.value.hint
    assert raised.value.mistake == "StraightThroughSoftmax/saves-wider-dtype"
    _check_saved_wider(SimpleNamespace(saved=[saved(torch.softmax(logits, -1)),
                                              saved(logits.argmax(-1))]), logits)
    _check_saved_wider(SimpleNamespace(saved=[saved(wide)]), logits.double())


def test_zero_dim_logits_are_outside_the_stated_contract():
    """A one-hot needs a dimension of classes: does the exercise say logits have one, and does
    grading then leave 0-d logits out (the solution's F.one_hot raises there)?"""
    from pathlib import Path

    from autograder.exercises import EXERCISES
    source = (Path(__file__).parents[4] / "lessons" / "03_ste.py").read_text()
    assert "`logits` float64 or float32 with at least\n# one dimension" in source
    assert EXERCISES["StraightThroughSoftmax"].domain.zero_dim is False
