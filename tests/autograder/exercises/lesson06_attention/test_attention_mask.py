"""lesson06_attention.attention_mask and flash_low_precision: a mask that large scores beat
is named only where the probes prove it (right without the mask, right at small scores), the
reversed-polarity hint only where moderate scores show it, and a score tile rounded to the
half dtype only where attention with rounded scores explains the output."""

import pytest
import torch

from autograder.exercises.lesson06_attention import attention_mask
from autograder.exercises.lesson06_attention.flash_low_precision import (low_precision_values,
                                                                         rounded_scores)
from autograder.exercises.lesson06_attention.flash_probes import block_size
from autograder.exercises.lesson06_attention.flash_spec import flash_reference
from tests.autograder.catalogued import mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson06

S = "ScaledDotProductAttention"


def test_the_case_puts_masked_scores_far_above_the_visible_ones():
    """Are visible scores between about -7000 and -20000 and masked ones above +7000?"""
    values = attention_mask.masked_above_values("cpu")
    scores = values["Q"] @ values["K"].transpose(-2, -1)
    visible, hidden = scores[..., :3], scores[..., 3:]
    assert -21000 < visible.min() and visible.max() < -6900 and hidden.min() > 6900


def test_finite_fill_is_named_for_fills_and_not_for_the_solution_or_reversed_polarity():
    values = attention_mask.masked_above_values("cpu")
    for name in ("masked scores filled with -1e4", "additive -10000 on masked scores"):
        hint = attention_mask.finite_fill(mistake(S, name), S, values)
        assert hint is not None and "mask loses to large scores" in hint
    assert attention_mask.finite_fill(solution(S), S, values) is None
    reversed_ = mistake(S, "reversed mask")
    assert attention_mask.finite_fill(reversed_, S, values) is None  # wrong at small scores too
    assert attention_mask.reversed_at_moderate_scores(reversed_, "cpu")
    assert not attention_mask.reversed_at_moderate_scores(
        mistake(S, "additive -10000 on masked scores"), "cpu")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rounded_scores_named_only_for_a_half_score_tile(dtype):
    values = low_precision_values("cpu", dtype)
    expected = flash_reference(**{n: v.double() if isinstance(v, torch.Tensor) else v
                                  for n, v in values.items()})
    tolerance = 3e-2 if dtype == torch.bfloat16 else 4e-3
    for function, named in ((mistake("FlashAttention", "score tile computed in the input dtype"),
                             True), (solution("FlashAttention"), False)):
        with block_size(function, 16), torch.no_grad():
            output = function.apply(*values.values())
        assert (rounded_scores(output, values, expected, tolerance) is not None) == named
