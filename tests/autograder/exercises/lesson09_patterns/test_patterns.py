"""Lesson 09 (gradient patterns): what the catalogue harness (tests/autograder/test_catalogue.py)
does not cover for BroadcastMul, ProdOverDim, Cumsum, IndexSelect and Normalize, and the
PyTorch behaviour the lesson states."""

import re
import pytest
import torch
import torch.nn.functional as F

from autograder.checks import make_inputs, run_forward
from autograder.errors import GradingError
from autograder.exercises.lesson09_patterns.pattern_cases import (check_returned_shapes,
                                                                  graded_case, returned_shape_hint)
from autograder.exercises.lesson09_patterns.patterns import (BROADCAST_MUL, BROADCAST_SHAPES,
                                                             DIM_CASES, PROD, ZERO_SLICES)
from autograder.exercises.lesson09_patterns.index_select import (SELECT, SELECT_CASES,
                                                                 check_saves_index_only)
from autograder.exercises.lesson09_patterns.normalize import NORMALIZE_SHAPES
from autograder.exercises.lesson09_patterns.selections import EXERCISES
from autograder.probes import record_returned_gradients
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run
from tools.catalogue import lesson09_patterns
from tools.solutions import solution

pytestmark = pytest.mark.lesson09

NAMES = ["BroadcastMul", "ProdOverDim", "Cumsum", "IndexSelect", "Normalize"]


def test_edge_cases_are_graded():
    """Are both broadcast directions, size-1 dims, missing leading dims and 0-d (BroadcastMul's
    contract names them), negative dims, a first dim, repeated and empty indices graded, and is
    no 0-d input graded where the contract names none (a dim argument, Normalize's rows)?"""
    pairs = set(BROADCAST_SHAPES)
    assert {((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((4,), (3, 4)), ((), (2, 3)),
            ((2, 3), ()), ((), ())} <= pairs
    assert any(dim < 0 for _, dim in DIM_CASES)
    assert any(dim == 0 and len(shape) == 3 for shape, dim in DIM_CASES)
    assert all(shape != () for shape, _ in DIM_CASES) and () not in NORMALIZE_SHAPES
    indices = [rows for _, rows in SELECT_CASES]
    assert [] in indices and any(len(set(r)) < len(r) for r in indices)
    assert [(ZERO_SLICES[r] == 0).sum().item() for r in range(4)] == [0, 1, 2, 3]


def test_every_exercise_has_an_nbgrader_mistake():
    """Is each exercise handed in wrong through the real nbgrader at least once?"""
    for name in NAMES:
        assert any(m.exercise == name and m.nbgrader for m in lesson09_patterns.MISTAKES)


def test_stub_fails_with_not_implemented():
    """Does the untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, *grads):
            raise NotImplementedError()

    for name in NAMES:
        with pytest.raises(NotImplementedError):
            run(name, Stub)


@pytest.mark.parametrize("name", NAMES)
def test_full_checks_pass_on_each_device(name, device):
    """Does the lesson's solution pass the full battery on CPU, and on CUDA when present?"""
    run(name, solution(name), device)


class TestEngineReduction:
    """The lesson's table of what the engine does with a gradient of another shape."""

    @staticmethod
    def _returning(shape):
        class Returns(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad_output):
                return torch.ones(shape, dtype=grad_output.dtype)

        return Returns

    @pytest.mark.parametrize("input_shape, returned, summed", [
        ((4,), (3, 4), 3), ((3, 1), (3, 4), 4), ((3, 1), (2, 3, 4), 8), ((), (3,), 3),
        ((4,), (1, 4), 1)])
    def test_broadcastable_gradients_are_summed(self, input_shape, returned, summed):
        """Does the engine sum a gradient the input broadcasts to, keeping size-1 dims?"""
        x = torch.zeros(input_shape, requires_grad=True)
        self._returning(returned).apply(x).sum().backward()
        assert x.grad.shape == input_shape and (x.grad == summed).all()

    @pytest.mark.parametrize("input_shape, returned", [
        ((3, 1), (3,)), ((3, 4), (4,)), ((3, 4), (12,)), ((2, 4), (3, 4))])
    def test_other_shapes_are_refused(self, input_shape, returned):
        """Is a gradient the input does not broadcast to an error, even with equal numel?"""
        x = torch.zeros(input_shape, requires_grad=True)
        with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
            self._returning(returned).apply(x).sum().backward()


def test_lesson_claims_about_expand_assignment_and_normalize():
    """expand is a stride-0 view; a repeated index keeps one write; F.normalize takes the
    projection at a norm exactly equal to eps; prod, cumsum and normalize accept 0-d."""
    g = torch.tensor([1.0, 2.0, 3.0])
    big = g.unsqueeze(1).expand(3, 1000)
    assert big.stride() == (1, 0) and big.data_ptr() == g.data_ptr()
    assert big.untyped_storage().nbytes() == 12
    z = torch.zeros(5)
    z[torch.tensor([4, 0, 4])] = torch.tensor([1.0, 2.0, 3.0])
    assert z[4] in (1.0, 3.0)
    x = torch.tensor([[0.6, 0.8]], dtype=torch.float64, requires_grad=True)
    grad, = torch.autograd.grad(F.normalize(x, dim=-1, eps=1.0), x,
                                torch.tensor([[1.0, 0.0]], dtype=torch.float64))
    assert torch.allclose(grad, torch.tensor([[0.64, -0.48]], dtype=torch.float64))
    scalar = torch.tensor(2.0)
    assert torch.prod(scalar, 0) == torch.cumsum(scalar, 0) == scalar


class TestReturnedShapes:
    """What backward returned is checked before the engine reduces it."""

    def test_hints(self):
        """Does each shape the input does not broadcast to get the hint that names its likely
        cause?"""
        dropped = returned_shape_hint(BROADCAST_MUL, "a", (3,), (3, 1))
        assert "a dim of size 1 that a has was dropped (a sum without keepdim=True, a squeeze, "\
            "a reshape)" in dropped
        assert "was dropped" in returned_shape_hint(BROADCAST_MUL, "a", (2, 3), (2, 1, 3))
        for flattened in [((6,), (2, 3)), ((1, 3), (3, 1, 1))]:  # no dim of size 1 left out
            assert "was dropped" not in returned_shape_hint(BROADCAST_MUL, "a", *flattened)
        assert "a transpose?" in returned_shape_hint(BROADCAST_MUL, "a", (4, 3), (3, 4))

    def test_shapes_the_input_broadcasts_to_are_accepted(self):
        """A grad_b of shape (1, 1, 4) or (3, 4) for b of shape (4,) is summed down by the engine
        (Function contract, rule 2): accepted. (4, 1), which b does not broadcast to, is refused,
        and told to drop the extra dim of size 1."""
        b = torch.randn(4, dtype=torch.float64)
        for shape in [(1, 1, 4), (3, 4), (2, 1, 4)]:
            check_returned_shapes(BROADCAST_MUL, [(None, torch.zeros(shape, dtype=b.dtype))],
                                  {"a": b, "b": b})
        refused = returned_shape_hint(BROADCAST_MUL, "b", (4, 1), (4,))
        assert "does not broadcast to" in refused and "extra dims of size 1" in refused
        with pytest.raises(GradingError):
            check_returned_shapes(BROADCAST_MUL, [(None, torch.zeros(4, 1, dtype=b.dtype))],
                                  {"a": b, "b": b})

    def test_a_narrower_dtype_is_named_here_a_wider_one_generically(self):
        """float32 returned for float64 lost precision before the engine converted it (the
        values fail first: named here, with the cause); float64 returned for float32 lost none
        and is left to rule 2's generic check (autograder.returned_dtypes, tested there)."""
        for returned_dtype, input_dtype in [(torch.float32, torch.float64),
                                            (torch.bfloat16, torch.float16)]:
            x = torch.randn(3, dtype=input_dtype)
            with pytest.raises(GradingError) as failure:
                check_returned_shapes(SELECT, [(x.to(returned_dtype), None)],
                                      {"x": x, "index": torch.tensor([0])})
            assert "keep the input's dtype" in failure.value.hint
            assert "after the precision was lost" in failure.value.hint, returned_dtype
        x = torch.randn(3, dtype=torch.float32)
        check_returned_shapes(SELECT, [(x.double(), None)], {"x": x, "index": torch.tensor([0])})

    def test_a_sum_left_to_the_engine_is_accepted_by_rule_2_not_by_broadcast_mul(self):
        """The engine sums a gradient left in the output's shape with the very sum sum_to_size
        takes (rule 2): are its values right, bit for bit, its shape accepted where rule 2
        decides, and refused, naming the exercise's contract, where BroadcastMul's own contract
        asks for each input's shape?"""
        probe, returned = record_returned_gradients(
            mistake("BroadcastMul", "sums leading dims only (size-1 dims unsummed)"))
        a = torch.randn(3, 1, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, dtype=torch.float64, requires_grad=True)
        g = torch.randn(3, 4, dtype=torch.float64)
        probe.apply(a, b).backward(g)
        assert torch.equal(a.grad, (g * b.detach()).sum_to_size(3, 1))
        assert tuple(returned[0][0].shape) == (3, 4)
        check_returned_shapes(BROADCAST_MUL, returned, {"a": a, "b": b})
        with pytest.raises(GradingError) as failure:
            check_returned_shapes(BROADCAST_MUL, returned, {"a": a, "b": b}, exact=True)
        assert "contract asks for each gradient in its input's own shape" in failure.value.hint
        assert failure.value.mistake == "BroadcastMul/gradient-left-to-engine"

    def test_a_case_names_the_engine_refusal_as_keepdim(self, raises_hint):
        """When the engine refuses the shape, is the hint still the keepdim one?"""
        values = {"a": torch.randn(3, 1, dtype=torch.float64),
                  "b": torch.randn(1, 4, dtype=torch.float64)}
        with raises_hint("keepdim"):
            graded_case(mistake("BroadcastMul", "sum without keepdim"), BROADCAST_MUL, values)


def test_index_select_saves_exactly_index():
    """Are the saved tensors index itself, its bytes only, with the shape on ctx?"""
    inputs = make_inputs({"x": torch.randn(5, 3, dtype=torch.float64),
                          "index": torch.tensor([4, 0, 4])})
    forward = run_forward(solution("IndexSelect"), SELECT, inputs)
    assert [s.role for s in forward.saved] == ["input index"]
    assert forward.saved_bytes == 3 * 8
    check_saves_index_only(forward, inputs["index"])


def test_prod_zero_cases_without_division():
    """Is the lesson's ProdOverDim finite and exact on every zero case, where prod / x is not?"""
    x = ZERO_SLICES.double().requires_grad_()
    grad, = torch.autograd.grad(solution("ProdOverDim").apply(x, 1), x, torch.ones(4).double())
    truth, = torch.autograd.grad(torch.prod(x, 1), x, torch.ones(4).double())
    assert torch.equal(grad, truth)
    assert not torch.isfinite(torch.prod(x, 1, keepdim=True) / x).all()
    assert PROD.name == "ProdOverDim"


@pytest.mark.parametrize("exercise, name, expected", [
    ("BroadcastMul", "the other input recovered as y / a (nan where a holds 0)",
     "BroadcastMul/divides-by-input"),
    ("BroadcastMul", "leading dims summed with t.sum(()) when there are none",
     "BroadcastMul/sum-of-no-dims-sums-all"),
    ("BroadcastMul", "size-1 dims summed left-aligned, before the leading dims",
     "BroadcastMul/size-1-dims-left-aligned"),
    ("ProdOverDim", "prod / x divides by zero", "ProdOverDim/divides-by-zero"),
    ("ProdOverDim", "the others through logs, exp(sum log|x| - log|x|): a division in log space",
     "ProdOverDim/divides-by-zero"),
    ("ProdOverDim", "grad_output not unsqueezed", "ProdOverDim/grad-output-not-unsqueezed"),
    ("ProdOverDim", "exclusive products written for the last dim only",
     "ProdOverDim/last-dim-only"),
    ("Cumsum", "forward scan in backward", "Cumsum/scans-forward"),
    ("Cumsum", "saves x", "Cumsum/saves-tensor"),
    ("Cumsum", "total minus the inclusive running sum (off by one)",
     "Cumsum/total-minus-inclusive"),
    ("Cumsum", "reversed running sum less g_i (exclusive)", "Cumsum/total-minus-inclusive"),
    ("Cumsum", "flips and scans the last dim, whatever dim is", "Cumsum/last-dim-only"),
    ("IndexSelect", "grad[index] += grad_output (+= on an indexed tensor is a write)",
     "IndexSelect/writes-repeated-rows"),
    ("IndexSelect", "grad[index] = grad_output", "IndexSelect/writes-repeated-rows"),
    ("IndexSelect", "index_copy (a write)", "IndexSelect/writes-repeated-rows"),
    ("IndexSelect", "index_reduce with 'mean': repeats averaged, not added",
     "IndexSelect/repeats-not-summed"),
    ("IndexSelect", "saves x", "IndexSelect/saves-tensor"),
    ("IndexSelect", "x's shape kept in a module global", "IndexSelect/state-outside-ctx"),
    ("ProdOverDim", "dim kept in a module global", "ProdOverDim/state-shared-between-calls"),
    ("Cumsum", "dim kept in a module global", "Cumsum/state-shared-between-calls"),
    ("Normalize", "missing projection term", "Normalize/missing-projection"),
    ("Normalize", "projection on rows below eps too", "Normalize/wrong-below-eps"),
    ("Normalize", "above eps told from the divisor with divisor >= eps (always true)",
     "Normalize/wrong-below-eps"),
    ("Normalize", "saves x", "Normalize/saves-input"),
    ("Normalize", "radial sum without keepdim", "Normalize/row-quantity-lost-dim"),
    ("Normalize", "builds each row's Jacobian", "Normalize/builds-jacobian"),
    ("ProdOverDim", "zeros overwritten with ones in the saved x (x[x == 0] = 1)",
     "ProdOverDim/writes-input"),
    ("CumMax", "the saved x zeroed and used as the scatter-add buffer", "CumMax/writes-input"),
    ("Normalize", "above eps told from the length of y (length > 0.99)",
     "Normalize/boundary-below-eps"),
    ("Normalize", "above eps told from the length of y (length > 0.5)",
     "Normalize/boundary-below-eps"),
    ("Normalize", "above eps told by the norm with a margin below eps (n > 0.98 eps)",
     "Normalize/boundary-below-eps"),
    ("Normalize", "both cases mixed by multiplying with a mask (nan from 0 x inf on a zero row)",
     "Normalize/nan-on-zero-row"),
    # learner trial 80 (issue 68): what the other rows below eps prove, not a guessed mask
    ("Normalize", "every row's gradient computed as if unclamped (x / norm's)",
     "Normalize/unclamped-below-eps"),
    ("Normalize", "projection masked, divided by the norm unclamped",
     "Normalize/divides-by-norm-below-eps"),
    ("Normalize", "norm for the test computed on x.float()",
     "Normalize/row-number-in-another-dtype"),
    ("Normalize", "above eps told from the divisor with isclose "
     "(~torch.isclose(divisor, torch.full_like(divisor, ctx.eps)))",
     "Normalize/near-above-as-below"),
    ("Cumsum", "total less an exclusive scan shifted with roll (wraps round)",
     "Cumsum/wrong-first-entry"),
    ("CumMax", "running maximum found on a float32 copy", "CumMax/indices-from-rounded-copy"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves (a division by an input, grad_output along the wrong
    dim, a scan's direction, a write where repeats add, the projection term, what is saved)
    carry a stable id, so that a class's failures group by it?"""
    assert graded_mistake(exercise, name) == expected


def test_a_constant_that_changes_the_output_shape_is_compared_safely():
    """ProdOverDim's dim=-2 gives an output of shape (4,) where the default dim=1 gives (3,):
    does the check that forward uses its constant take the shapes apart instead of raising
    (it once called allclose on the two), and does the solution pass there?"""
    from autograder.comparison import fresh_leaves
    from autograder.exercises.lesson09_patterns.patterns import EXERCISES as PATTERNS
    from autograder.properties import _check_constant_used

    domain = next(e for e in PATTERNS if e.name == "ProdOverDim").domain
    inputs = fresh_leaves(domain.values("cpu", dim=-2))
    assert torch.prod(inputs["x"], -2).shape != torch.prod(inputs["x"], 1).shape
    _check_constant_used(domain, solution("ProdOverDim"), inputs, "dim", 1)


def test_left_aligned_shape_is_the_one_a_left_to_right_sum_gives():
    """Is the shape predicted for size-1 dims found from the left the one such a sum returns,
    and the right shape wherever the two alignments agree?"""
    from autograder.exercises.lesson09_patterns.broadcast_sums import _left_aligned

    assert _left_aligned((2, 3, 4), (3, 1)) == (1, 4)
    assert _left_aligned((2, 3, 4), (4,)) == (4,)  # no size-1 dim: only the leading drop
    assert _left_aligned((3, 4), (3, 1)) == (3, 1)  # same number of dims: both alignments agree


def test_a_wrong_slice_of_prod_asks_and_shows_short_numbers():
    """Issue 48 (learner 57): ProdOverDim's one-zero failure printed 17-digit floats and asked
    nothing. Does its first line name the slice and end in a question, and the details show
    x's slice, grad_output there (said to be random) and the values to four digits?"""
    from autograder.grading import verdict

    passed, message = verdict("ProdOverDim", mistake(
        "ProdOverDim", "y/x with nan_to_num (one zero gets 0)"))
    first, *rest = message.splitlines()
    assert not passed and "wrong on a slice with exactly one zero" in first
    assert first.split(" (with ")[0].endswith("?"), first
    details = "\n".join(rest)
    assert "x's slice [" in details and "(random)" in details and "expected [" in details
    assert not re.search(r"\d\.\d{6,}", message), message


def test_a_backward_unclamped_below_eps_is_told_what_was_seen_not_a_mask():
    """Issue 68: a backward that computes every row as if the norm were not clamped at eps
    read 'does backward ... multiply it by a mask of 0?', though it has no mask: does the line
    say the rows below eps are wrong and what the other rows below eps prove, and nothing of a
    mask?"""
    from autograder.grading import classified_verdict
    from tests.autograder.catalogued import mistake

    verdict = classified_verdict("Normalize", mistake(
        "Normalize", "every row's gradient computed as if unclamped (x / norm's)"))
    first = verdict.message.splitlines()[0]
    assert first.startswith("Normalize's gradient is wrong on rows whose norm is below eps")
    assert "derivative of x / norm" in first and "mask" not in first
