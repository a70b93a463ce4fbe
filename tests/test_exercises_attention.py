"""autograder.exercises.attention: lesson 06's ScaledDotProductAttention and the stretch
MemoryEfficientAttention, graded against correct and deliberately wrong submissions."""

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import make_inputs, run_forward
from autograder.exercises import EXERCISES
from autograder.exercises import attention as lesson
from autograder.grading import verdict
from functions import attention as ref

pytestmark = pytest.mark.lesson06

SDPA = EXERCISES["ScaledDotProductAttention"]
MEMORY_EFFICIENT = EXERCISES["MemoryEfficientAttention"]


class TestRegistry:
    def test_exercises_are_registered(self):
        """Are both exercises found by name, for lesson 06?"""
        assert SDPA.lesson == MEMORY_EFFICIENT.lesson == "06_attention"


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
    @pytest.mark.parametrize("exercise, function", [
        (SDPA, ref.ScaledDotProductAttention),
        (SDPA, ref.MemoryEfficientAttention),
        (MEMORY_EFFICIENT, ref.MemoryEfficientAttention),
    ], ids=["sdpa", "memory-efficient-as-sdpa", "memory-efficient"])
    def test_passes(self, exercise, function, device):
        """Does a correct Function pass the self-check and every hidden check on every device?"""
        exercise.quick(function)
        exercise.full(function, device)

    def test_verdicts(self):
        """Does the hidden-test entry point report passes?"""
        assert verdict("ScaledDotProductAttention", ref.ScaledDotProductAttention)[0]
        assert verdict("MemoryEfficientAttention", ref.MemoryEfficientAttention)[0]

    def test_memory_efficient_saves_per_row(self):
        """Does the memory-efficient reference save Q, K, V, the mask, the output and one
        number per query row, by the probe?"""
        values = lesson.attention_values((2,), 16, 16, 4, 4, "cpu", mask="causal")
        forward = run_forward(ref.MemoryEfficientAttention, lesson.MEMORY_EFFICIENT,
                              make_inputs(values))
        roles = sorted(s.role for s in forward.saved)
        assert roles == ["input K", "input Q", "input V", "input mask", "intermediate", "output"]
        lse = next(s for s in forward.saved if s.role == "intermediate")
        assert lse.shape == (2, 16)


MISTAKES = [
    (ref.NoRowSum, "backward leaves out the row-sum term of the softmax: "
                   "dS = P * (dP - rowsum(dP * P)), not P * dP"),
    (ref.DiagonalJacobianOnly, "uses only the diagonal of the softmax's Jacobian, "
                               "P * (1 - P) * dP"),
    (ref.RowSumOverQueries, "sums dP * P over the queries: the row sum runs over the keys"),
    (ref.AutogradSoftmax, "ScaledDotProductAttention.backward calls torch.autograd.grad: "
                          "write the gradient formula by hand"),
    (ref.BuiltinSoftmaxBackward, "uses the built-in op _softmax_backward_data"),
    (ref.ReversedMask, "masks out the positions where mask is True: False means masked out"),
    (ref.ReversedMaskLargeNegative, "masks out the positions where mask is True"),
    (ref.NoMaxSubtraction, "inf or nan for large scores: subtract each row's maximum score"),
    (ref.MissingScaleInGradients, "your gradient for Q is off by a constant factor"),
    (ref.MaskOnCtx, "stores a tensor as ctx.mask: use ctx.save_for_backward"),
    (ref.GradientForScale, "backward returned a gradient for scale, which is not a tensor: "
                           "return None for scale"),
]


def _ids(value):
    return getattr(value, "__name__", "")


class TestMistakes:
    @pytest.mark.parametrize("function, hint", MISTAKES, ids=_ids)
    def test_self_check_names_the_mistake(self, function, hint, raises_hint):
        """Does the visible self-check name each mistake?"""
        with raises_hint(hint):
            SDPA.quick(function)

    @pytest.mark.parametrize("function, hint", MISTAKES, ids=_ids)
    def test_hidden_checks_name_the_mistake(self, function, hint, raises_hint, device):
        """Do the hidden checks name each mistake too, on every device?"""
        with raises_hint(hint):
            SDPA.full(function, device)

    def test_row_sum_found_through_the_generic_failure(self, raises_hint):
        """Is the row-sum mistake named even on a shape where the generic gradient hint
        fires first, and is the generic hint kept in the details?"""
        values = lesson.attention_values((3,), 4, 7, 5, 3, "cpu", mask="causal")
        with raises_hint("leaves out the row-sum term") as info:
            lesson.check_attention(ref.NoRowSum, lesson.SDPA, values)
        assert "your gradient for Q" in str(info.value)

    def test_unrecognised_mistakes_keep_the_generic_hint(self, raises_hint):
        """Is a wrong gradient that matches no named mistake still diagnosed generically?"""

        class DoubledValueGradient(ref.ScaledDotProductAttention):
            @staticmethod
            def backward(ctx, grad_output):
                grads = ref.ScaledDotProductAttention.backward(ctx, grad_output)
                return grads[0], grads[1], 2 * grads[2], None, None

        with raises_hint("your gradient for V is off by a constant factor 2"):
            SDPA.quick(DoubledValueGradient)

    def test_stub_raises_not_implemented(self):
        """Does the notebook stub's NotImplementedError reach the learner unchanged?"""

        class Stub(torch.autograd.Function):
            @staticmethod
            def forward(ctx, Q, K, V, scale, mask=None):
                raise NotImplementedError()

            @staticmethod
            def backward(ctx, grad_output):
                raise NotImplementedError()

        with pytest.raises(NotImplementedError):
            SDPA.quick(Stub)
        with pytest.raises(NotImplementedError):
            MEMORY_EFFICIENT.quick(Stub)


MEMORY_MISTAKES = [
    (ref.ScaledDotProductAttention, "MemoryEfficientAttention saved an intermediate tensor of "
                                    "shape (2, 12, 12)"),
    (ref.SavesProbabilities, "as big as the Lq x Lk probabilities: save one log-sum-exp per "
                             "query row"),
    (ref.MemoryEfficientSavesScores, "as big as the Lq x Lk probabilities"),
    (ref.MemoryEfficientNoRowSum, "MemoryEfficientAttention's backward leaves out the row-sum "
                                  "term of the softmax"),
]


class TestMemoryEfficientMistakes:
    @pytest.mark.parametrize("function, hint", MEMORY_MISTAKES, ids=_ids)
    def test_names_the_mistake(self, function, hint, raises_hint):
        """Does the self-check name each memory mistake?"""
        with raises_hint(hint):
            MEMORY_EFFICIENT.quick(function)

    @pytest.mark.parametrize("function, hint", MEMORY_MISTAKES, ids=_ids)
    def test_hidden_checks_name_the_mistake(self, function, hint, raises_hint):
        """Do the hidden checks name each memory mistake too?"""
        with raises_hint(hint.replace("(2, 12, 12)", "(2, 16, 19)")):
            MEMORY_EFFICIENT.full(function, torch.device("cpu"))

    def test_two_row_statistics_are_allowed(self):
        """Is saving a row maximum and a row sum (two numbers per row) accepted?"""

        class MaxAndSum(ref.MemoryEfficientAttention):
            @staticmethod
            def forward(ctx, Q, K, V, scale, mask=None):
                scores = ref._masked_scores(Q, K, scale, mask)
                row_max = scores.amax(-1, keepdim=True)
                row_sum = (scores - row_max).exp().sum(-1, keepdim=True)
                output = ((scores - row_max).exp() / row_sum) @ V
                ctx.scale = scale
                ctx.save_for_backward(Q, K, V, output, row_max + row_sum.log(), row_sum,
                                      *([mask] if mask is not None else []))
                return output

            @staticmethod
            def backward(ctx, grad_output):
                Q, K, V, output, lse, _, *mask = ctx.saved_tensors
                P = (ref._masked_scores(Q, K, ctx.scale, mask[0] if mask else None) - lse).exp()
                grad_P = grad_output @ V.transpose(-2, -1)
                grad_S = P * (grad_P - (grad_output * output).sum(-1, keepdim=True))
                return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                        P.transpose(-2, -1) @ grad_output, None, None)

        MEMORY_EFFICIENT.quick(MaxAndSum)
