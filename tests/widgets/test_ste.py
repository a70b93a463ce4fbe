"""Does the STE view find the jumps, the zero true derivative and the clipping window?"""

import pytest

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
