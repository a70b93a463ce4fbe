"""Lesson 01 (sigmoid): what the catalogue harness (tests/autograder/test_catalogue.py) does
not cover for MySigmoid, MyReLU and ScaledSigmoid."""

import pytest
import torch

from autograder.checks import check_version_tracking, make_inputs, run_forward
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.grading import verdict
from autograder.exercises.lesson01_sigmoid.sigmoid import (MY_SIGMOID, SCALED_SIGMOID, SHAPES,
                                          check_extreme_inputs, check_saves_only_output,
                                          check_tails, check_tiny_scales)
from autograder.exercises.lesson01_sigmoid.sigmoid_probes import (check_branches_not_swapped,
                                                 check_output_used_as_sigmoid,
                                                 check_scale_not_float32)
from autograder.probes import BackwardTrace, ForwardTrace, SavedTensor
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run
from tools.catalogue import load
from tools.solutions import solution

pytestmark = pytest.mark.lesson01

NAMES = ["MySigmoid", "MyReLU", "ScaledSigmoid"]


def test_zero_dimensional_shape_is_graded_last():
    """Is 0-d graded, and after a shape whose hint can tell a factor from a sign?"""
    assert () in SHAPES and SHAPES[0] != () and SHAPES[-1] == ()


def ids(value):
    return getattr(value, "__name__", None) or (value if value in NAMES else "")


def test_ctx_output_escapes_version_tracking(raises_hint):
    """Is an output kept as ctx.y caught by the in-place version check, and a saved one not?"""
    values = {"x": torch.randn(4, dtype=torch.float64)}
    check_version_tracking(solution("MySigmoid"), MY_SIGMOID, values)
    with raises_hint("MySigmoid did not notice its saved output was changed in place"):
        check_version_tracking(mistake("MySigmoid", "output kept as ctx.y"), MY_SIGMOID, values)


class TestSavesOnlyOutput:
    """check_saves_only_output, on the roles probes report."""

    @staticmethod
    def trace(*roles):
        tensor = torch.zeros(1)
        saved = [SavedTensor(role, (1,), torch.float32, 4, tensor) for role in roles]
        return ForwardTrace(tensor, saved, [], {})

    def test_output_only(self):
        """Does saving exactly the output pass?"""
        check_saves_only_output(MY_SIGMOID, self.trace("output"))

    @pytest.mark.parametrize("roles, ops, hint", [
        (("input x",), ["sigmoid", "mul"],
         "MySigmoid saved its input x: its backward then computes an exponential"),
        # issue 48: (x, y) saved, backward from y alone: only what is proven is said
        (("input x", "output"), ["mul", "rsub", "mul"],
         "MySigmoid saved its input x as well as its output y: backward needs only y"),
        (("input x", "output"), ["exp", "mul"], "and your backward computes an exponential again"),
    ])
    def test_the_input(self, roles, ops, hint, raises_hint):
        """Is a saved x named, with the exponential recomputed only where backward ran one?"""
        with raises_hint(hint) as info:
            check_saves_only_output(MY_SIGMOID, self.trace(*roles), BackwardTrace((), ops, 0, []))
        if "exp" not in ops and "sigmoid" not in ops:
            assert "exponential" not in str(info.value)

    @pytest.mark.parametrize("roles, hint", [
        (("input x",), "MySigmoid saved its input x: its backward then computes an exponential"),
        (("input x", "output"), "MySigmoid saved its input x"),
        ((), "MySigmoid saved nothing with ctx.save_for_backward: which tensor does your backward read"),
        (("intermediate",), "MySigmoid saved 1 tensor (intermediate): step 2's derivative reads one tensor"),
        (("output", "output"), "MySigmoid saved 2 tensors (output, output): step 2's"),
    ])
    def test_anything_else(self, roles, hint, raises_hint):
        """Is every other set of saved tensors named?"""
        with raises_hint(hint):
            check_saves_only_output(MY_SIGMOID, self.trace(*roles))


class TestExtremeInputs:
    """check_extreme_inputs: |x| up to 800 in float64."""

    def test_stable(self, device):
        """Does the exp(-|x|) formulation stay finite?"""
        check_extreme_inputs(solution("MySigmoid"), MY_SIGMOID, device)

    def test_unstable(self, device, raises_hint):
        """Does exp(x) / (1 + exp(x)) really produce nan at 800, and is that named?"""
        unstable = mistake("MySigmoid", "exp(x) / (1 + exp(x))")
        forward = run_forward(unstable, MY_SIGMOID,
                              make_inputs({"x": torch.tensor([800.0], dtype=torch.float64)}))
        assert forward.output.isnan().all()
        with raises_hint("MySigmoid returns inf or nan for large |x|"):
            check_extreme_inputs(unstable, MY_SIGMOID, device)


@pytest.mark.parametrize("name", NAMES)
def test_not_a_function(name, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        run(name, mistake("Square", "a plain function"))


def test_hint_names_the_scale_that_broke_the_gradient(raises_hint):
    """Does dividing by scale fail with a hint that says scale=0.0 was the problem?"""
    with raises_hint("scale=0.0"):
        EXERCISES["ScaledSigmoid"].battery(mistake("ScaledSigmoid", "sigma recovered as y / scale"),
                                        torch.device("cpu"))


class TestTails:
    """check_tails: relative accuracy where sigma(x) is tiny but representable."""

    def test_accurate(self, device):
        """Does the lesson's z / (1 + z) pass down to sigma(-708), the last normal float64?"""
        check_tails(solution("MySigmoid"), MY_SIGMOID, device)

    def test_cancelling(self, device, raises_hint):
        """Is 1 - 1 / (1 + z), which returns 0 for sigma(-40) = 4.2e-18, named with repr values?"""
        with raises_hint("MySigmoid loses the left tail: at x = -708.0 it gives 0.0 where "
                         "sigma(x) = 3.307553003638408e-308"):
            check_tails(mistake("MySigmoid", "0 in the left tail (1 - 1 / (1 + z))"), MY_SIGMOID,
                        device)


def test_hint_names_the_shape(raises_hint):
    """Does a MySigmoid hint say which input it failed on, as lessons 00-03 do?"""
    with raises_hint("(with x of shape (7,))"):
        EXERCISES["MySigmoid"].run(mistake("MySigmoid", "saves the input x"))


def test_a_nan_at_zero_is_not_blamed_on_the_mask(raises_hint):
    """Is a nan gradient at x = 0 (0 / 0) reported without naming a mask x >= 0, which would
    give 1 there?"""
    answer = mistake("MyReLU", "gradient y / x (0 / 0 at x = 0)")
    with pytest.raises(GradingError) as info:
        EXERCISES["MyReLU"].battery(answer, torch.device("cpu"))
    assert "x >= 0" not in str(info.value)


CLASS_KEPT_RAISING = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        MySigmoid.calls = getattr(MySigmoid, "calls", 0) + 1
        raise ValueError("not yet")

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
"""


def test_a_class_attribute_is_named_before_what_ctx_saved(raises_hint):
    """Is an output kept on the class named as a class attribute, not as a missing save, and
    told to use save_for_backward (a tensor as a ctx attribute fails another check)?"""
    with raises_hint("MySigmoid.forward sets MySigmoid.last_output: a class attribute is "
                     "shared by every call"):
        EXERCISES["MySigmoid"].run(mistake("MySigmoid", "the output kept on the class "
                                                        "(MySigmoid.last_output = y)"))
    with pytest.raises(GradingError, match="ctx.save_for_backward"):
        EXERCISES["MySigmoid"].run(mistake("MySigmoid", "the output kept on the class "
                                                        "(MySigmoid.last_output = y)"))


def test_the_class_check_leaves_a_raising_call_to_the_battery():
    """Does a forward that raises get its own error quoted, not a class-attribute hint?"""
    passed, message = verdict("MySigmoid", load("MySigmoid", CLASS_KEPT_RAISING))
    assert not passed and "not yet" in message.splitlines()[0]
    assert "class attribute" not in message


@pytest.mark.parametrize("probe, spec, name", [
    (check_branches_not_swapped, MY_SIGMOID, "x = x.float() first: a float32 output"),
    (check_output_used_as_sigmoid, SCALED_SIGMOID,
     "scale * torch.sigmoid(x.float()): a float32 output"),
    (check_scale_not_float32, SCALED_SIGMOID, "scale * torch.sigmoid(x.float()): a float32 output"),
    (check_scale_not_float32, SCALED_SIGMOID,
     "output written into torch.zeros(x.shape), a float32 tensor"),
])
def test_a_float32_output_is_left_to_the_dtype_check(probe, spec, name, device):
    """Does a probe given a float32 output for a float64 x return (the battery's dtype check
    names it) rather than crash in a comparison ('Float did not match Double')?"""
    probe(mistake(spec.name, name), spec, device)
    passed, message = verdict(spec.name, mistake(spec.name, name))
    assert not passed and "has dtype torch.float32 but should have dtype torch.float64" in message


def test_a_float32_sigmoid_in_backward_is_left_to_the_precision_finding(device):
    """Is a backward 7 digits right at scale = 1e-12 (sigmoid of x.float()) not failed by the
    tiny-scale check with a bare value, so that the held precision finding names the step?"""
    answer = mistake("ScaledSigmoid", "backward's sigmoid on x.float()")
    with pytest.raises(GradingError, match="agrees with the truth to five digits or more"):
        check_tiny_scales(answer, device)
    passed, message = verdict("ScaledSigmoid", answer)
    assert not passed and "a step in float32" in message.splitlines()[0]


@pytest.mark.parametrize("name", ["mask with a threshold, x > 1e-6", "mask x >= 0"])
def test_a_mask_not_taken_in_float32_is_not_named_so(name):
    """Is a mask that differs from x.float() > 0 at some x probed (a threshold zeroes 1e-40,
    which float32 keeps; x >= 0 passes -1e-300) left to the other checks?"""
    assert graded_mistake("MyReLU", name) != "MyReLU/mask-in-float32"


@pytest.mark.parametrize("exercise, name, expected", [
    ("MySigmoid", "saves the input x", "MySigmoid/saves-input"),
    ("MySigmoid", "output kept in a module global", "MySigmoid/saves-nothing"),
    ("MySigmoid", "saves y and the intermediate z", "MySigmoid/saves-more-than-output"),
    ("MySigmoid", "exp(x) / (1 + exp(x))", "MySigmoid/exp-overflows"),
    ("MySigmoid", "1 - e / (1 + e) with e = exp(-x): inf / inf on the left",
     "MySigmoid/exp-overflows"),
    ("MySigmoid", "backward through logit(y): inf / inf where y is 0",
     "MySigmoid/backward-not-finite"),
    ("MySigmoid", "0 in the left tail (1 - 1 / (1 + z))", "MySigmoid/one-minus-cancels"),
    ("MySigmoid", "1 - sigmoid(-x)", "MySigmoid/one-minus-cancels"),
    ("MySigmoid", "(1 + tanh(x / 2)) / 2", "MySigmoid/tanh-cancels"),
    ("MySigmoid", "1/2 + copysign(h, x), the worked example's odd trick", "MySigmoid/tanh-cancels"),
    ("MySigmoid", "sigmoid computed in float32", "MySigmoid/float32-sigmoid"),
    ("MySigmoid", "the stable formula, its values rounded through float32",
     "MySigmoid/float32-step"),
    ("MySigmoid", "exp of x clamped to [-700, 700]", "MySigmoid/x-clamped"),
    ("MySigmoid", "x clamped to [-30, 30], then 1 / (1 + exp(-x))", "MySigmoid/x-clamped"),
    ("MySigmoid", "y = 0 exactly below x = -30", "MySigmoid/left-tail-cut-to-zero"),
    ("MyReLU", "mask with a threshold, x > 1e-6", "MyReLU/mask-threshold-above-zero"),
    ("MyReLU", "saves y, masks with y >= 0: every entry passes", "MyReLU/mask-passes-negatives"),
    ("MyReLU", "zeros of the default dtype: float32 for float16 x", "MyReLU/wrong-output-dtype"),
    ("ScaledSigmoid", "saves y, backward scale * y * (1 - y)",
     "ScaledSigmoid/output-used-as-sigmoid"),
    ("MySigmoid", "branches swapped: sigma(-x)", "MySigmoid/swapped-branches"),
    ("MySigmoid", "z = exp(-x), no abs: the left side gives 1 - sigma(x)",
     "MySigmoid/left-side-mirrored"),
    ("MyReLU", "mask on x.float()", "MyReLU/mask-in-float32"),
    ("MyReLU", "ignores grad_output", "MyReLU/ignores-grad-output"),
    ("MyReLU", "mask x >= 0", "MyReLU/mask-includes-zero"),
    ("MyReLU", "the PyTorch tutorial's MyReLU (input < 0 zeroed)", "MyReLU/mask-includes-zero"),
    ("MyReLU", "gradient y / x (0 / 0 at x = 0)", "unnamed:check"),
    ("ScaledSigmoid", "sigma recovered as y / scale", "ScaledSigmoid/divides-by-scale"),
    ("ScaledSigmoid", "saves x, then divides by scale", "ScaledSigmoid/divides-by-scale"),
    ("ScaledSigmoid", "zeros wherever abs(scale) < 1e-300", "ScaledSigmoid/zeroes-small-scales"),
    ("ScaledSigmoid", "sigma recovered as y / (scale + 1e-12), an epsilon",
     "ScaledSigmoid/epsilon-in-division"),
    ("ScaledSigmoid", "scale as torch.tensor(scale), float32, in forward and backward",
     "ScaledSigmoid/float32-scale"),
    ("ScaledSigmoid", "scale as torch.tensor(scale), float32, in backward only",
     "ScaledSigmoid/float32-scale"),
    ("Softplus", "output kept in a module global", "Softplus/saves-nothing"),
    ("Softplus", "ignores grad_output", "Softplus/ignores-grad-output"),
    ("Softplus", "saves the input x", "Softplus/saves-not-only-output"),
    ("Softplus", "F.softplus forward (threshold=20)", "Softplus/x-in-right-tail"),
    ("Softplus", "e^x itself below x = -25.5", "Softplus/exp-x-in-left-tail"),
    ("Softplus", "log(1 + exp(x)) on the left branch", "Softplus/log-without-log1p"),
    ("Softplus", "two-term series e^x - e^2x / 2 below x = -10", "Softplus/series-cut-short"),
    ("Softplus", "x + e^-x above x = 10", "Softplus/series-cut-short"),
    ("Softplus", "gradient 1 above y = 25.5", "Softplus/gradient-one-in-right-tail"),
    ("Softplus", "gradient y itself below y = 1e-10", "Softplus/gradient-y-in-left-tail"),
    ("Softplus", "gradient 1 - exp(-y): cancels in the left tail",
     "Softplus/gradient-without-expm1"),
    ("Softplus", "gradient y - y^2 / 2 below y = 1e-4", "Softplus/gradient-series-cut-short"),
    ("Softplus", "gradient x - sigmoid(x), as a source text gives it",
     "Softplus/gradient-x-minus-sigmoid"),
    ("Softplus", "gradient sigmoid(y), the sigmoid of the output", "Softplus/gradient-sigmoid-of-y"),
    ("Softplus", "x - logsigmoid(x): cancels in the left tail, no formula named",
     "unnamed:check"),
    ("Softplus", "saves y.float(): the derivative from 7 digits of y", "Softplus/saves-in-float32"),
    ("Softplus", "backward -expm1(-y.float()): the derivative in float32",
     "Softplus/float32-step"),
    ("Softplus", "forward rounded through float32", "Softplus/float32-step"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves in lesson 01 (what was saved, an exponential that
    overflows, a formula that loses the left tail, branches swapped on both sides or on the
    left only, the mask at 0 or in float32, a backward that ignores grad_output, a division
    by scale, a tail shortcut, a step or a scale in float32) carry a stable id, and a hint that names no cause none?"""
    assert graded_mistake(exercise, name) == expected


def test_alias_of_the_output_is_named_only_outside_other_hooks():
    """Review 56: y.detach() saved is named where the saved tensors are read as saved; under
    another saved-tensor hook (the battery's trace) the check leaves it to that trace."""
    from torch.autograd.graph import saved_tensors_hooks
    from types import SimpleNamespace
    from autograder.saved_output import check_output_itself
    alias = mistake("MySigmoid", "saves y.detach()")
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    forward = run_forward(alias, MY_SIGMOID, {"x": x})
    with pytest.raises(GradingError, match="saved an alias of its output y"):
        check_output_itself("MySigmoid", forward)
    check_output_itself("MySigmoid", run_forward(solution("MySigmoid"), MY_SIGMOID, {"x": x}))
    y = alias.apply(x)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        check_output_itself("MySigmoid", SimpleNamespace(saved=[], output=y))  # nothing judged
