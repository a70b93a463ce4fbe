"""lesson06_attention.attention and .flash_attention: what the catalogue harness
(tests/autograder/test_catalogue.py) does not already run for lesson 06: the fuller hints,
hand-made Functions built on the solutions, autograder.memory's accounting and
autograder.tiled's reference."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import make_inputs, run_forward
from autograder.exercises import EXERCISES
from autograder.exercises.lesson06_attention import attention as lesson
from autograder.exercises.lesson06_attention import flash_attention as flash
from autograder.grading import verdict
from autograder.memory import TensorAccounting
from autograder.tiled import tiled_backward, tiled_forward
from grader.lessons import LESSONS
from tests.autograder.catalogued import mistake
from tools.catalogue.lesson06_attention.answers import FLASH as FLASH_ANSWER
from tools.solutions import solution, stub

pytestmark = pytest.mark.lesson06

SDPA = EXERCISES["ScaledDotProductAttention"]
MEMORY_EFFICIENT = EXERCISES["MemoryEfficientAttention"]
FLASH = EXERCISES["FlashAttention"]
S, M = "ScaledDotProductAttention", "MemoryEfficientAttention"


class TestRegistry:
    def test_exercises_are_registered(self):
        """Are the three exercises found by name, for lesson 06?"""
        assert SDPA.lesson == MEMORY_EFFICIENT.lesson == FLASH.lesson == "06_attention"


class TestReference:
    def test_reference_matches_sdpa(self):
        """Does the grader's own reference agree with F.scaled_dot_product_attention, whose
        boolean attn_mask also means True = attend?"""
        values = lesson.attention_values((2, 3), 5, 7, 4, 3, "cpu", mask="random")
        expected = F.scaled_dot_product_attention(values["Q"], values["K"], values["V"],
                                                  attn_mask=values["mask"], scale=values["scale"])
        torch.testing.assert_close(lesson.attention_reference(**values), expected)

    @pytest.mark.parametrize("kind", ["causal", "padding", "random", "random2d"])
    def test_every_query_keeps_a_key(self, kind):
        """Does every mask kind leave each query at least one key, broadcastable to the scores?"""
        lead, Lq, Lk = (2, 3), 4, 6
        mask = lesson.make_mask(kind, lead, Lq, Lk, "cpu", seed=1)
        full = mask.expand(*lead, Lq, Lk)
        assert mask.dtype == torch.bool and full.any(-1).all()
        if kind != "causal":
            assert not full.all()


class TestCorrect:
    def test_memory_efficient_answer_passes_as_scaled_dot_product(self):
        """Does Exercise 2's solution, a correct attention too, pass Exercise 1's self-check and
        hidden checks on every device? (Each solution under its own name: test_catalogue.)"""
        SDPA.run(solution(M))

    def test_memory_efficient_saves_per_row(self):
        """Does the memory-efficient reference save Q, K, V, the mask, the output and one
        number per query row, by the probe?"""
        values = lesson.attention_values((2,), 16, 16, 4, 4, "cpu", mask="causal")
        forward = run_forward(solution(M), lesson.MEMORY_EFFICIENT,
                              make_inputs(values))
        roles = sorted(s.role for s in forward.saved)
        assert roles == ["input K", "input Q", "input V", "input mask", "intermediate", "output"]
        lse = next(s for s in forward.saved if s.role == "intermediate")
        assert lse.shape == (2, 16)


class TestMistakes:
    def test_row_sum_found_through_the_generic_failure(self, raises_hint):
        """Is the row-sum mistake named even on a shape where the generic gradient hint
        fires first, and is the generic hint kept in the details?"""
        values = lesson.attention_values((3,), 4, 7, 5, 3, "cpu", mask="causal")
        with raises_hint("treats the softmax as element-wise") as info:
            lesson.check_attention(mistake(S, "no row sum"), lesson.SDPA, values)
        assert "your gradient for Q" in str(info.value)

    def test_unrecognised_mistakes_keep_the_generic_hint(self, raises_hint):
        """Is a wrong gradient that matches no named mistake still diagnosed generically?"""

        correct = solution(S)

        class DoubledValueGradient(correct):
            @staticmethod
            def backward(ctx, grad_output):
                grads = correct.backward(ctx, grad_output)
                return grads[0], grads[1], 2 * grads[2], None, None

        with raises_hint("your gradient for V is off by a constant factor 2"):
            SDPA.run(DoubledValueGradient)

    def test_stub_raises_not_implemented(self):
        """Does the notebook stub's NotImplementedError reach the learner unchanged?"""

        with pytest.raises(NotImplementedError):
            SDPA.run(stub(S))
        with pytest.raises(NotImplementedError):
            MEMORY_EFFICIENT.run(stub(M))


def test_a_backward_the_inputs_cannot_tell_apart_is_not_named():
    """On the scores in the thousands (rows nearly one-hot), a diagonal-only dS and the right
    one agree to the checks' tolerance: is the right backward never blamed for it?"""
    values = lesson.attention_values((2,), 4, 6, 4, 3, "cpu", mask="causal", seed=21,
                                     magnitude=6.0, scale=60.0)  # check_stable's inputs
    for name, spec in ((S, lesson.SDPA), (M, lesson.MEMORY_EFFICIENT)):
        assert lesson.known_mistake(solution(name), spec, values) is None


def test_flash_hints_name_the_case():
    """Do FlashAttention's hints say which shapes, dtype, causal flag and BLOCK failed?"""
    message = verdict("FlashAttention", mistake("FlashAttention", "D from dP instead of dO * O")
                      )[1].splitlines()[0]
    assert "(with Q (2, 6, 3), K (2, 9, 3), V (2, 9, 2), float64, causal=False, BLOCK=4)" in message


# -------------------------------------------------------------------- memory accounting
class TestAccounting:
    def test_peak_and_largest(self):
        """Does the accounting see a temporary's bytes at the peak, the largest tensor, views
        as free, and memory given back when a tensor dies?"""
        x = torch.zeros(100)
        with TensorAccounting() as books:
            y = torch.ones(1000)  # 4000 bytes
            view = y[:10].reshape(2, 5)
            del y, view
            z = x * 2  # 400 bytes, after y is gone
        assert books.phase.peak == 4000
        assert books.phase.largest.shape == (1000,)
        assert books.now == z.untyped_storage().nbytes() == 400

    def test_products(self):
        """Are matrix products recorded with their rows, inner size and columns?"""
        a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
        with TensorAccounting() as books:
            a @ b
        assert [(p.rows, p.inner, p.cols, p.batch) for p in books.phase.products] == [
            (3, 4, 5, 2)]

    def test_peak_check_alone_catches_kept_tiles(self, raises_hint):
        """Is a FlashAttention that keeps every tile of P alive (no tensor bigger than a tile)
        caught by the count of live tiles, and named as a list of tiles?"""
        keeps_tiles = FLASH_ANSWER.replace(
            "                m = m_new\n",
            "                m = m_new\n                kept.append(p)\n").replace(
            "        for i in range(0, Lq, block):\n            q = Q[",
            "        kept = []\n        for i in range(0, Lq, block):\n            q = Q[")
        function = load_flash(keeps_tiles)
        with raises_hint("kept the tiles of every query block alive: a list of tiles"):
            flash.check_allocations(function, flash.flash_values((1,), 96, 96, 2, 3, "cpu"), 16)

    def test_tile_count_catches_a_row_of_tiles_kept(self, raises_hint):
        """Is a forward that lists a query block's score tiles, takes their exact maximum and
        only then exponentiates them caught where d + dv is small (review 78, W3j)?"""
        from tools.catalogue import mistake

        function = mistake("FlashAttention", "a query block's score tiles kept in a list: "
                           "exact maximum, then exp").load()
        with raises_hint("forward kept every tile of a row alive: a list of tiles"):
            flash.check_allocations(function, flash.flash_values((), 24, 256, 2, 1, "cpu"), 16)
        flash.check_allocations(load_flash(FLASH_ANSWER),
                                flash.flash_values((), 24, 256, 2, 1, "cpu"), 16)


def load_flash(code):
    from tools.catalogue import load

    return load("FlashAttention", code)


# ------------------------------------------------------------------- the tiled reference
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_reference_is_attention(causal):
    """Does the grader's own tiled attention give the reference's values and gradients?"""
    values = flash.flash_values((2,), 7, 10, 3, 2, "cpu", causal=causal)
    inputs = make_inputs(values)
    expected = flash.flash_reference(**inputs)
    O, L = tiled_forward(*(values[n] for n in ("Q", "K", "V", "scale", "causal")), 3)
    torch.testing.assert_close(O, expected.detach())
    grad_output = torch.randn_like(O)
    truth = torch.autograd.grad(expected, [inputs[n] for n in "QKV"], grad_output)
    grads = tiled_backward(values["Q"], values["K"], values["V"], O, grad_output, L,
                           values["scale"], causal, 3)
    for grad, true in zip(grads, truth):
        torch.testing.assert_close(grad, true)


def test_flash_block_attribute_restored():
    """Is FlashAttention.BLOCK back to 64 after grading, and is a missing BLOCK named?"""
    function = solution("FlashAttention")
    FLASH.run(function)
    assert function.BLOCK == 64

    class NoBlock(torch.autograd.Function):
        @staticmethod
        def forward(ctx, Q, K, V, scale, causal=False):
            return Q.clone()  # Q itself is named first, by the Function contract's rule 1

    with pytest.raises(Exception, match="class attribute BLOCK = 64"):
        FLASH.run(NoBlock)


def test_softmax_hints_ask_and_do_not_give_the_vjp():
    """Do the softmax-backward hints name the mistake without printing the closed form of the
    softmax's vector-Jacobian product (issue 38: the answer only after the self-check), and
    point to the Jacobian the lesson prints, under a heading the lesson has?"""
    source = (LESSONS / "06_attention.py").read_text()
    assert "## Derive the backward" in source and "torch.autograd.functional.jacobian" in source
    for hint in (lesson.ELEMENTWISE, lesson.DIAGONAL_ONLY):
        assert "rowsum" not in hint and "dP - " not in hint
        assert '"Derive the backward" prints' in hint
