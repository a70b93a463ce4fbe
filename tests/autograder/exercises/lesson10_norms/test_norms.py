"""Lesson 10 (normalisation layers): grading LayerNormFunction, RMSNormFunction and the RMSNorm
module, right and wrong."""

import pytest
import torch
import torch.nn.functional as F

from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.exercises.lesson10_norms.norm_checks import gradient_terms, norm_values
from autograder.exercises.lesson10_norms.norm_offsets import check_shifted_rows
from autograder.exercises.lesson10_norms.norms import LAYER_NORM, SHAPES
from autograder.grading import grade, self_check
from tests.autograder.catalogued import graded_mistake, mistake, unusual
from tools.catalogue import lesson10_norms
from tools.solutions import solution

pytestmark = pytest.mark.lesson10

NAMES = ["LayerNormFunction", "RMSNormFunction", "RMSNorm", "GroupNormFunction"]


def test_every_exercise_has_three_unusual_answers_and_an_nbgrader_mistake():
    """Does the catalogue cover each exercise as the course requires?"""
    for name in NAMES:
        assert sum(u.exercise == name for u in lesson10_norms.UNUSUAL) >= 3
        assert any(m.exercise == name and m.nbgrader for m in lesson10_norms.MISTAKES)


def test_a_wrong_function_leaves_the_module_exercise_alone():
    """Does each RMSNormFunction mistake marked for nbgrader keep the lesson's RMSNorm module
    (which calls whatever RMSNormFunction the notebook defines) passing?"""
    for entry in lesson10_norms.MISTAKES:
        if entry.exercise == "RMSNormFunction" and entry.nbgrader:
            wrong = entry.load()
            module = solution("RMSNorm")
            module.forward.__globals__["RMSNormFunction"] = wrong
            try:
                grade("RMSNorm", module)
            finally:
                module.forward.__globals__["RMSNormFunction"] = solution("RMSNormFunction")


def test_stub_fails_with_not_implemented():
    """Does the untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            raise NotImplementedError()

    class StubModule(torch.nn.Module):
        def __init__(self, dim, eps=1e-6):
            raise NotImplementedError()

    for name, stub in [("LayerNormFunction", Stub), ("RMSNormFunction", Stub),
                       ("RMSNorm", StubModule)]:
        with pytest.raises(NotImplementedError):
            EXERCISES[name].run(stub)


def test_edge_shapes_are_graded():
    """Are a 1-D x, size-1 dims and D = 1 among the graded shapes?"""
    assert {((), 5), ((1,), 4), ((3,), 1), ((1, 1), 1), ((2, 1, 3), 5)} <= set(SHAPES)


def test_the_terms_add_up_to_autograd():
    """Are the direct, mean and projection terms the graders name really the gradient?"""
    values = norm_values((3,), 6, "cpu", bias=False)
    x = values["x"].clone().requires_grad_()
    grad_output = torch.randn(3, 6, dtype=torch.float64)
    truth, = torch.autograd.grad(F.layer_norm(x, (6,), values["weight"], None, 1e-5), x,
                                 grad_output)
    terms = gradient_terms(values["x"], values["weight"], grad_output, 1e-5, centred=True)
    assert torch.allclose(sum(terms.values()), truth)


@pytest.mark.parametrize("dtype, shift, wrong", [
    (torch.float32, 1e4, "E[x^2] - E[x]^2 variance"),
    (torch.float64, 1e8, "E[x^2] - E[x]^2 variance accumulated in float64")])
def test_the_one_pass_variance_really_fails_at_a_large_offset(dtype, shift, wrong):
    """Is each offset one that E[x^2] - E[x]^2 cannot pass in that dtype (even accumulated in
    float64, for float32 rows), and the lesson's two passes can?"""
    values = norm_values((3,), 16, "cpu", dtype=dtype, shift=shift, seed=11)
    check_shifted_rows(solution("LayerNormFunction"), LAYER_NORM, values, shift)
    with pytest.raises(GradingError, match="E\\[x\\^2\\] - E\\[x\\]\\^2 cancels"):
        check_shifted_rows(mistake("LayerNormFunction", wrong), LAYER_NORM, values, shift)


def test_an_unsummed_weight_gradient_is_accepted_as_rule_2_says():
    """Does the engine sum a (rows, D) weight gradient by itself, and does grading accept it,
    as rule 2 of the Function contract says (a shape the weight broadcasts to)?"""
    answer = unusual("RMSNormFunction", "weight gradient not summed")
    x = torch.randn(3, 4, requires_grad=True)
    weight = torch.randn(4, requires_grad=True)
    answer.apply(x, weight, 1e-6).sum().backward()
    assert weight.grad.shape == (4,)
    self_check("RMSNormFunction", answer)


def test_a_broken_function_is_named_by_the_module_exercise():
    """Is a module that fails only through its RMSNormFunction told so on its first line?"""
    from autograder.grading import classified_verdict

    verdict = classified_verdict("RMSNorm", mistake("RMSNorm", "RMSNormFunction without its "
                                                               "projection term"))
    assert verdict.mistake == "RMSNorm/fails-through-function"
    assert verdict.message.startswith("RMSNorm fails through the RMSNormFunction it calls")


def test_sum_over_no_dims_sums_every_dim():
    """Is the lesson right that .sum(dim=()) reduces everything?"""
    assert torch.ones(2, 3).sum(dim=()).shape == ()


def test_does_the_group_norm_reference_agree_with_f_group_norm_where_its_backward_runs():
    """Is the composed formula the battery grades against F.group_norm's values and gradients,
    and does F.group_norm's own CPU backward still raise where the grader's docstring says it
    does?"""
    from autograder.exercises.lesson10_norms.norm_transfer import group_norm
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 6, 3, dtype=torch.float64, generator=generator, requires_grad=True)
    weight = torch.randn(6, dtype=torch.float64, generator=generator, requires_grad=True)
    bias = torch.randn(6, dtype=torch.float64, generator=generator, requires_grad=True)
    ours = group_norm(x, 3, weight, bias, 1e-5)
    theirs = F.group_norm(x, 3, weight, bias, 1e-5)
    assert torch.allclose(ours, theirs)
    grads = [torch.autograd.grad(y.sum(), (x, weight, bias)) for y in (ours, theirs)]
    assert all(torch.allclose(a, b) for a, b in zip(*grads))
    with pytest.raises(RuntimeError, match="does not have a device"):
        F.group_norm(x, 3, None, bias, 1e-5).sum().backward()


def test_is_the_lessons_layer_norm_as_fast_as_the_lesson_says():
    """Does the solution allocate one full-size tensor in forward and one in backward (the
    lesson's cost argument), with no torch.var_mean (slow on the CPU)?"""
    from pathlib import Path
    lesson = (Path(__file__).parents[4] / "lessons" / "10_norms.py").read_text()
    start = lesson.index('"grade_id": "answer_LayerNormFunction"')
    source = lesson[start:lesson.index("# %%", start)]
    assert "var_mean" not in source
    assert "out=buffer" in source and source.count(".mul_(") >= 3  # steps written in place


@pytest.mark.parametrize("centred", [True, False], ids=["LayerNorm", "RMSNorm"])
def test_gradient_terms_stay_on_the_input_device(centred):
    """Are all three terms on x's device, RMSNorm's zero mean term too? (A CPU zero rejected every
    RMSNormFunction on CUDA; meta tensors stand in for a GPU here.)"""
    x, grad_output = torch.randn(3, 4, device="meta"), torch.randn(3, 4, device="meta")
    terms = gradient_terms(x, torch.ones(4, device="meta"), grad_output, 1e-5, centred)
    assert {term.device.type for term in terms.values()} == {"meta"}
    assert sum(terms.values()).shape == (3, 4)


@pytest.mark.parametrize("exercise, name, expected", [
    ("LayerNormFunction", "no projection term", "LayerNormFunction/misses-projection-term"),
    ("LayerNormFunction", "no mean term", "LayerNormFunction/misses-mean-term"),
    ("LayerNormFunction", "mean and rstd treated as constants",
     "LayerNormFunction/statistics-held-constant"),
    ("LayerNormFunction", "grad_x ignores the weight", "LayerNormFunction/ignores-weight"),
    ("LayerNormFunction", "weight multiplied in after the row means",
     "LayerNormFunction/weight-after-row-means"),
    ("LayerNormFunction", "unbiased variance (correction=1)",
     "LayerNormFunction/unbiased-variance"),
    ("RMSNormFunction", "no projection term", "RMSNormFunction/misses-projection-term"),
    ("RMSNormFunction", "LayerNorm's mean term as well", "RMSNormFunction/subtracts-mean-term"),
    ("RMSNormFunction", "grad_x ignores the weight", "RMSNormFunction/ignores-weight"),
    ("GroupNormFunction", "no projection term", "GroupNormFunction/misses-projection-term"),
    ("GroupNormFunction", "no mean term", "GroupNormFunction/misses-mean-term"),
    ("GroupNormFunction", "mean and rstd treated as constants",
     "GroupNormFunction/statistics-held-constant"),
    ("GroupNormFunction", "statistics per channel (instance norm)",
     "GroupNormFunction/instance-norm"),
    ("GroupNormFunction", "grad_x ignores the weight", "GroupNormFunction/ignores-weight"),
    ("GroupNormFunction", "weight multiplied in after the group means",
     "GroupNormFunction/weight-after-group-means"),
])
def test_a_proven_mistake_of_the_derivation_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves (a term of grad_x left out, the weight forgotten or
    applied after the means, the wrong variance or groups) carry a stable id, so that a class's
    failures group by it?"""
    assert graded_mistake(exercise, name) == expected


def test_eps_outside_the_root_is_named_for_rms_norm_too():
    """Is an RMSNorm forward with rstd = 1 / (sqrt(mean(x^2)) + eps) told where its eps went,
    not that a float32 step lost digits (what its small error first looked like)?"""
    from autograder.exercises.lesson10_norms.norms import RMS_NORM, check_eps_used

    class EpsOutside(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, eps):
            y = x / (x.square().mean(-1, keepdim=True).sqrt() + eps)
            return y * weight if weight is not None else y

    with pytest.raises(GradingError, match="adds eps outside the square root"):
        check_eps_used(EpsOutside, RMS_NORM, "cpu")
