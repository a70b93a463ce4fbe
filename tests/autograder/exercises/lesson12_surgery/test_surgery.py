"""Lesson 12 (gradient surgery and debugging): grading GradientReversal, ClipGradientNorm and
SoftThreshold, right and wrong."""

import pytest
import torch
import torch.nn.functional as F

from autograder.exercises import EXERCISES
from autograder.exercises.lesson12_surgery.clip_gradient_norm import (CLIP_SHAPES, clip_grad_output,
                                                                      clipped)
from autograder.exercises.lesson12_surgery.surgery import SHAPES
from autograder.exercises.lesson12_surgery.surgery_checks import SOFT, kink_values, soft_values
from tools.catalogue import lesson12_surgery

pytestmark = pytest.mark.lesson12

NAMES = ["GradientReversal", "ClipGradientNorm", "SoftThreshold"]


def test_every_exercise_has_three_unusual_answers_and_an_nbgrader_mistake():
    """Does the catalogue cover each exercise as the course requires?"""
    for name in NAMES:
        assert sum(u.exercise == name for u in lesson12_surgery.UNUSUAL) >= 3
        assert any(m.exercise == name and m.nbgrader for m in lesson12_surgery.MISTAKES)


def test_stub_fails_with_not_implemented():
    """Does the untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, constant):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError()

    for name in NAMES:
        with pytest.raises(NotImplementedError):
            EXERCISES[name].run(Stub)


def test_edge_shapes_are_graded_and_no_shape_the_contracts_do_not_name():
    """Are 1-D, 3-D and a last dim of 1 graded, and a 0-d x (which no contract here names)
    never?"""
    assert (6,) in SHAPES and (4, 1) in SHAPES and (2, 3, 5) in SHAPES and () not in SHAPES
    assert (6,) in CLIP_SHAPES and (2, 3, 4) in CLIP_SHAPES and (4, 1) in CLIP_SHAPES
    assert () not in CLIP_SHAPES


def test_clip_cases_hold_rows_at_below_above_and_zero():
    """Does the clipping test gradient have rows above, below, exactly at max_norm and zero?"""
    grad = clip_grad_output((8, 3), "cpu", max_norm=1.0)
    norms = torch.linalg.vector_norm(grad, dim=-1)
    assert (norms > 1.0).any() and ((norms < 1.0) & (norms > 0)).any() and (norms == 0).any()
    assert torch.isclose(norms, torch.tensor(1.0, dtype=norms.dtype)).any()
    kept = clipped(grad, 1.0)
    assert torch.equal(kept[norms <= 1.0], grad[norms <= 1.0])
    assert torch.allclose(torch.linalg.vector_norm(kept, dim=-1).max(), torch.tensor(1.0,
                                                                                     dtype=grad.dtype))


def test_soft_threshold_reference_is_softshrink():
    """Is the reference F.softshrink in value, and are its gradients 0 at |x| == lam?"""
    for values in (soft_values((4, 5), "cpu"), kink_values("cpu")):
        x, lam = values["x"], values["lam"]
        assert torch.equal(SOFT.reference(x, lam), F.softshrink(x, lam.item()))
    x = kink_values("cpu")["x"].requires_grad_()
    grad, = torch.autograd.grad(F.softshrink(x, 0.5).sum(), x)
    assert torch.equal(grad, (x.abs() > 0.5).to(x.dtype))


def test_the_engine_sums_an_unsummed_lam_gradient():
    """Is the lesson right that autograd sums a gradient of x's shape for a 0-d lam to lam's
    shape, so that rule 2 of the Function contract may accept it?"""
    unsummed = next(m for m in lesson12_surgery.UNUSUAL
                    if m.name == "lam's gradient not summed").load()
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    lam = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    unsummed.apply(x, lam).sum().backward()
    assert lam.grad.shape == () and torch.isclose(lam.grad, -(torch.sign(x) * (x.abs() > 0.5)).sum())


def test_no_line_of_a_solution_is_on_screen_outside_its_answer_cell():
    """Issue 25: does any line of lesson 12's solutions (comments aside) appear in the learner
    notebook outside the answer cells, in a hint, the broken version or the text?"""
    import re

    import jupytext
    import nbformat

    from grader.lessons import COURSE, LESSONS

    source = jupytext.read(LESSONS / "12_surgery.py", fmt="py:percent")
    solved = {line.split("#")[0].strip()
              for cell in source.cells
              for region in re.findall(r"### BEGIN SOLUTION(.*?)### END SOLUTION", cell.source,
                                       re.DOTALL)
              for line in region.splitlines()}
    solved = {line for line in solved if len(line) > 12}  # "return x, None" is not an answer
    learner = nbformat.read(COURSE / "12_surgery.ipynb", as_version=4)
    shown = [line for cell in learner.cells
             if not cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("answer_")
             for line in solved if line in cell.source]
    assert shown == []


def test_hints_name_the_symptom_not_the_line():
    """Issue 25: does a wrong GradientReversal hear what was measured (its factor), and a wrong
    SoftThreshold what its kink does, never the line or the comparison that fixes it?"""
    import re

    from autograder.errors import GradingError

    answers = {"GradientReversal": r"-\s*\(?alpha\)?\s*\*\s*grad_output",
               "SoftThreshold": r"\|x\| >(?!=) lam|not >="}
    for entry in lesson12_surgery.MISTAKES:
        if entry.exercise not in answers or entry.gpu:  # a gpu mistake passes on the CPU
            continue
        with pytest.raises(GradingError) as info:
            EXERCISES[entry.exercise].run(entry.load())
        assert not re.search(answers[entry.exercise], str(info.value)), entry.name
