"""Lesson 09's transfer exercise, CumMax: what the catalogue harness does not cover, and the
PyTorch behaviour the lesson states (torch.cummax's ties)."""

import pytest
import torch

from autograder.exercises.lesson09_patterns.cummax import CASES, TIES, _first_tie_gradient, _targets
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run
from tools.solutions import solution

pytestmark = pytest.mark.lesson09


def test_cummax_takes_the_latest_of_equal_values():
    """Does torch.cummax report the latest of tied maxima, as the lesson's prediction shows?"""
    _, indices = torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 0)
    assert indices.tolist() == [0, 1, 2, 2, 4]


def test_ties_rows_hold_ties_and_shared_entries():
    """Does every row of TIES hold a tie and an entry copied by at least two outputs?"""
    for row in TIES:
        values, indices = torch.cummax(row, 0)
        assert (row.unsqueeze(0) == values.unsqueeze(1)).sum(1).gt(1).any()
        assert indices.bincount().max() >= 2
    assert (_targets(TIES) >= 2).any(dim=1).all()


def test_first_tie_gradient_is_torchs_when_nothing_ties():
    """Without ties, is the earliest-tie probe the true gradient (so it names only ties)?"""
    x = torch.randperm(12, generator=torch.Generator().manual_seed(0)).double().reshape(2, 6)
    x.requires_grad_()
    g = torch.randn(2, 6, dtype=torch.float64)
    truth, = torch.autograd.grad(torch.cummax(x, 1).values, x, g)
    assert torch.equal(_first_tie_gradient(x.detach(), g), truth)


def test_cases_cover_first_negative_and_one_d_dims():
    """Do the graded cases scan a first, a last, a negative dim and a 1-D x, never a 0-d one?"""
    assert any(dim == 0 and len(shape) > 1 for shape, dim in CASES)
    assert any(dim < 0 for _, dim in CASES) and any(len(shape) == 1 for shape, _ in CASES)
    assert all(shape != () for shape, _ in CASES)


def test_solution_passes_on_each_device(device):
    """Does the lesson's CumMax pass the whole battery on CPU, and on CUDA when present?"""
    run("CumMax", solution("CumMax"), device)


def test_stub_fails_with_not_implemented():
    """Does the untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, dim):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        run("CumMax", Stub)


@pytest.mark.parametrize("name, expected", [
    ("ties to the earliest of equal values (strict >)", "CumMax/ties-to-earliest"),
    ("each output's gradient to every earlier entry equal to its running maximum (a mask of ties)",
     "CumMax/gradient-to-every-tie"),
    ("grad_output gathered with the indices (the forward's direction)",
     "CumMax/gathers-with-indices"),
    ("the gradient of each output to its own position", "CumMax/returns-grad-output"),
    ("an assignment where outputs share an entry (scatter without add)",
     "CumMax/loses-shared-gradients"),
    ("each new maximum keeps only its own output's gradient (no sum over its run)",
     "CumMax/loses-shared-gradients"),
    ("saves x and recomputes the indices in backward", "CumMax/saves-float-tensor"),
    ("the indices saved as int32", "CumMax/narrow-indices"),
    ("scatter_add along the last dim, whatever dim is", "CumMax/last-dim-only"),
    ("dim kept in a module global", "CumMax/state-outside-ctx"),
    ("a negative dim turned into -1 in backward", "CumMax/negative-dim-changed"),
])
def test_a_proven_mistake_is_graded_with_its_id(name, expected):
    """Does each mistake a probe proves (the tie convention, the direction of the indices, a
    write where outputs share an entry, what is saved) carry a stable id?"""
    assert graded_mistake("CumMax", name) == expected


def test_indices_copied_after_a_movedim_are_named_along_dim_0():
    """Is a copy of torch.cummax's indices (cummax on x.movedim(dim, -1), the indices moved back
    with .contiguous()) named, though along the last dim .contiguous() copies nothing?"""
    from autograder.exercises.lesson09_patterns.cummax import check_saves_cummax_indices
    copy = mistake("CumMax",
                   "cummax after movedim, the indices moved back with .contiguous() (a copy)")
    with pytest.raises(AssertionError, match=r"dim=0\)"):
        check_saves_cummax_indices(copy, "cpu")
    check_saves_cummax_indices(solution("CumMax"), "cpu")
