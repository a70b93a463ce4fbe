"""Lesson 03: FakeQuantize's v spelled one way in forward and backward (review 77, W7)."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises.lesson03_straight_through.fake_quantize_spellings import (
    check_one_spelling, split_half_values)
from tools.catalogue.lesson03_straight_through import MISTAKES, UNUSUAL

pytestmark = pytest.mark.lesson03

DTYPES = (torch.float64, torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_two_spellings_round_apart_at_every_half(dtype):
    """Is every half-code of the case one where x / scale and x * (1 / scale) round to
    different codes (else the check returns without a word)?"""
    values = split_half_values("cpu", dtype)
    x, scale = values["x"], values["scale"]
    halves = (x / scale) % 1 == 0.5
    assert halves.sum() == 4
    apart = torch.round(x / scale) != torch.round(x * (1 / scale))
    assert torch.equal(apart, halves)
    assert (x / scale).abs().max() < values["qmax"]  # inside the clip: no clipped terms


@pytest.mark.parametrize("dtype", DTYPES)
def test_mixed_spellings_are_named_and_consistent_ones_pass(dtype):
    """Do both mixed spellings fail with their named mistake, and every catalogued correct
    spelling of v (x / scale, x * (1 / scale), x * scale.reciprocal(), v saved) pass?"""
    mixed = [m for m in MISTAKES if "in forward, " in m.name and m.exercise == "FakeQuantize"]
    assert len(mixed) == 2
    for mistake in mixed:
        with pytest.raises(GradingError) as caught:
            check_one_spelling(mistake.load(), "cpu", dtype)
        assert caught.value.mistake == "FakeQuantize/v-spelled-two-ways"
    for unusual in (u for u in UNUSUAL if u.exercise == "FakeQuantize"):
        check_one_spelling(unusual.load(), "cpu", dtype)
