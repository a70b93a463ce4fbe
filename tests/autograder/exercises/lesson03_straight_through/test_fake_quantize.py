"""Lesson 03's FakeQuantize: what the catalogue harness (tests/autograder/test_catalogue.py)
does not cover: float64 held to float64's precision, and the stable ids of the float32 probes."""

import pytest

from tests.autograder.catalogued import graded_mistake, mistake, unusual
from tests.autograder.exercises.battery import run

pytestmark = pytest.mark.lesson03

FLOAT32 = [  # (catalogued mistake, first words of its hint, id)
    ("grad_x made in torch.zeros without dtype=",
     "FakeQuantize's gradient for x is right only to float32's precision, every value a float32 "
     "number (at x / scale = -4 it gives", "FakeQuantize/grad-x-in-float32"),
    ("both gradients cast to float32",
     "FakeQuantize's gradient for x is right only to float32's precision",
     "FakeQuantize/grad-x-in-float32"),
    ("scale's gradient summed in float32",
     "FakeQuantize's gradient for scale is right only to float32's precision, its value a "
     "float32 number (it gives", "FakeQuantize/grad-scale-in-float32"),
    ("forward computed on x.float()",
     "FakeQuantize's codes are round(x / scale) computed in float32 (at x / scale = "
     "2.5000000009313226 it gives 1, expected 1.5)", "FakeQuantize/codes-in-float32"),
    ("codes rounded in float32, times scale in x's dtype",  # exact at the power-of-two scale
     "FakeQuantize's codes are round(x / scale) computed in float32 (at x / scale = "
     "2.5000000009313226 it gives 1, expected 1.5)", "FakeQuantize/codes-in-float32"),
    ("each element's scale term in float32, summed in float64",
     "FakeQuantize's gradient for scale is the sum of grad_output times each element's "
     "d(output)/d(scale) rounded to float32 (it gives", "FakeQuantize/grad-scale-in-float32"),
    ("1 / scale.float() in backward, for float64 x",
     "your gradient for scale agrees to float32 precision only: it is what 1 / scale rounded "
     "to float32 gives (it gives", "FakeQuantize/reciprocal-in-float32"),
    ("forward by torch.fake_quantize_per_tensor_affine",
     "torch.fake_quantize_per_tensor_affine computes in float32 on float64 x",
     "FakeQuantize/output-in-float32"),
]


@pytest.mark.parametrize("entry, hint, _", FLOAT32, ids=[e for e, _, _ in FLOAT32])
def test_a_float32_step_fails_the_battery_itself(entry, hint, _, raises_hint):
    """Does the battery, not only the domain's checks after it, hold float64 answers to
    float64's precision, and name a step that ran in float32?"""
    with raises_hint(hint):
        run("FakeQuantize", mistake("FakeQuantize", entry))


@pytest.mark.parametrize("entry, _, expected", FLOAT32, ids=[e for e, _, _ in FLOAT32])
def test_a_float32_step_is_graded_with_its_id(entry, _, expected):
    """Does grading record the float32 probe's stable id?"""
    assert graded_mistake("FakeQuantize", entry) == expected


@pytest.mark.parametrize("entry", [
    "grad_scale shaped (1,): the engine sums it to scale's shape",
    "the step read as a Python float with scale.item()",
    "forward saves the mask and d(output)/d(scale), not x"])
def test_right_answers_in_float64_pass_the_battery(entry):
    """Are right answers written otherwise, in float64 throughout, within the tighter bound?"""
    run("FakeQuantize", unusual("FakeQuantize", entry))


def test_odd_edges_tell_half_offset_bounds_from_round():
    """Does v >= qmin - 0.5 and v < qmax + 0.5 agree with round(v) in [qmin, qmax] on the
    first edge values (qmin even, qmax odd) and disagree on the second (qmin odd, qmax even),
    at -3.5 and 4.5?"""
    import torch
    from autograder.exercises.lesson03_straight_through.fake_quantize_values import (
        edge_values, odd_edge_values)
    for made, disagree in ((edge_values("cpu"), []), (odd_edge_values("cpu"), [-3.5, 4.5])):
        v, qmin, qmax = made["x"] / made["scale"], made["qmin"], made["qmax"]
        halves = (v >= qmin - 0.5) & (v < qmax + 0.5)
        rounded = (torch.round(v) >= qmin) & (torch.round(v) <= qmax)
        assert v[halves != rounded].tolist() == disagree


def test_half_offset_bounds_are_named_with_their_id(raises_hint):
    """Is a clip mask qmin - 0.5 <= v < qmax + 0.5 told that round's half-to-even makes it
    depend on the edges' parity, at -3.5 with qmin = -3, and graded with its id?"""
    entry = "inside as qmin - 0.5 <= v < qmax + 0.5"
    with raises_hint("FakeQuantize's gradient for x compares x / scale with qmin - 0.5 and "
                     "qmax + 0.5: torch.round sends a half to the even neighbour, so whether a "
                     "half beyond an edge is inside depends on the edge's parity (x / scale = "
                     "-3.5 rounds to -4, outside [-3, 4])"):
        run("FakeQuantize", mistake("FakeQuantize", entry))
    assert graded_mistake("FakeQuantize", entry) == "FakeQuantize/half-offset-bounds"


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_off_grid_edges_part_x_units_from_every_accepted_convention(dtype_name):
    """At a scale that is not a power of two, do x / scale, x * (1 / scale) and round of
    either agree on inside for every x, while qmin * scale <= x <= qmax * scale calls an x at
    each edge outside?"""
    import torch
    from autograder.exercises.lesson03_straight_through.fake_quantize_values import (
        off_grid_edge_values)
    made = off_grid_edge_values("cpu", getattr(torch, dtype_name))
    x, scale, qmin, qmax = made["x"], made["scale"], made["qmin"], made["qmax"]
    masks = [(qmin <= v) & (v <= qmax) for w in (x / scale, x * (1 / scale))
             for v in (w, torch.round(w))]
    assert all(torch.equal(mask, masks[0]) for mask in masks)
    moved = masks[0] != ((x >= qmin * scale) & (x <= qmax * scale))
    assert sorted(torch.round(x[moved] / scale).tolist()) == [qmin, qmax]


def test_the_appendix_edge_where_the_two_ways_of_computing_v_part():
    """Is the appendix's example true: at x = 7 * 0.1, s = 0.1 (float64), x / scale is the edge
    7 exactly and x * (1 / scale) one ulp past it, so the grader must not judge such a point?"""
    import torch
    x, s = torch.tensor(7 * 0.1, dtype=torch.float64), torch.tensor(0.1, dtype=torch.float64)
    assert (x / s).item() == 7.0 and (x * (1 / s)).item() == 7.000000000000001
