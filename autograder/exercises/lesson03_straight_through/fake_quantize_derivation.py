"""Lesson 03's live checker of the derivatives behind FakeQuantize (Exercise 3): the learner's
dy_i/dx_i and dy_i/ds against autograd on the contract's composed form. It says where a
derivative is off, never autograd's value there."""

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


# v = x / s on both sides of each clip edge and on it, none in a half-step band
_DERIVATION_CODES = [-5.3, -4.7, -4.0, -2.7, -1.2, -0.4, 0.2, 0.6, 1.4, 2.3, 3.0, 3.6, 4.8]


def _derivative_verdict(name, yours, want, x, step, qmin, qmax, v, region) -> str:
    if yours is None:
        return f"{name} not written yet"
    try:
        got = torch.as_tensor(yours(x, torch.tensor(step, dtype=torch.float64), qmin, qmax),
                              dtype=torch.float64)
    except Exception as error:  # shown, not raised: Run All goes on
        message = (str(error).splitlines() or [""])[0]
        if len(message) > 100:  # cut at a word
            message = message[:100].rsplit(" ", 1)[0] + " ..."
        return f"{name} ✗ raises {type(error).__name__}: {message}"
    if got.shape != want.shape:
        return f"{name} ✗ shape {tuple(got.shape)}, not {tuple(want.shape)}"
    off = (~torch.isclose(got, want)).nonzero().flatten().tolist()
    off.sort(key=lambda k: region[k][0])  # inside the clip first, its edges last
    return (f"{name} ✓" if not off else
            f"{name} ✗ {region[off[0]][1]} at v = {v[off[0]].item():g}: yours "
            f"{got[off[0]].item():g} ({len(off)} of {len(v)} off)")


def check_derivation(my_dy_dx, my_dy_ds, predicted_y=None, predicted_dy_dx=None,
                     predicted_dy_ds=None, qmin=-4, qmax=3) -> None:
    """Print the learner's dy_i/dx_i and dy_i/ds (functions of x, s, qmin, qmax) against
    autograd's at two steps s, then their question 5 numbers (lesson 03, Exercise 3)."""
    v = torch.tensor(_DERIVATION_CODES, dtype=torch.float64)
    region = [(0, "inside the clip") if qmin < u < qmax else (1, "below the clip") if u < qmin
              else (2, "above the clip") if u > qmax else (3, "on a clip edge")
              for u in v.tolist()]
    for step in (0.5, 1.5):
        x = v * step
        _, want_x, want_s = fake_quantize_derivatives(x, step, qmin, qmax)
        print(f"s = {step}: " + "; ".join(
            _derivative_verdict(name, yours, want, x, step, qmin, qmax, v, region)
            for name, yours, want in (("dy/dx", my_dy_dx, want_x), ("dy/ds", my_dy_ds, want_s))))
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
            off = [str(k + 1) for k, (said, value) in enumerate(zip(predicted, observed))
                   if not same_answer(said, value)]
            where = f" (element {', '.join(off)} off)" if off else ""
            print(f"question 5, {name}: you said {predicted!r} ✗{where}")
