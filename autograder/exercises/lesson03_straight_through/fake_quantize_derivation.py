"""Lesson 03's live checker of question 5 of Exercise 3: the learner's y, dy_i/dx_i and dy_i/ds
for three elements against autograd on the contract's composed form. It says which element is
off, never autograd's value there."""

import torch

from ...predictions import same_answer
from .fake_quantize_spec import quantise_straight_through


def fake_quantize_derivatives(x: torch.Tensor, step: float, qmin: int, qmax: int):
    """(y, dy_i/dx_i, dy_i/ds) of FakeQuantize's contract for each element of ``x`` ("inside"
    judged on v), by autograd on composed ops: one copy of the step per element."""
    x = x.detach().clone().requires_grad_()
    s = torch.full_like(x, step).requires_grad_()
    y = quantise_straight_through(x, s, qmin, qmax)
    dy_dx, dy_ds = torch.autograd.grad(y.sum(), (x, s))
    return y.detach(), dy_dx, dy_ds


# the elements named as words, never as indices: "element 1" read as the second by a learner
# who counts from 0, as Python does
ORDINALS = ("first", "second", "third")


def _listed(words: list[str]) -> str:
    """'first', 'first and third', 'first, second and third'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def check_derivation(predicted_y=None, predicted_dy_dx=None, predicted_dy_ds=None, qmin=-4,
                     qmax=3) -> None:
    """Print the learner's question 5 numbers (y, dy_i/dx_i, dy_i/ds at s = 0.5) against
    autograd's, which element is off, never autograd's value (lesson 03, Exercise 3). Only
    these three elements: the per-element formulas are the answer cell's, judged by the
    self-check."""
    y5, dy_dx5, dy_ds5 = (t.tolist() for t in fake_quantize_derivatives(
        torch.tensor([0.7, -3.0, 1.8], dtype=torch.float64), 0.5, qmin, qmax))
    for name, predicted, autograd in (("y", predicted_y, y5), ("dy/dx", predicted_dy_dx, dy_dx5),
                                      ("dy/ds", predicted_dy_ds, dy_ds5)):
        observed = [round(value, 6) for value in autograd]
        if predicted is None:
            print(f"question 5, {name}: no prediction written")
        elif same_answer(predicted, observed):
            print(f"question 5, {name}: you said {predicted!r} ✓")
        elif not isinstance(predicted, (list, tuple)) or len(predicted) != len(observed):
            print(f"question 5, {name}: you said {predicted!r} ✗ (three numbers expected)")
        else:  # which elements, never PyTorch's numbers: they would answer the other lines
            off = [ORDINALS[k] for k, (said, value) in enumerate(zip(predicted, observed))
                   if not same_answer(said, value)]
            where = f" (the {_listed(off)} element{'s' if len(off) > 1 else ''} off)" if off else ""
            print(f"question 5, {name}: you said {predicted!r} ✗{where}")
