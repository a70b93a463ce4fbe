"""Does the STE view find the jumps, the zero true derivative and the clipping window?"""

import pytest
import torch

from widgets.ste import ste_curves, ste_explorer, ste_point, window_text


def test_does_it_find_the_clipping_window(ref):
    curves = ste_curves(ref.SignClippedSTE)
    assert curves.windows == [(-1.0, 1.0)]
    assert len(curves.jumps) == 1 and abs(curves.jumps[0]) < 1e-6
    assert "-1 ≤ x ≤ 1" in window_text(curves)


def test_is_the_true_derivative_zero_away_from_jumps(ref):
    curves = ste_curves(ref.RoundSTE)
    assert curves.jumps == pytest.approx([-1.5, -0.5, 0.5, 1.5], abs=1e-6)
    finite = curves.true_derivative[~curves.true_derivative.isnan()]
    assert finite.abs().max() == 0
    assert (curves.surrogate == 1).all()
    assert window_text(curves).startswith("no clipping")


def test_does_a_point_on_a_jump_have_no_derivative(ref):
    assert ste_point(ref.SignSTE, 0.0).true_derivative is None
    point = ste_point(ref.SignClippedSTE, 1.5)
    assert (point.forward, point.surrogate, point.true_derivative) == (1.0, 0.0, 0.0)


def test_does_the_slider_update_the_readout(ref):
    view = ste_explorer(ref.SignClippedSTE)
    before = view.panes["plot"].value
    assert "inside the window" in view.panes["readout"].value
    view.controls["x"].value = 1.6
    assert "outside the window" in view.panes["readout"].value
    assert view.panes["plot"].value != before


def test_does_the_view_report_a_stub(ref):
    view = ste_explorer(ref.Stub)
    assert "not implemented yet" in view.panes["readout"].value


def test_is_the_clipped_stand_in_the_clamp(ref):
    """Is the drawn stand-in of SignClippedSTE clamp(x, -1, 1), 0 at x = 0, so that its slope is
    the surrogate? Exact for |x| <= 1; beyond, trapezoids across the corner add half a grid step."""
    curves = ste_curves(ref.SignClippedSTE)
    half_step = (curves.xs[1] - curves.xs[0]).item() / 2
    assert torch.allclose(curves.stand_in, curves.xs.clamp(-1, 1), rtol=0, atol=half_step + 1e-12)
    inside = curves.xs.abs() <= 1
    assert torch.allclose(curves.stand_in[inside], curves.xs[inside], rtol=0, atol=1e-12)


def test_is_the_plain_stand_in_x(ref):
    """Is RoundSTE's stand-in x itself, as for SignSTE?"""
    for function in (ref.RoundSTE, ref.SignSTE):
        curves = ste_curves(function)
        assert torch.allclose(curves.stand_in, curves.xs, rtol=0, atol=1e-12)
