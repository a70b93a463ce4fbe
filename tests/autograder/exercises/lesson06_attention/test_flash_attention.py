"""lesson06_attention.flash_attention: checks whose hint rests on a probe of the learner's
own code (a block size read in one pass only; a float64 answer that ran in float32; a
gradient returned in the accumulator's dtype)."""

import pytest
import torch

from autograder.exercises.lesson06_attention import flash_attention as flash
from autograder.grading import classified_verdict
from tests.autograder.catalogued import graded_mistake, mistake
from tools.catalogue import edit
from tools.catalogue.lesson06_attention.flash_low_precision import SOLUTION

pytestmark = pytest.mark.lesson06


def test_a_block_hard_coded_in_backward_alone_is_named(raises_hint):
    """Is a backward that ignores BLOCK (forward reads it) told so, from the BLOCK 4-vs-8
    probe run on backward, not that it materialises the full matrix?"""
    wrong = mistake("FlashAttention", "block size hard-coded in backward only")
    values = flash.flash_values((2,), 32, 32, 4, 3, "cpu", causal=True)
    with raises_hint("ignores FlashAttention.BLOCK in backward: its largest backward tile is "
                     "(64, 64) whether BLOCK is 4 or 8") as info:
        flash.check_allocations(wrong, values, 8)
    assert info.value.mistake == "FlashAttention/block-hard-coded-in-backward"


def test_float32_log_sum_exp_and_accumulators_are_named_by_the_saved_dtype():
    """Is a float64 FlashAttention whose L (and so its backward accumulators, of L's dtype) is
    float32 told that it keeps L in float32, read from the dtype it saved, not just that
    grad_Q is wrong?"""
    namespace = {}
    exec("import torch\nfrom torch.autograd.function import once_differentiable\n" + edit(
        SOLUTION, ("L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)",
                   "L = torch.empty(Q.shape[:-1], dtype=torch.float32, device=Q.device)")),
         namespace)
    verdict = classified_verdict("FlashAttention", namespace["FlashAttention"])
    assert not verdict.passed
    assert verdict.mistake == "FlashAttention/log-sum-exp-narrower-than-inputs"
    assert "keeps its log-sum-exp L in float32 for float64 inputs" in verdict.message


def test_a_gradient_returned_in_float32_for_bfloat16_inputs_is_named():
    """autograd's engine casts a float32 grad_Q to Q's half dtype before anyone sees it: is what
    backward itself returned read (the Function contract's autograder.returned_dtypes), and the
    cast asked for?"""
    assert graded_mistake("FlashAttention", "grad_Q returned in its float32 accumulator") == \
        "FlashAttention/wrong-gradient-dtype"


@pytest.mark.parametrize("name, named", [
    ("forward key loop ends at the last visible key (BLOCK rows)", "in-forward"),
    ("forward key loop ends at the last visible key (the block's rows)", "in-forward"),
    ("backward's first query block one query late", "in-backward"),
    ("both skip bounds off by one", "in-forward")])
def test_a_causal_skip_bound_off_by_one_is_caught_and_named(name, named):
    """Lk - Lq = 1 (mod BLOCK) with full query blocks: the key block that starts at a query
    block's last visible key is needed. Is an inclusive bound used as an exclusive one (in
    forward, in backward, or both) caught, and named from the probe (the values those dropped
    tiles give), not told in general that the output or a gradient is wrong?"""
    assert graded_mistake("FlashAttention", name) == \
        f"FlashAttention/causal-skip-bound-off-by-one-{named}"


def test_the_skip_probes_name_nothing_on_a_right_answer_or_another_mistake():
    """The probes name a slip only where the values are exactly what it gives: silent on the
    solution, and on a mask that hides the diagonal (another mistake, with its own hint)."""
    from autograder.exercises.lesson06_attention.flash_skip import (recognise_skip_backward,
                                                                    recognise_skip_forward)
    namespace = {}
    exec("import torch\nfrom torch.autograd.function import once_differentiable\n" + SOLUTION,
         namespace)
    right = namespace["FlashAttention"]
    hidden = mistake("FlashAttention", "causal mask with >=")
    values = flash.flash_values((2,), 8, 9, 3, 2, "cpu", causal=True, seed=3)
    for function in (right, hidden):
        with flash.block_size(function, 4):
            assert recognise_skip_forward(function, values, 4) is None
            assert recognise_skip_backward(function, values, 4) is None
