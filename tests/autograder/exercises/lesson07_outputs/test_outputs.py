"""Lesson 07 (several outputs, None gradients, in place): what the catalogue harness
(tests/autograder/test_catalogue.py) does not already run for SortWithIndices, SplitHalves,
ReLUInPlace and AbsInPlace."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.exercises.lesson07_outputs.abs_in_place import ABS, both_signs
from autograder.exercises.lesson07_outputs.in_place import quoting_case
from autograder.exercises.lesson07_outputs.leaf_probes import check_leaf_error
from autograder.exercises.lesson07_outputs.outputs import (RELU_SHAPES, SORT, SORT_SHAPES,
                                                           check_sort, check_split, with_zeros)
from autograder.exercises.lesson07_outputs.sort_probes import float32_twins, sorted_as_float32_only
from autograder.grading import grade
from autograder.mistakes import mistake_of
from autograder.probes import AllocationLog, record_ctx_calls, record_grad_outputs
from tests.autograder.catalogued import graded_mistake
from tools import catalogue
from tools.solutions import solution

pytestmark = pytest.mark.lesson07

NAMES = ["SortWithIndices", "SplitHalves", "ReLUInPlace", "AbsInPlace"]
MISTAKES = [m for m in catalogue.mistakes() if m.exercise in NAMES]
UNUSUAL = [u for u in catalogue.unusual() if u.exercise in NAMES]


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [""])[0]


def test_every_exercise_has_three_unusual_answers_and_an_nbgrader_mistake():
    """Does the catalogue cover each exercise as the course requires?"""
    for name in NAMES:
        assert sum(u.exercise == name for u in UNUSUAL) >= 3
        assert any(m.exercise == name and m.nbgrader for m in MISTAKES)


def test_stub_fails_with_not_implemented():
    """Does the untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, *grads):
            raise NotImplementedError()

    for name in NAMES:
        with pytest.raises(NotImplementedError):
            EXERCISES[name].run(Stub)


def test_edge_shapes_are_graded():
    """Are a last dimension of 1 and 2, leading dimensions and 0-d among the graded shapes?"""
    assert {(4, 2), (5, 1), (2, 3, 4), ()} <= set(SORT_SHAPES)
    assert () in RELU_SHAPES and SORT_SHAPES[-1] == () and RELU_SHAPES[-1] == ()


def test_integer_outputs_need_no_mark_to_skip_grad():
    """Is the lesson right that an unmarked int64 output does not require grad, and that
    backward is handed int64 zeros for it?"""
    received = []

    class Unmarked(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = torch.sort(x)
            ctx.save_for_backward(indices)
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            received.append(grad_indices)
            indices, = ctx.saved_tensors
            return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)

    values, indices = Unmarked.apply(torch.randn(4, requires_grad=True))
    assert not indices.requires_grad
    values.sum().backward()
    assert received[0].dtype == torch.int64 and not received[0].any()


def test_probes_record_ctx_calls_and_grad_outputs():
    """Do the probes see set_materialize_grads, mark_non_differentiable and None gradients?"""
    split = solution("SplitHalves")
    with record_ctx_calls() as calls:
        split.apply(torch.randn(2, 4, requires_grad=True))
    assert ("set_materialize_grads", (False,)) in calls
    probe, received = record_grad_outputs(split)
    x = torch.randn(2, 4, requires_grad=True)
    first, _ = probe.apply(x)
    ones = torch.ones(2, 2)
    with AllocationLog() as log:
        torch.autograd.grad(first, x, ones)
    assert received[0][1] is None and log.bytes == x.numel() * x.element_size()


def test_an_error_of_the_learners_own_is_quoted_with_its_case():
    """Does an IndexError a backward raises on a 0-d x (reshape(-1, n)) come back quoted, with
    the case named and the raised:IndexError category kept, and a leaf refused with a
    ValueError of its own say so?"""
    class ReshapesTo2d(solution("SortWithIndices")):
        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            indices, = ctx.saved_tensors
            rows = grad_values.reshape(-1, grad_values.shape[-1])  # no last dim when x is 0-d
            return torch.zeros_like(rows).scatter(1, indices.reshape(rows.shape), rows).reshape(
                grad_values.shape)

    with pytest.raises(GradingError) as raised:
        with quoting_case(SORT, "x of shape ()"):
            check_sort(ReshapesTo2d, torch.tensor(0.5, dtype=torch.float64))
    line = _first_line(raised.value)  # the learner's line that raised, quoted with its number
    assert line.startswith("SortWithIndices.backward raised IndexError: tuple index out of "
                           "range at `rows = grad_values.reshape(-1, grad_values.shape[-1])")
    assert line.endswith(") (with x of shape ())") and "(line " in line
    assert mistake_of(raised.value) == "raised:IndexError"

    class OwnLeafError(solution("AbsInPlace")):
        @staticmethod
        def forward(ctx, x):
            if x.is_leaf and x.requires_grad:
                raise ValueError("x is a leaf")
            return solution("AbsInPlace").forward(ctx, x)

    with pytest.raises(GradingError) as raised:
        check_leaf_error(OwnLeafError, ABS, "cpu")
    assert _first_line(raised.value).startswith(
        "AbsInPlace raised its own error for a leaf that requires grad (ValueError: x is a leaf)")
    assert mistake_of(raised.value) == "raised:ValueError"


def test_split_quick_names_the_case():
    """Does a hint say which outputs were in use when it failed?"""
    wrong = MISTAKES[[m.name for m in MISTAKES].index(
        "zeros built for the missing half")].load()
    with pytest.raises(GradingError, match=r"only the first output used"):
        check_split(wrong, torch.randn(3, 4, dtype=torch.float64))


def test_split_names_a_float32_gradient_before_the_bytes_it_cost():
    """A gradient built in torch.zeros (float32) for float64 x comes back from autograd cast
    to float64, its cast allocating besides it: is the float32 step named, rather than the
    bytes and ops ("zeros, _to_copy") of the allocation check after it?"""
    wrong = MISTAKES[[m.name for m in MISTAKES].index(
        "the gradient built in torch.zeros (float32)")].load()
    with pytest.raises(GradingError) as info:
        check_split(wrong, torch.randn(3, 4, dtype=torch.float64))
    assert "exactly a float32 number" in _first_line(info.value)
    assert "only the first output used" in str(info.value)
    assert "allocated" not in _first_line(info.value)


def test_split_domain_draws_two_shapes_for_two_calls():
    """Do two seeds in a row give x two shapes, so that a shape kept outside ctx meets the
    other call's in the two-calls check?"""
    values = EXERCISES["SplitHalves"].domain.values
    assert {values("cpu", seed=s)["x"].shape for s in (11, 12)} == {(3, 6), (2, 4)}


def test_split_pads_named_only_when_both_pads_are_in_the_ops():
    """Is "two zero-padded halves plus their sum" said only where two constant_pad_nd and an
    add allocated, and the bytes and ops alone otherwise?"""
    padded = next(m for m in MISTAKES if m.name.startswith("each half padded")).load()
    with pytest.raises(GradingError, match="both outputs used") as info:
        check_split(padded, torch.randn(3, 4, dtype=torch.float64))
    assert "two zero-padded halves plus their sum" in _first_line(info.value)
    copied = next(m for m in MISTAKES if m.name.startswith("both halves made contiguous")).load()
    with pytest.raises(GradingError, match="both outputs used") as info:
        check_split(copied, torch.randn(3, 4, dtype=torch.float64))
    assert "pad" not in _first_line(info.value) and "clone, clone, cat" in _first_line(info.value)


def test_values_beside_the_kink_are_in_float64_x_only():
    """Do the float64 inputs of the in-place checks hold +-1e-9 (which x.half() rounds to 0)
    and +-1e-4 beside ordinary values, and float32 inputs none of them, and neither a
    subnormal (a value no model meets)?"""
    x = with_zeros(torch.randn(3, 4, dtype=torch.float64)).reshape(-1)
    assert x[[4, 5, 7, 8]].tolist() == [1e-9, -1e-9, 1e-4, -1e-4]
    assert x.half()[4] == 0 and x.float()[4] != 0 and (x[[1, 2]].abs() > 1e-3).all()
    assert x[::3].eq(0).all() and both_signs(x.reshape(3, 4)).reshape(-1)[4:].equal(x[4:])
    assert not ((x != 0) & (x.abs() < torch.finfo(torch.float64).tiny)).any()
    x32 = with_zeros(torch.full((3, 4), 0.5))
    assert set(x32.reshape(-1).tolist()) == {0.0, 0.5}


@pytest.mark.parametrize("name", ["torch.where(y > 1e-3, ...), a threshold on the output",
                                  "a thresholded sign, (x > 1e-6) - (x < -1e-6)"])
def test_a_threshold_beside_the_kink_is_not_called_float32(name):
    """A mask or sign with a threshold misreads +-1e-9 as x.half() does, but also 1e-7, which
    float16 keeps: is it failed without a narrower-dtype hint?"""
    entry = next(m for m in MISTAKES if m.name == name)
    with pytest.raises(GradingError) as info:
        grade(entry.exercise, entry.load())
    assert "narrower dtype" not in _first_line(info.value)
    assert "float32" not in _first_line(info.value)
    assert "x of shape (3, 4)" in str(info.value)


def test_ties_are_named_only_when_the_probe_proves_them():
    """Does a sort gradient that is wrong with and without ties get the learner's numbers,
    not the ties hint, and one wrong only with ties get the ties hint?"""
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = torch.sort(x, dim=-1)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            return grad_values.clone()

    tied = torch.tensor([[2.0, 0, 2, 1, 0, 2]], dtype=torch.float64)
    with pytest.raises(GradingError) as info:
        check_sort(Identity, tied, ties=True, saved=False)
    assert "ties" not in _first_line(info.value)
    comparing = next(
        m for m in MISTAKES if m.name == "positions found by comparing values").load()
    with pytest.raises(GradingError, match="right on the same shape without ties"):
        check_sort(comparing, tied, ties=True, saved=False)


def test_sin_needs_one_saved_bit():
    """Is the lesson right that sin's output leaves the sign of its derivative open, and does
    one saved bool recover it (the worked example's claim)?"""
    x = torch.tensor([0.5, torch.pi - 0.5], dtype=torch.float64)
    assert torch.allclose(torch.sin(x[0]), torch.sin(x[1]))
    assert torch.cos(x[0]) > 0 > torch.cos(x[1])
    y, positive = torch.sin(x), torch.cos(x) >= 0
    recovered = torch.where(positive, 1.0, -1.0) * torch.sqrt(1 - y * y)
    assert torch.allclose(recovered, torch.cos(x))


def test_float32_probe_needs_an_order_sorted_in_float32_and_not_in_float64():
    """Is the float32 hint kept to an order float32 sorts and float64 does not: not given to
    torch.sort(x)'s own order, nor to a float16 sort, whose ties fall in any order?"""
    x = float32_twins("cpu")
    assert sorted_as_float32_only(x, torch.sort(x.float(), dim=-1).indices)
    assert not sorted_as_float32_only(x, torch.sort(x, dim=-1).indices)
    assert not sorted_as_float32_only(x, torch.sort(x.half(), dim=-1).indices)
    check_sort(solution("SortWithIndices"), x, saved=False)


# Each probed hint of the lesson's four exercises and the stable id grading records for it
# (GradingError.mistake), shown by the catalogued mistake that produces it: rewording a hint
# keeps its id.
IDS = [
    ("SortWithIndices", "indices not marked non-differentiable",
     "SortWithIndices/indices-not-marked"),
    ("SortWithIndices", "a clone of the indices marked", "SortWithIndices/marks-a-copy-of-indices"),
    ("SortWithIndices", "saves the values too", "SortWithIndices/saves-float-tensor"),
    ("SortWithIndices", "saves x instead of the indices", "SortWithIndices/saves-float-tensor"),
    ("SortWithIndices", "gather instead of scatter",
     "SortWithIndices/gathers-instead-of-scattering"),
    ("SortWithIndices", "every row's indices at once", "SortWithIndices/indexes-with-every-row"),
    ("SortWithIndices", "a loop over j, every row's indices",
     "SortWithIndices/indexes-with-every-row"),
    ("SortWithIndices", "positions found by comparing values",
     "SortWithIndices/positions-by-value"),
    ("SortWithIndices", "indices and their inverse both saved",
     "SortWithIndices/saves-more-than-one-permutation"),
    ("SortWithIndices", "indices saved as int16", "SortWithIndices/indices-narrowed"),
    ("SplitHalves", "set_materialize_grads not called", "SplitHalves/gradients-materialised"),
    ("SplitHalves", "zeros built for the missing half", "SplitHalves/zeros-for-missing-half"),
    ("SplitHalves", "zeros when both gradients are None", "SplitHalves/tensor-when-both-none"),
    ("SplitHalves", "views returned", "SplitHalves/returns-views-of-x"),
    ("SplitHalves", "chunks of a clone", "SplitHalves/outputs-not-writable"),
    ("SplitHalves", "each half padded to full width, the two added",
     "SplitHalves/pads-both-halves"),
    ("SplitHalves", "both halves made contiguous before the cat",
     "SplitHalves/allocates-beyond-gradient"),
    ("SplitHalves", "x's shape kept in a module global", "SplitHalves/state-shared-between-calls"),
    ("ReLUInPlace", "mark_dirty not called", "ReLUInPlace/mark-dirty-missing"),
    ("ReLUInPlace", "returns a new tensor", "ReLUInPlace/returns-new-tensor"),
    ("ReLUInPlace", "gradient 1 at x == 0", "ReLUInPlace/gradient-at-zero"),
    ("ReLUInPlace", "mask y >= 0 after the clamp", "ReLUInPlace/mask-always-true"),
    ("ReLUInPlace", "grad_output modified in place", "ReLUInPlace/writes-grad-output"),
    ("AbsInPlace", "mark_dirty not called", "AbsInPlace/mark-dirty-missing"),
    ("AbsInPlace", "a new tensor returned", "AbsInPlace/returns-new-tensor"),
    ("AbsInPlace", "sign read from the returned tensor", "AbsInPlace/sign-read-after-write"),
    ("AbsInPlace", "x saved before the write, its sign taken in backward",
     "AbsInPlace/sign-read-after-write"),
    ("AbsInPlace", "a bool of the sign, True for -1 as for +1", "AbsInPlace/bool-of-nonzero"),
    ("AbsInPlace", "an int8 sign taken after the write", "AbsInPlace/sign-of-output"),
    ("AbsInPlace", "a bool mask x > 0", "AbsInPlace/bool-mask-takes-sides-at-zero"),
    ("AbsInPlace", "a bool mask x < 0, torch.where in backward",
     "AbsInPlace/bool-mask-takes-sides-at-zero"),
    ("AbsInPlace", "an int8 sign that is -1 at 0", "AbsInPlace/sign-nonzero-at-zero"),
    ("AbsInPlace", "a bool x < 0 multiplied in", "AbsInPlace/one-sign-mask"),
    ("AbsInPlace", "the sign saved as uint8", "AbsInPlace/sign-as-uint8"),
    ("AbsInPlace", "the sign saved as a float tensor", "AbsInPlace/saved-dtype-too-wide"),
    ("AbsInPlace", "a float8 copy of x, its sign taken in backward",
     "AbsInPlace/saves-narrow-copy-of-x"),
    ("AbsInPlace", "a bool x < 0 and the returned tensor for the zeros", "AbsInPlace/saves-output"),
    # x.float() reads every value models meet right: its float32 copy of a half x is the cause
    ("ReLUInPlace", "the mask x.float() > 0", "ReLUInPlace/allocates-as-much-as-x"),
    ("AbsInPlace", "the sign of x.float(), as int8", "AbsInPlace/allocates-as-much-as-x"),
    ("AbsInPlace", "the sign of x.half(), as int8", "AbsInPlace/sign-in-narrower-dtype"),
    ("SortWithIndices", "sorts a float32 copy of x, gathers the values from x",
     "SortWithIndices/sorted-in-float32"),
    ("SortWithIndices", "the inverse read by grad_values[..., inverse], right on one row only",
     "SortWithIndices/right-on-one-row-only"),
    ("ReLUInPlace", "masks on a module-global stack, popped in backward",
     "ReLUInPlace/state-outside-ctx"),
]


@pytest.mark.parametrize("name, entry, expected", IDS, ids=[f"{n}: {e}" for n, e, _ in IDS])
def test_a_probed_mistake_is_graded_with_its_id(name, entry, expected):
    """Does grading a catalogued mistake record its stable id, not only its hint?"""
    assert graded_mistake(name, entry) == expected


@pytest.mark.parametrize("name", ["ReLUInPlace", "AbsInPlace"])
def test_missing_mark_dirty_hint_is_true_of_return_x(name):
    """For a forward that writes into x and returns x without the mark (issue 48), does the
    first line say what apply did with it, ask for the ctx call, and never call the grader's
    clone the learner's?"""
    from tests.autograder.catalogued import mistake

    with pytest.raises(GradingError) as caught:
        EXERCISES[name].run(mistake(name, "mark_dirty not called"))
    line = _first_line(caught.value)
    assert "forward returns its input x" in line and "Which ctx call" in line
    assert "Clone" not in line and "returned a view of x" not in line
