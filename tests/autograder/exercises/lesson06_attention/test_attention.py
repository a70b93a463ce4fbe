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
from autograder.grading import self_check, verdict
from autograder.memory import TensorAccounting
from autograder.tiled import tiled_backward, tiled_forward
from tests.autograder.catalogued import graded_mistake, mistake, unusual
from tools.catalogue.lesson06_attention.answers import FLASH as FLASH_ANSWER
from tools.solutions import solution, stub
from tests.autograder.passing import passes

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
    @pytest.mark.parametrize("exercise, name", [(SDPA, S), (SDPA, M), (MEMORY_EFFICIENT, M)],
                             ids=["sdpa", "memory-efficient-as-sdpa", "memory-efficient"])
    def test_passes(self, exercise, name, device):
        """Does a correct Function pass the self-check and every hidden check on every device?"""
        function = solution(name)
        exercise.run(function)
        exercise.battery(function, device)

    @pytest.mark.parametrize("name", ["ScaledDotProductAttention", "MemoryEfficientAttention",
                                      "FlashAttention"])
    def test_lesson_solutions_score_full(self, name, capsys):
        """Does the lesson's own solution pass the self-check and every hidden check?"""
        self_check(name, solution(name))
        assert verdict(name, solution(name)) == (True, passes(name))

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


# Catalogued mistakes of ScaledDotProductAttention, each with the fuller hint asserted here.
MISTAKES = [
    ("no row sum", "backward treats the softmax as element-wise, dS = P * dP: raising one "
                   "score also lowers every other probability of its row"),
    ("diagonal of the Jacobian only", "uses only the diagonal of the softmax's Jacobian, "
                                      "P * (1 - P) * dP"),
    ("row sum over the queries", "sums dP * P over the queries: which dimension of dP * P "
                                 "indexes the keys?"),
    ("softmax gradient from torch.autograd.grad", "ScaledDotProductAttention.backward calls "
                                                  "torch.autograd.grad: write the gradient "
                                                  "formula by hand"),
    ("built-in _softmax_backward_data", "uses the built-in op _softmax_backward_data"),
    ("reversed mask", "masks out the positions where mask is True: False means masked out"),
    ("reversed mask filled with -1e9", "masks out the positions where mask is True"),
    ("no maximum subtracted", "inf or nan for large scores, and is right once the same scores "
                              "are made small: subtract each row's maximum score"),
    ("scale missing from dQ and dK", "your gradient for Q is off by a constant factor"),
    ("mask kept as a ctx attribute", "stores a tensor as ctx.mask: use ctx.save_for_backward"),
    ("a gradient for the float scale", "backward returned a gradient for scale, which is not a "
                                       "tensor: return None for scale"),
]


def _ids(value):
    return value.replace(" ", "_") if len(value) < 45 else ""


class TestMistakes:
    @pytest.mark.parametrize("name, hint", MISTAKES, ids=_ids)
    def test_self_check_names_the_mistake(self, name, hint, raises_hint):
        """Does the visible self-check name each mistake?"""
        with raises_hint(hint):
            SDPA.run(mistake(S, name))

    @pytest.mark.parametrize("name, hint", MISTAKES, ids=_ids)
    def test_hidden_checks_name_the_mistake(self, name, hint, raises_hint, device):
        """Do the hidden checks name each mistake too, on every device?"""
        with raises_hint(hint):
            SDPA.battery(mistake(S, name), device)

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


# (the submission, a hint): ScaledDotProductAttention's own solution handed in as the
# memory-efficient one, then the catalogue's memory mistakes.
MEMORY_MISTAKES = [
    ("ScaledDotProductAttention's solution", "MemoryEfficientAttention saved an intermediate "
                                             "tensor of shape (2, 16, 19)"),
    ("saves the probabilities", "as big as the Lq x Lk probabilities: save one log-sum-exp per "
                                "query row"),
    ("saves the scores as well", "as big as the Lq x Lk probabilities"),
    ("no row sum", "MemoryEfficientAttention's backward treats the softmax as element-wise"),
]


def _memory_mistake(name: str):
    if name == "ScaledDotProductAttention's solution":
        return solution(S)
    return mistake(M, name)


class TestMemoryEfficientMistakes:
    @pytest.mark.parametrize("name, hint", MEMORY_MISTAKES, ids=_ids)
    def test_names_the_mistake(self, name, hint, raises_hint):
        """Does the self-check name each memory mistake?"""
        with raises_hint(hint):
            MEMORY_EFFICIENT.run(_memory_mistake(name))

    @pytest.mark.parametrize("name, hint", MEMORY_MISTAKES, ids=_ids)
    def test_hidden_checks_name_the_mistake(self, name, hint, raises_hint):
        """Do the hidden checks name each memory mistake too?"""
        with raises_hint(hint):
            MEMORY_EFFICIENT.battery(_memory_mistake(name), torch.device("cpu"))

    def test_two_row_statistics_are_allowed(self):
        """Is saving a row maximum and a row sum (two numbers per row) accepted?"""
        MEMORY_EFFICIENT.run(unusual(M, "row max and row sum saved, two numbers per row"))


def test_log_sum_exp_in_float32_for_float64_inputs_is_graded_with_its_id():
    """Is an L saved in float32 for float64 inputs (wrong only where the scores reach the
    thousands) named, with its stable id, instead of a bare gradient error or a diagonal-only
    backward?"""
    assert graded_mistake(M, "log-sum-exp kept in float32 for float64 inputs") == \
        f"{M}/saves-in-lower-precision"


def test_an_expanded_mask_saved_is_told_to_save_the_mask_as_given():
    """Is a mask saved expanded to the scores' shape (a bool copy as big as P) told to save
    the mask as given, with its id, not to recompute P (which it does)?"""
    assert graded_mistake(M, "saves the mask expanded to the scores' shape") == \
        f"{M}/saves-expanded-mask"
    with pytest.raises(Exception, match="save the mask as given"):
        MEMORY_EFFICIENT.run(mistake(M, "saves the mask expanded to the scores' shape"))


def test_a_gradient_returned_for_the_mask_is_refused():
    """Is zeros returned as the mask's gradient (which autograd drops, so no value shows it)
    refused with its id, where the contract asks None?"""
    assert graded_mistake(M, "zeros returned as the mask's gradient") == \
        f"{M}/mask-gradient-not-none"


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
        caught by the peak of live tensors?"""
        keeps_tiles = FLASH_ANSWER.replace(
            "                m = m_new\n",
            "                m = m_new\n                kept.append(p)\n").replace(
            "        for i in range(0, Lq, block):\n            q = Q[",
            "        kept = []\n        for i in range(0, Lq, block):\n            q = Q[")
        function = load_flash(keeps_tiles)
        with raises_hint("bytes of tensors alive at its peak"):
            flash.check_allocations(function, flash.flash_values((1,), 96, 96, 2, 3, "cpu"), 16)


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
            return Q

    with pytest.raises(Exception, match="class attribute BLOCK = 64"):
        FLASH.run(NoBlock)


def test_bias_gradient_left_at_the_scores_shape_is_graded_with_its_id():
    """Does grading record the stable id of the probed mistake (a bias gradient of the scores'
    shape, not reduced to bias.shape), not only its hint?"""
    assert graded_mistake("AttentionWithBias", "bias gradient left at the scores' shape") == \
        "AttentionWithBias/bias-gradient-not-reduced"


def test_softmax_hints_ask_and_do_not_give_the_vjp():
    """Do the softmax-backward hints name the mistake without printing the closed form of the
    softmax's vector-Jacobian product (issue 38: the answer only after the self-check)?"""
    for hint in (lesson.ELEMENTWISE, lesson.DIAGONAL_ONLY):
        assert "rowsum" not in hint and "dP - " not in hint and "my_softmax_vjp" in hint


@pytest.mark.parametrize("exercise, name, named", [
    ("ScaledDotProductAttention", "row sums unsqueezed as a row",
     "ScaledDotProductAttention/row-sum-laid-out-as-a-row"),
    ("MemoryEfficientAttention", "mask saved as a float copy",
     "MemoryEfficientAttention/saves-mask-as-float")])
def test_probed_hints_carry_their_ids(exercise, name, named):
    """A hint a probe proved is recorded under its own id, not unnamed:check."""
    from tests.autograder.catalogued import graded_mistake
    assert graded_mistake(exercise, name) == named
