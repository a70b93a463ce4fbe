"""Does the fused-loss view measure the learner's chunked loss against the composed one?"""

import pytest

from tools.catalogue import mistake
from tools.solutions import solution
from widgets.fused_loss import (composed_loss, fused_loss_explorer, loss_inputs, measure_chunks,
                                measure_loss)

pytestmark = pytest.mark.lesson11

SMALL = dict(rows=64, features=8, vocabulary=256)


def test_is_the_chunked_peak_below_the_composed_one():
    x, weight, target = loss_inputs(**SMALL)
    runs = measure_chunks(solution("linear_cross_entropy"), x, weight, target, (8, 64), 1)
    composed, small, whole = runs
    assert composed.chunk_size is None and composed.peak_bytes >= 64 * 256 * 4
    assert small.peak_bytes < whole.peak_bytes <= composed.peak_bytes
    assert small.grad_error < 1e-5 and small.loss_error < 1e-5 and small.ms > 0


def test_does_the_accounting_see_the_logits_of_the_composed_loss():
    x, weight, target = loss_inputs(32, 4, 128)
    run = measure_loss(composed_loss, x, weight, target, None, repeats=1)
    assert run.peak_bytes >= 2 * 32 * 128 * 4  # the logits and the log-probabilities


def test_does_the_slider_move_the_mark_and_the_readout():
    view = fused_loss_explorer(solution("linear_cross_entropy"), chunk_sizes=(8, 16, 32, 64),
                               repeats=1, **SMALL)
    before = view.panes["plot"].value
    view.controls["chunk_size"].value = 64
    assert "chunk_size = 64" in view.panes["readout"].value
    assert view.panes["plot"].value != before


def test_does_the_view_show_a_wrong_loss_as_wrong():
    wrong = mistake("linear_cross_entropy", "backward ignores grad_output").load()
    view = fused_loss_explorer(wrong, chunk_sizes=(8, 16, 32), repeats=1, **SMALL)
    assert "chunk_size = 32" in view.panes["readout"].value  # grad_output is 1: right here

    def broken(x, weight, target, chunk_size=1024):
        raise RuntimeError("shapes cannot be multiplied")

    view = fused_loss_explorer(broken, chunk_sizes=(8, 16, 32), repeats=1, **SMALL)
    assert "shapes cannot be multiplied" in view.panes["readout"].value


def test_does_an_unchunked_answer_get_flagged_by_its_peak():
    whole = mistake("linear_cross_entropy", "all the logits at once").load()
    x, weight, target = loss_inputs(**SMALL)
    runs = measure_chunks(whole, x, weight, target, (8,), 1)
    assert runs[1].peak_bytes >= 64 * 256 * 4  # chunk_size ignored: N x V logits


def test_does_a_wrong_gradient_raise_the_warning():
    def halved(x, weight, target, chunk_size=1024):
        return solution("linear_cross_entropy")(x, weight, target, chunk_size) * 0.5

    view = fused_loss_explorer(halved, chunk_sizes=(8, 16, 32), repeats=1, **SMALL)
    assert "differ from the composed loss" in view.panes["readout"].value


def test_is_the_peak_measured_on_each_device(device):
    x, weight, target = loss_inputs(64, 8, 256, device)
    fused = measure_loss(solution("linear_cross_entropy"), x, weight, target, 8, repeats=1)
    composed = measure_loss(composed_loss, x, weight, target, None, repeats=1)
    assert 0 < fused.peak_bytes < composed.peak_bytes


def test_does_a_higher_peak_read_as_higher_never_as_a_ratio_below_one_lower():
    """Is a chunked peak above the composed one called higher, not "0.9x lower"?"""
    from widgets.fused_loss import peak_comparison

    assert peak_comparison(100, 400) == "4.0× lower than"
    assert peak_comparison(440, 400) == "1.1× higher than"
    assert peak_comparison(400, 400) == "as high as"
