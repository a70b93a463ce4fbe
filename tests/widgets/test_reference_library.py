"""Does every view cope with the course's whole library of right and wrong Functions
(tests/functions), and flag the wrong ones a learner would bring to it? The sweep runs the
views' plain functions; the views themselves show any exception as an error box."""

import functools
import inspect

import pytest
import torch

from functions import attention, checkpointing, correct, mistakes, ste
from widgets.attention import TOLERANCE, attention_explorer, attention_maps, build_mask
from widgets.checkpointing import measure_all
from widgets.gradcheck_explorer import compare_jacobians
from widgets.inspector import inspect_forward
from widgets.ste import ste_curves, ste_explorer, window_text


def _functions(module) -> dict:
    return {name: value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, torch.autograd.Function)
            and value.__module__ == module.__name__}


def _inputs(name: str) -> tuple:
    """Example inputs for an exercise's family, by the class name's prefix."""
    generator = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    families = {
        "WeightedSum": lambda: (randn(3), randn(3), 0.5, -2.0),
        "ScaledSigmoid": lambda: (randn(4), 3.0),
        "MyLinear": lambda: (randn(4, 3), randn(3, 3), randn(3)),
        "Fused": lambda: (randn(4, 3), randn(3, 3), randn(3)),
    }
    for prefix, make in families.items():
        if name.startswith(prefix):
            return make()
    return (randn(5),)


LESSONS_00_02 = {**_functions(correct), **_functions(mistakes)}

FLAGGED_BY_INSPECTOR = {"ScaledSigmoid", "SquareCtxTensor", "MySigmoidCtxAttribute",
                        "MySigmoidNestedCtxAttribute", "MyReLUCtxMask", "FusedCtxMask",
                        "FusedSavesPreActivation"}
WRONG_JACOBIAN = {"SquareWrongSign", "SquareScaled", "SquareZeroGradient",
                  "SquareForgetsGradOutput", "WeightedSumSwapped", "MyReLULeaky",
                  "ScaledSigmoidForgetsScale", "MyLinearGradXTransposed", "FusedNoReLUGradient",
                  "FusedGradXTransposed", "MyLinearTransposedGradWeight"}  # square weight
FAILING_FORWARD = {"Stub", "NotImplementedSquare"}
FAILING_BACKWARD = {"BackwardNotImplementedSquare", "WeightedSumTwoGradients",
                    "MyReLUInPlaceInBackward", "ScaledSigmoidFloatGradient"}
# Right for lesson 01, yet it saves sigmoid(x), an intermediate: double backward through it is
# wrong, as the syllabus says, so the inspector rightly warns.
SAVES_AN_INTERMEDIATE = {"ScaledSigmoid"}


@pytest.mark.parametrize("name", sorted(LESSONS_00_02))
def test_does_the_inspector_flag_what_it_should(name):
    try:
        inspection = inspect_forward(LESSONS_00_02[name], *_inputs(name))
    except Exception:  # shown by the view as an error box
        assert name in FAILING_FORWARD
        return
    if name in FLAGGED_BY_INSPECTOR:
        assert inspection.warnings
    elif name in correct.__dict__:
        assert inspection.warnings == []


@pytest.mark.parametrize("name", sorted(LESSONS_00_02))
def test_does_the_explorer_show_where_the_jacobian_differs(name):
    try:
        comparison = compare_jacobians(LESSONS_00_02[name], *_inputs(name))
    except Exception:  # shown by the view as an error box
        assert name in FAILING_BACKWARD | FAILING_FORWARD
        return
    agree = [comparison.agrees(k) for k in range(len(comparison.names))]
    if name in WRONG_JACOBIAN:
        assert not all(agree)
    elif name in correct.__dict__:
        assert all(agree)


WRONG_ATTENTION = {"NoRowSum", "DiagonalJacobianOnly", "RowSumOverQueries", "ReversedMask",
                   "ReversedMaskLargeNegative", "MissingScaleInGradients",
                   "MemoryEfficientNoRowSum"}
RIGHT_ATTENTION = {"ScaledDotProductAttention", "MemoryEfficientAttention"}


@pytest.mark.parametrize("name", sorted(_functions(attention)))
def test_does_the_attention_view_catch_wrong_values(name):
    generator = torch.Generator().manual_seed(0)
    Q, K, V, grad_output = (torch.randn(2, 5, 4, generator=generator, dtype=torch.float64)
                            for _ in range(4))
    worst = 0.0
    for causal in (False, True):
        for padding in (0, 1):
            keep = build_mask(5, 5, causal=causal, padding=padding)
            try:
                maps = attention_maps(getattr(attention, name), Q, K, V, 0.5, keep, grad_output)
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
    view = attention_explorer(attention.ReversedMask, heads=1, length=4, dim=4)
    view.controls["causal"].value = True  # reversed, the last row masks every key: nan
    assert "✗" in view.panes["readout"].value


CHECKPOINTS = {name: functools.partial(checkpointing.checkpoint_sequential, function=cls)
               for name, cls in _functions(checkpointing).items()}
CHECKPOINTS.update({name: getattr(checkpointing, name) for name in vars(checkpointing)
                    if name.startswith("sequential_")})


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_does_the_checkpointing_view_cope_with_every_variant(name):
    layers = [torch.nn.Linear(8, 8), torch.nn.Tanh()] * 2
    try:
        runs = measure_all(CHECKPOINTS[name], layers, torch.randn(3, 8), repeats=0)
    except Exception:  # shown by the view as an error box
        assert name != "CheckpointFunction"
        return
    missing = any(run.params_without_grad for run in runs)
    if name == "GradOfInputsOnly":
        assert missing
    if name == "CheckpointFunction":
        assert not missing and runs[2].saved_bytes < runs[0].saved_bytes


@pytest.mark.parametrize("name", sorted(_functions(ste)))
def test_does_the_ste_view_cope_with_every_estimator(name):
    try:
        text = window_text(ste_curves(getattr(ste, name)))
    except Exception:  # shown by the view as an error box
        assert name.startswith("NotImplemented") or name == "SignSTEInteger"
        return
    if name == "SignClippedSTE":
        assert "-1 ≤ x ≤ 1" in text
    if name in ("SignSTE", "RoundSTE"):
        assert text.startswith("no clipping")
    if name == "SignClippedSTEInverted":
        assert "clipping window" in text and "-1 ≤ x ≤ 1" not in text


def test_does_a_smooth_look_alike_have_no_jumps():
    curves = ste_curves(ste.SignSTETanh)  # tanh(100 x): steep, but continuous
    assert curves.jumps == []
    assert ste_explorer(ste.SignSTETanh).panes["readout"].value
