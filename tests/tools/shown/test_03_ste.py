"""Lesson 03's live checker of LSQ's two derivatives, against autograd through the detach
trick: the worked answer passes, the product rule's lost term and a kept 1/s are located."""

import torch

from tests.tools.shown.lesson_code import definitions, printed


def _check(dy_dx, dy_ds) -> list[str]:
    """What check_fake_quantize_derivation prints for ``dy_dx`` and ``dy_ds``."""
    lesson = definitions("03_ste", "compare", "lsq_by_autograd", "check_fake_quantize_derivation",
                         my_dy_dx=dy_dx, my_dy_ds=dy_ds, predicted_y=None,
                         predicted_dy_dx=None, predicted_dy_ds=None)
    return printed(lesson["check_fake_quantize_derivation"])


def test_worked_lsq_derivatives_pass_and_the_minus_v_only_slip_fails():
    worked = definitions("03_ste", "my_dy_dx", "my_dy_ds")
    lines = _check(worked["my_dy_dx"], worked["my_dy_ds"])
    assert lines[:2] == ["s = 0.5: dy/dx ✓; dy/ds ✓", "s = 1.5: dy/dx ✓; dy/ds ✓"], lines
    assert lines[2] == "question 5, y: no prediction written", lines

    def minus_v_only(x, s, qmin, qmax):  # forgets the product rule's round(v) term
        v = x / s
        return torch.where(v < qmin, float(qmin), torch.where(v > qmax, float(qmax), -v))

    def one_over_s(x, s, qmin, qmax):  # keeps the chain rule's 1/s, drops the outer factor s
        v = x / s
        return ((v >= qmin) & (v <= qmax)) / s

    lines = _check(one_over_s, minus_v_only)
    assert lines[0].startswith("s = 0.5: dy/dx ✗ at v = -4: yours 2, autograd's 1"), lines
    assert "dy/ds ✗ at v = -4: yours 4, autograd's 0" in lines[0], lines
