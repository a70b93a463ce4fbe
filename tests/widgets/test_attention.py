"""Does the attention view get P and dS from the learner's Function and spot mask bugs? Does
the online-softmax stepper converge, and does the peak meter see a full matrix?"""

import math

import torch

from widgets.attention import attention_explorer, attention_maps, build_mask


def _inputs(heads=2, length=5, dim=4):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(heads, length, dim, generator=generator, dtype=torch.float64)
            for _ in range(4)]


def test_does_build_mask_combine_causal_and_padding():
    keep = build_mask(4, 4, causal=True, padding=1)
    assert keep.tolist() == [[True, False, False, False], [True, True, False, False],
                             [True, True, True, False], [True, True, True, False]]
    assert build_mask(3, 3, causal=False, padding=0) is None


def test_are_p_and_ds_the_learners_and_right(ref):
    Q, K, V, grad_output = _inputs()
    keep = build_mask(5, 5, causal=True, padding=0)
    maps = attention_maps(ref.Attention, Q, K, V, 0.5, keep, grad_output)
    torch.testing.assert_close(maps.weights, maps.reference_weights)
    torch.testing.assert_close(maps.score_grads, maps.reference_score_grads)
    assert maps.weights[:, ~keep].abs().max() == 0
    torch.testing.assert_close(maps.score_grads.sum(-1), torch.zeros(2, 5, dtype=torch.float64))
    assert max(maps.errors.values()) < 1e-10


def test_does_it_catch_an_ignored_mask(ref):
    Q, K, V, grad_output = _inputs()
    keep = build_mask(5, 5, causal=True, padding=0)
    maps = attention_maps(ref.MasklessAttention, Q, K, V, 0.5, keep, grad_output)
    assert maps.errors["output"] > 1e-3
    assert maps.weights[:, ~keep].abs().max() > 0


def test_do_the_selectors_and_toggles_change_the_view(ref):
    view = attention_explorer(ref.Attention, heads=2, length=6, dim=4)
    assert set(view.controls) == {"head", "query", "causal", "padding"}
    picture = view.panes["plot"].value
    view.controls["query"].value = 2
    assert "query 2" in view.panes["readout"].value
    assert view.panes["plot"].value != picture
    picture = view.panes["plot"].value
    view.controls["causal"].value = True
    assert view.panes["plot"].value != picture
    assert "✗" not in view.panes["readout"].value


def test_does_the_view_warn_about_weight_on_masked_keys(ref):
    view = attention_explorer(ref.MasklessAttention, heads=1, length=6, dim=4)
    view.controls["padding"].value = True
    assert "sits on masked keys" in view.panes["readout"].value


def test_does_the_view_report_a_stub(ref):
    view = attention_explorer(ref.Stub, heads=1, length=4, dim=4)
    assert "not implemented yet" in view.panes["readout"].value


# ------------------------------------------------------------- online softmax and peaks
from widgets.flash import (measure_attention, measure_one,  # noqa: E402
                           online_softmax_stepper, online_softmax_steps)


def test_does_the_online_softmax_reach_the_exact_row():
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(10, generator=generator, dtype=torch.float64) * 3
    values = torch.randn(10, 2, generator=generator, dtype=torch.float64)
    steps = online_softmax_steps(scores, values, 4)
    assert [step["seen"] for step in steps] == [0, 4, 8, 10]
    torch.testing.assert_close(steps[-1]["output"], torch.softmax(scores, 0) @ values)
    assert steps[-1]["m"] == scores.max().item()
    assert abs(steps[-1]["m"] + math.log(steps[-1]["ell"])
               - torch.logsumexp(scores, 0).item()) < 1e-12
    assert all(0 < step["alpha"] <= 1 for step in steps[2:])


def test_does_the_stepper_move_with_its_slider():
    view = online_softmax_stepper(length=12, block=4, seed=0)
    last = view.panes["plot"].value
    assert "max |o/ℓ − exact row|" in view.panes["readout"].value
    view.controls["blocks"].value = 1
    assert view.panes["plot"].value != last
    assert "keys seen" in view.panes["readout"].value
    view.controls["blocks"].value = 0
    assert "No key seen yet" in view.panes["readout"].value


def test_does_measure_one_see_the_full_matrix_of_plain_attention():
    def plain(Q, K, V, scale):
        return torch.softmax(Q @ K.transpose(-2, -1) * scale, -1) @ V

    row = measure_one(plain, 64, d=8)
    assert row["largest"] == 64 * 64 and row["largest beyond"] == 64 * 64
    assert row["peak"] >= 64 * 64 * 4 and row["ms"] > 0


def test_is_the_peak_the_step_peak_the_lesson_teaches():
    """Is ``peak`` max(forward, kept + backward), above both phases' own peaks when forward
    keeps the probabilities?"""
    def plain(Q, K, V, scale):
        return torch.softmax(Q @ K.transpose(-2, -1) * scale, -1) @ V

    row = measure_one(plain, 64, d=8, repeats=1)
    assert row["peak"] == max(row["forward peak"], row["kept"] + row["backward peak"])
    assert row["peak"] > max(row["forward peak"], row["backward peak"])


def test_are_the_timed_runs_interleaved():
    """Does each round run every Function once before the next round starts?"""
    calls = []

    def named(name):
        def attention(Q, K, V, scale):
            calls.append(name)
            return Q * scale
        return attention

    rows = measure_attention({"a": named("a"), "b": named("b")}, lengths=(8,), d=4, repeats=3)
    assert calls[:6] == ["a", "b"] * 3 and [row["name"] for row in rows][:2] == ["a", "b"]
    assert all(row["ms"] > 0 for row in rows)
