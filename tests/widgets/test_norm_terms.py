"""Does the normalisation terms view split dL/dx into its direct, mean and projection terms,
and name the term a wrong backward leaves out?"""

import pytest
import torch

from tools.catalogue import mistake
from tools.solutions import solution
from widgets.norm_terms import (TERMS, fit_terms, make_grad_output, norm_inputs,
                                norm_terms_explorer, statistics_html, terms_figure_png,
                                terms_html, trace_terms, verdict)

pytestmark = pytest.mark.lesson10

EPS = 1e-5


def _trace(function, kind="layer_norm", choice="random", random_weight=True):
    x, weight, bias = norm_inputs(3, 6, random_weight=random_weight)
    grad_output = make_grad_output(choice, x, EPS, kind)
    return trace_terms(function, kind, x, weight, bias, EPS, grad_output)


def test_do_the_terms_add_up_to_autograds_gradient():
    x, weight, bias = norm_inputs(3, 6, random_weight=True)
    grad_output = make_grad_output("random", x, EPS, "layer_norm")
    trace = trace_terms(solution("LayerNormFunction"), "layer_norm", x, weight, bias, EPS,
                        grad_output)
    leaf = x.clone().requires_grad_()
    truth, = torch.autograd.grad(torch.nn.functional.layer_norm(leaf, (6,), weight, bias, EPS),
                                 leaf, grad_output)
    assert torch.allclose(trace.reference, truth) and torch.allclose(trace.learner, truth)
    assert torch.allclose(trace.mean, x.mean(-1))


@pytest.mark.parametrize("kind,name", [("layer_norm", "LayerNormFunction"),
                                       ("rms_norm", "RMSNormFunction")])
def test_does_the_solution_get_every_term_once(kind, name):
    trace = _trace(solution(name), kind)
    box, text = verdict(trace, 1)
    assert box == "ok" and "every term" in text
    assert "×1" in terms_html(trace, 1)


def test_is_a_missing_projection_term_named_with_coefficient_zero():
    trace = _trace(mistake("LayerNormFunction", "no projection term").load())
    coefficients, residual, determined = fit_terms(trace, 0)
    assert determined and residual < 1e-8
    assert abs(coefficients["projection"]) < 1e-8 and abs(coefficients["direct"] - 1) < 1e-8
    assert "×0 " in verdict(trace, 0)[1] or "×0;" in verdict(trace, 0)[1]
    box, text = verdict(trace, 0)
    assert box == "error" and "no projection term" in text


def test_is_a_missing_mean_term_named():
    box, text = verdict(_trace(mistake("LayerNormFunction", "no mean term").load()), 2)
    assert "no mean term" in text


def test_has_rmsnorm_no_mean_term():
    trace = _trace(solution("RMSNormFunction"), "rms_norm")
    assert trace.mean is None and not trace.terms["mean"].any()
    assert "none in this norm" in terms_html(trace, 0)
    wrong = mistake("RMSNormFunction", "no projection term").load()
    box, text = verdict(_trace(wrong, "rms_norm"), 0)
    assert "no projection term" in text


def test_does_a_gradient_along_x_hat_vanish():
    """With weight ones and grad_output = x_hat, the projection removes everything."""
    trace = _trace(solution("LayerNormFunction"), choice="along x_hat", random_weight=False)
    assert trace.reference.abs().max() < 1e-3 * trace.terms["direct"].abs().max()


def test_are_the_learners_saved_statistics_recognised():
    trace = _trace(solution("LayerNormFunction"))
    html = statistics_html(trace, 0)
    assert "(mean)" in html and "(rstd)" in html


def test_does_a_failing_function_show_its_error():
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            raise NotImplementedError

    trace = _trace(Stub)
    assert trace.learner is None and verdict(trace, 0)[0] == "error"
    assert "not implemented yet" in verdict(trace, 0)[1]
    assert terms_figure_png(trace, 0).startswith(b"\x89PNG")


def test_does_every_control_redraw_the_view():
    view = norm_terms_explorer(mistake("LayerNormFunction", "no projection term").load())
    for name, new in [("row", 2), ("grad_output", "ones"), ("random weight", False)]:
        before = (view.panes["figure"].value, view.panes["message"].value)
        view.controls[name].value = new
        assert (view.panes["figure"].value, view.panes["message"].value) != before, name
    assert all(name in view.panes["terms"].value for name in TERMS)


def test_a_layernorm_mean_term_zero_for_this_grad_output_is_not_said_to_be_absent():
    """Issue 48 (learner 57): along x_hat, LayerNorm's mean term is 0 for that grad_output
    alone; did the table say 'none in this norm', which is RMSNorm's case? It must say the
    term is 0 for this grad_output, and RMSNorm's still 'none in this norm'."""
    trace = _trace(solution("LayerNormFunction"), choice="along x_hat", random_weight=False)
    html = terms_html(trace, 0)
    assert "none in this norm" not in html and "0 for this grad_output" in html
    rms = _trace(solution("RMSNormFunction"), kind="rms_norm", choice="along x_hat",
                 random_weight=False)
    assert "none in this norm" in terms_html(rms, 0)


def test_a_vanishing_gradient_is_drawn_on_its_terms_scale_and_says_how_small():
    """Issue 48 (learner 57): along x_hat the text says the gradient vanishes, but the right
    panel rescaled to ~2e-4 and drew tall bars. Do both panels share the terms' y-range, with
    a note giving the gradient's size against its largest term; and is there no note where the
    gradient is of the terms' size (random grad_output)?"""
    import io

    import matplotlib.image

    from widgets import norm_terms

    trace = _trace(solution("LayerNormFunction"), choice="along x_hat", random_weight=False)
    low, high = norm_terms._limits(trace, 0)
    largest = max(trace.terms[name][0].abs().max().item() for name in TERMS)
    assert high - low > largest  # the terms' scale, not the ~1e-4 gradient's
    note = norm_terms.vanishing_note(trace, 0)
    assert note and "vanishes" in note and "the terms cancel" in note
    assert matplotlib.image.imread(io.BytesIO(terms_figure_png(trace, 0)), "png").ndim == 3
    assert norm_terms.vanishing_note(_trace(solution("LayerNormFunction")), 0) is None
