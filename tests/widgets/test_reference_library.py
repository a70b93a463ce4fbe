"""Does every view cope with the course's whole library of right and wrong answers (each
lesson's own solution, its untouched stub, and every catalogued unusual answer and mistake of
tools/catalogue), and flag the wrong ones a learner would bring to it? The sweep runs the views'
plain functions; the views themselves show any exception as an error box."""

import functools
import types

import pytest
import torch

from autograder.nesting import EndlessBackward
from tests.autograder.catalogued import mistake
from tools import catalogue
from tools.solutions import solution, stub
from widgets.attention import TOLERANCE, attention_explorer, attention_maps, build_mask
from widgets.checkpointing import measure_all
from widgets.gradcheck_explorer import compare_jacobians
from widgets.inspector import inspect_forward
from widgets.ste import ste_curves, ste_explorer, window_text


def _library(*exercises: str) -> dict:
    """``"Exercise: what it is"`` -> a loader, for each exercise's solution and stub and every
    catalogue entry of it (loaded only when a test runs)."""
    library = {}
    for name in exercises:
        library[f"{name}: solution"] = functools.partial(solution, name)
        library[f"{name}: stub"] = functools.partial(stub, name)
    for entry in [*catalogue.unusual(), *catalogue.mistakes()]:
        if entry.exercise in exercises:
            library[f"{entry.exercise}: {entry.name}"] = entry.load
    return library


def _unusual(*exercises: str) -> set:
    return {f"{e.exercise}: {e.name}" for e in catalogue.unusual() if e.exercise in exercises}


def _inputs(name: str) -> tuple:
    """Example inputs for the exercise a library key names."""
    generator = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    families = {
        "WeightedSum": lambda: (randn(3), randn(3), 0.5, -2.0),
        "ScaledSigmoid": lambda: (randn(4), 3.0),
        "MyLinearFunction": lambda: (randn(4, 3), randn(3, 3), randn(3)),
        "FusedLinearReLU": lambda: (randn(4, 3), randn(3, 3), randn(3)),
    }
    return families.get(name.split(":")[0], lambda: (randn(5),))()


LESSONS_00_02 = ("Square", "WeightedSum", "MySigmoid", "MyReLU", "ScaledSigmoid",
                 "MyLinearFunction", "FusedLinearReLU")
LIBRARY_00_02 = _library(*LESSONS_00_02)
SOLUTIONS_00_02 = {f"{name}: solution" for name in LESSONS_00_02}
CORRECT_00_02 = SOLUTIONS_00_02 | _unusual(*LESSONS_00_02)

# Right for lesson 01, yet it saves sigmoid(x), an intermediate: double backward through it is
# wrong, as the syllabus says, so the inspector rightly warns.
SAVES_AN_INTERMEDIATE = {"ScaledSigmoid: saves sigmoid(x), a new tensor",
                         # lesson 02 asks no double backward; the copy cuts its path to weight
                         "FusedLinearReLU: a contiguous copy of weight.T saved beside the mask",
                         "FusedLinearReLU: a contiguous weight.T and x saved only when they will "
                         "be read",
                         # lesson 00 asks no double backward; a tensor of the weights made in
                         # forward is an intermediate to the inspector like any other
                         "WeightedSum: weights as a float64 tensor saved, read back with tolist()",
                         "WeightedSum: the weights saved as one tensor of x1's dtype",
                         # a copy of the output is made in forward, not the output itself
                         "Square: a copy of the output saved beside x",
                         # 2x is made in forward, an intermediate to the inspector
                         "Square: 2x saved in forward, a one-tuple returned"}
FLAGGED_BY_INSPECTOR = SAVES_AN_INTERMEDIATE | {
    "Square: tensor on ctx", "MySigmoid: output kept as ctx.y",
    "MySigmoid: output hidden in a list on ctx", "MyReLU: mask kept as ctx.mask",
    "FusedLinearReLU: mask kept as ctx.mask", "FusedLinearReLU: saves the float pre-activation"}
WRONG_JACOBIAN = {
    "Square: wrong sign", "Square: constant factor 5x", "Square: zero gradient",
    "Square: forgets grad_output", "WeightedSum: swapped weights",
    "MyReLU: leaky threshold x > -10", "ScaledSigmoid: forgets the scale",
    "MyLinearFunction: grad_x = grad_output @ weight.T", "FusedLinearReLU: forgets the ReLU in "
    "backward", "FusedLinearReLU: grad_x = grad_z @ weight.T",
    "MyLinearFunction: grad_weight = x.T @ grad_output"}  # square weight
FAILING_FORWARD = {f"{name}: stub" for name in LESSONS_00_02} | {
    "Square: a plain function", "Square: an instance"}
FAILING_BACKWARD = {
    "Square: backward left as the stub", "WeightedSum: two gradients for four inputs",
    "MyReLU: overwrites the saved input in backward", "ScaledSigmoid: a float gradient for scale",
    "ScaledSigmoid: a tensor of zeros for the float scale",
    # the engine refuses these gradients: a wrong shape, a gradient for a float, one too few
    "MyLinearFunction: grad_x as (grad_output @ weight).mT",
    "WeightedSum: a gradient for the float w1", "ScaledSigmoid: one gradient for two inputs",
    # backward pops what forward kept by id(ctx): the explorer's second backward finds nothing
    "Square: a copy of x popped from a module dict keyed by id(ctx)",
    "Square: a flag in a module dict keyed by id(ctx), popped by backward",
    "ScaledSigmoid: scale in a dict on the class keyed by id(ctx), popped in backward",
    "ScaledSigmoid: scale in a module dict keyed by id(ctx), popped in backward",
    "ScaledSigmoid: scale pushed on a module deque, popped in backward",
    # forward returns float32 for float64 x: backward's matmul meets float32 and float64
    "MyLinearFunction: x = x.float() in forward, weight cast to match",
    # backward writes into a saved tensor in place: the engine's version check refuses it
    "Square: the saved x doubled in place", "MyReLU: saves y, backward y.sign_() in the saved output",
    # backward computes with the tuple ctx.saved_tensors, or returns a list: it raises
    "Square: ctx.saved_tensors not unpacked: x = ctx.saved_tensors",
    "Square: ctx.saved_tensors not unpacked, a tensor method called on it",
    "Square: the gradient returned in a list"}


@pytest.mark.parametrize("name", sorted(LIBRARY_00_02))
def test_does_the_inspector_flag_what_it_should(name):
    try:
        inspection = inspect_forward(LIBRARY_00_02[name](), *_inputs(name))
    except Exception:  # shown by the view as an error box
        assert name in FAILING_FORWARD
        return
    if name in FLAGGED_BY_INSPECTOR:
        assert inspection.warnings
    elif name in CORRECT_00_02:
        assert inspection.warnings == []


@pytest.mark.parametrize("name", sorted(LIBRARY_00_02))
def test_does_the_explorer_show_where_the_jacobian_differs(name):
    try:
        comparison = compare_jacobians(LIBRARY_00_02[name](), *_inputs(name))
    except Exception:  # shown by the view as an error box
        assert name in FAILING_BACKWARD | FAILING_FORWARD
        return
    agree = [comparison.agrees(k) for k in range(len(comparison.names))]
    if name in WRONG_JACOBIAN:
        assert not all(agree)
    elif name in CORRECT_00_02:
        assert all(agree)


ATTENTION = ("ScaledDotProductAttention", "MemoryEfficientAttention")
ATTENTION_LIBRARY = _library(*ATTENTION)
WRONG_ATTENTION = {f"ScaledDotProductAttention: {name}" for name in (
    "no row sum", "diagonal of the Jacobian only", "row sum over the queries", "reversed mask",
    "reversed mask filled with -1e9", "scale missing from dQ and dK")} | {
    "MemoryEfficientAttention: no row sum"}
RIGHT_ATTENTION = {f"{name}: solution" for name in ATTENTION} | _unusual(*ATTENTION)


@pytest.mark.parametrize("name", sorted(ATTENTION_LIBRARY))
def test_does_the_attention_view_catch_wrong_values(name):
    generator = torch.Generator().manual_seed(0)
    Q, K, V, grad_output = (torch.randn(2, 5, 4, generator=generator, dtype=torch.float64)
                            for _ in range(4))
    function = ATTENTION_LIBRARY[name]()
    worst = 0.0
    for causal in (False, True):
        for padding in (0, 1):
            keep = build_mask(5, 5, causal=causal, padding=padding)
            try:
                maps = attention_maps(function, Q, K, V, 0.5, keep, grad_output)
            except Exception:  # shown by the view as an error box
                assert name not in RIGHT_ATTENTION
                return
            errors = torch.tensor(list(maps.errors.values()))
            worst = max(worst, errors.nan_to_num(float("inf")).max().item())
    if name in WRONG_ATTENTION:
        assert worst > TOLERANCE
    if name in RIGHT_ATTENTION:
        assert worst <= TOLERANCE


def test_does_the_attention_view_survive_a_fully_masked_row():
    view = attention_explorer(mistake("ScaledDotProductAttention", "reversed mask"), heads=1,
                              length=4, dim=4)
    view.controls["causal"].value = True  # reversed, the last row masks every key: nan
    assert "✗" in view.panes["readout"].value


def _sequential_through(function):
    """The lesson's own checkpoint_sequential, segmenting through ``function`` instead of the
    lesson's CheckpointFunction."""
    sequential = solution("checkpoint_sequential")
    return types.FunctionType(sequential.__code__,
                              {**sequential.__globals__, "CheckpointFunction": function})


CHECKPOINTS = _library("CheckpointFunction", "checkpoint_sequential")
CHECKPOINTS_CORRECT = {"CheckpointFunction: solution", "checkpoint_sequential: solution"}


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_does_the_checkpointing_view_cope_with_every_variant(name):
    layers = [torch.nn.Linear(8, 8), torch.nn.Tanh()] * 2
    answer = CHECKPOINTS[name]()
    if name.startswith("CheckpointFunction:"):
        answer = _sequential_through(answer)
    try:
        runs = measure_all(answer, layers, torch.randn(3, 8), repeats=0)
    except Exception as error:  # shown by the view as an error box
        assert name not in CHECKPOINTS_CORRECT
        assert isinstance(error, EndlessBackward) == ("without end" in name)  # not a hang
        return
    missing = any(run.params_without_grad for run in runs)
    if name == "CheckpointFunction: torch.autograd.grad of the inputs only":
        assert missing
    if name in CHECKPOINTS_CORRECT:
        assert not missing and runs[2].saved_bytes < runs[0].saved_bytes


STE_LIBRARY = _library("SignSTE", "SignClippedSTE", "RoundSTE")
# outputs autograd does not differentiate: the view says why it has no surrogate to draw
NO_SURROGATE = {"SignSTE: integer output", "RoundSTE: output passed to ctx.mark_non_differentiable"}


@pytest.mark.parametrize("name", sorted(STE_LIBRARY))
def test_does_the_ste_view_cope_with_every_estimator(name):
    try:
        text = window_text(ste_curves(STE_LIBRARY[name]()))
    except Exception as error:  # shown by the view as an error box
        assert name.endswith(": stub") or name in NO_SURROGATE
        assert name.endswith(": stub") or "no surrogate to draw" in str(error)
        return
    if name == "SignClippedSTE: solution":
        assert "-1 ≤ x ≤ 1" in text
    if name in ("SignSTE: solution", "RoundSTE: solution"):
        assert text.startswith("no clipping")
    if name == "SignClippedSTE: inverted clip":
        assert "clipping window" in text and "-1 ≤ x ≤ 1" not in text


def test_does_a_smooth_look_alike_have_no_jumps():
    tanh = mistake("SignSTE", "tanh(100 x) in forward")  # steep, but continuous
    curves = ste_curves(tanh)
    assert curves.jumps == []
    assert ste_explorer(tanh).panes["readout"].value


def test_every_expectation_names_an_answer_of_the_library():
    """Does each answer the sweep expects something of exist (no expectation lost to a rename)?"""
    expected = (SAVES_AN_INTERMEDIATE | FLAGGED_BY_INSPECTOR | WRONG_JACOBIAN | FAILING_FORWARD
                | FAILING_BACKWARD)
    assert expected <= set(LIBRARY_00_02)
    assert WRONG_ATTENTION | RIGHT_ATTENTION <= set(ATTENTION_LIBRARY)
    assert CHECKPOINTS_CORRECT | {"CheckpointFunction: torch.autograd.grad of the inputs only"} \
        <= set(CHECKPOINTS)
    assert {"SignClippedSTE: inverted clip"} | NO_SURROGATE <= set(STE_LIBRARY)
