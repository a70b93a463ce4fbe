"""Lesson 08's transfer exercise, squared_norm: what the catalogue harness does not cover (a
stale handle after a re-run, the stub, every device) and the PyTorch behaviour the lesson
states about batching rules.

Every answer defines ``autograd_course::squared_norm`` again: each test defines its answer
right before grading it, and never calls a handle from before a redefinition.
"""

import pytest
import torch

from autograder import grading
from autograder.exercises.lesson08_compile.squared_norm import BATCHED, CASES
from autograder.exercises.lesson08_compile.squared_norm_vmap import BATCH_POSITIONS
from tests.autograder.exercises.battery import run
from tools.solutions import _setup_and_answer_cells

pytestmark = pytest.mark.lesson08


def fresh_solution():
    """The lesson's own squared_norm, defined now (its operator is the current one)."""
    names: dict = {"__name__": "lesson_08_compile"}
    for source in _setup_and_answer_cells("08_compile"):
        exec(compile(source, "lessons/08_compile.py", "exec"), names)  # noqa: S102
    return names["squared_norm"]


def test_solution_passes_on_each_device(device):
    """Does the lesson's squared_norm pass the whole battery on CPU, and on CUDA when present?"""
    run("squared_norm", fresh_solution(), device)


def test_cases_cover_negative_first_and_one_d():
    """Do the graded cases reduce a first, a middle, a last and a negative dim, and a 1-D x,
    and does vmap put x's batch dim elsewhere than first too?"""
    dims = {(len(shape), dim) for shape, dim in CASES}
    assert any(dim < 0 for _, dim in dims) and (3, 1) in dims and (2, 0) in dims
    assert any(rank == 1 for rank, _ in dims)
    assert len(BATCHED) == 4  # vmap over a batch of 3-d samples: six dims to try
    # x's batch dim between a sample's dims and last (negative), besides 0: a rule right only
    # with the batch dim first (the input's batch dim returned as the output's) fails there
    assert 1 in BATCH_POSITIONS and any(position < 0 for position in BATCH_POSITIONS)
    assert BATCHED[0] not in BATCHED[1:]  # a batch dim in the wrong place changes the shape


def test_a_stale_handle_is_named_and_never_called():
    """After the answer cell runs again, is the handle from before it named as stale, without
    being called? (Its registration is destroyed: a call reads freed memory.)"""
    stale = fresh_solution()
    fresh_solution()

    def dangling(*args, **kwargs):
        raise AssertionError("the stale handle was called")

    stale._opoverload = dangling
    passed, message = grading.verdict("squared_norm", stale)
    assert not passed and "squared_norm is an older definition" in message.splitlines()[0]


def test_rerunning_the_answer_cell_grades_the_same():
    """Does a second definition, with its rule, grade as well as the first?"""
    fresh_solution()
    grading.grade("squared_norm", fresh_solution())


def test_stub_is_not_implemented():
    """Does the untouched stub (a plain function raising NotImplementedError) read as not
    implemented yet, not as a mistake?"""
    def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
        raise NotImplementedError()

    passed, message = grading.verdict("squared_norm", squared_norm)
    assert not passed and "not implemented yet" in message


def test_vmap_without_a_rule_is_right_but_loops(capfd):
    """Without a rule, does vmap still give the loop's values (so only the registration can
    tell), with PyTorch's C++ fallback warning on the process's stderr?"""
    @torch.library.custom_op("autograd_course::sum_of_squares_probe", mutates_args=())
    def probe(x: torch.Tensor, dim: int) -> torch.Tensor:
        return (x * x).sum(dim)

    batch = torch.randn(3, 2, 4, dtype=torch.float64)
    got = torch.vmap(probe, in_dims=(0, None))(batch, 1)
    assert torch.allclose(got, torch.stack([(b * b).sum(1) for b in batch]))
    assert "performance drop" in capfd.readouterr().err
