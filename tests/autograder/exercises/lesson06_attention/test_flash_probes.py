"""lesson06_attention.flash_probes and attention_bias: the probes behind lesson 06's
contract checks that values cannot show (which score tiles are computed, whether a failure
comes from the magnitude of the scores, which inputs' gradients open the bias's)."""

import pytest

from autograder.checks import make_inputs
from autograder.errors import GradingError
from autograder.exercises.lesson06_attention import attention_bias
from autograder.exercises.lesson06_attention import flash_attention as flash
from autograder.exercises.lesson06_attention.flash_magnitude import (deep_values, magnitude_values,
                                                                     recognise_magnitude)
from autograder.exercises.lesson06_attention.flash_probes import (ScoreTiles,
                                                                  recognise_masked_first_tile,
                                                                  tagged_values)
from tests.autograder.catalogued import mistake, unusual
from tools.solutions import solution

pytestmark = pytest.mark.lesson06


def _tiles(function, causal=True):
    """The score tiles ``function`` computes above the causal diagonal, by phase."""
    values = tagged_values((2,), 10, 13, 5, 3, "cpu", causal=causal)
    inputs = make_inputs(values)
    with flash.block_size(function, 4), ScoreTiles(10, 13, 5) as tiles:
        output = function.apply(*inputs.values())
        tiles.phase = "backward"
        output.sum().backward()
    return tiles


def test_score_tiles_name_each_tile_by_its_rows():
    """Does the fingerprint name the queries and keys of every tile the solution computes,
    none of them above the diagonal (query i sees keys j <= i + 3 here)?"""
    tiles = _tiles(solution("FlashAttention"))
    forward = tiles.computed["forward"]
    assert ({0, 1, 2, 3}, {0, 1, 2, 3}) in forward and ({8, 9}, {12}) in forward
    assert tiles.above_diagonal("forward") == tiles.above_diagonal("backward") == []


def test_causal_check_counts_tiles_above_the_diagonal_not_total_work():
    """Is a backward that computes each needed tile twice (two passes) accepted, and one tile
    above the diagonal in forward caught?"""
    two_pass = _tiles(unusual("FlashAttention", "two-pass backward: a dK/dV pass, then a dQ "
                                                "pass (CS336's design)"))
    once = _tiles(solution("FlashAttention"))
    assert len(two_pass.computed["backward"]) > len(once.computed["backward"])
    assert two_pass.above_diagonal("backward") == []
    every = _tiles(mistake("FlashAttention", "every tile computed under causal"))
    assert every.above_diagonal("forward") and every.above_diagonal("backward") == []


def test_magnitude_hint_needs_the_shift_probe():
    """Is the overflow or underflow hint given only when moving each row's scores to around
    0 makes the same Function right (an answer wrong at every magnitude gets none)?"""
    values = magnitude_values("cpu")
    reference = flash.flash_reference
    with flash.block_size(mistake("FlashAttention", "no rescaling of the running output"), 4):
        assert recognise_magnitude(mistake("FlashAttention", "no rescaling of the running "
                                                             "output"), values, reference) is None
    started_at_0 = mistake("FlashAttention", "running maximum started at 0")
    with flash.block_size(started_at_0, 4):
        assert "underflows" in recognise_magnitude(started_at_0, values, reference)
    with flash.block_size(solution("FlashAttention"), 4):
        assert recognise_magnitude(solution("FlashAttention"), values, reference) is None


def test_running_maximum_started_at_minus_1e4_underflows_in_float64():
    """A running maximum started at -1e4 passes the float32 rows near -160 (it is below them);
    do float64 rows near -20000 show it (exp(-1e4) is 0: nan), with the underflow hint, while
    the solution is right there?"""
    values = deep_values("cpu")
    reference = flash.flash_reference
    started = mistake("FlashAttention", "running maximum started at -1e4")
    with flash.block_size(started, 4):
        assert recognise_magnitude(started, magnitude_values("cpu"), reference) is None
        hint = recognise_magnitude(started, values, reference)
    assert "underflows" in hint and "float64 scores all lie near -20000" in hint
    with flash.block_size(solution("FlashAttention"), 4):
        assert recognise_magnitude(solution("FlashAttention"), values, reference) is None


def test_masked_first_tile_hint_only_under_causal():
    """Is the fully-masked-first-tile hint given for key blocks visited backwards under
    causal, and never without causal?"""
    backwards = mistake("FlashAttention", "key blocks visited last to first")
    with flash.block_size(backwards, 4):
        causal = flash.flash_values((2,), 5, 11, 3, 3, "cpu", causal=True)
        assert "nan under causal only" in recognise_masked_first_tile(backwards, causal)
        assert recognise_masked_first_tile(backwards, dict(causal, causal=False)) is None


def test_bias_gated_on_q_or_k_is_named_only_when_pairs_prove_it():
    """Is a grad_bias computed only beside Q or K named as such, and the solution's backward
    (which computes it whenever the bias asks) never?"""
    values = attention_bias.bias_values("heads", 2, 2, 3, 4, 2, 2, "cpu", seed=20)
    gated = mistake("AttentionWithBias", "grad_bias computed only when Q or K needs a gradient")
    error = GradingError("returns None for bias", mistake="AttentionWithBias/gate-on-wrong-entry")
    assert "only inside the branch" in attention_bias.bias_gated_on_q_or_k(gated, values, error)
    assert attention_bias.bias_gated_on_q_or_k(solution("AttentionWithBias"), values,
                                               error) is None


def test_row_sum_probe_passes_the_solution_and_names_rounded_probabilities(raises_hint):
    """Does the float16 row-sum case pass the solution, and name a row sum of P rounded to the
    input dtype, which every other case passes?"""
    from autograder.exercises.lesson06_attention.flash_low_precision import (
        check_row_sum_in_float32)
    check_row_sum_in_float32(solution("FlashAttention"), "cpu")
    with raises_hint("the running row sum adds P rounded to the input dtype"):
        check_row_sum_in_float32(
            mistake("FlashAttention", "row sum of P rounded to the input dtype"), "cpu")
