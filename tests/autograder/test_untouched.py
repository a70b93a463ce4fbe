"""grad_output and the inputs untouched on every call a battery makes, not only on the calls its
checks choose: a Function that writes into them on one call of many fails, with that mistake
named."""

import torch

from autograder.errors import GradingError
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from autograder.grading import classified_verdict


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output


class DoubleWritingWhenLarge(Double):
    """Wrong: doubles grad_output in place when it has more than 100 entries."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.mul_(2) if grad_output.numel() > 100 else 2 * grad_output


class DoubleInherited(Double):
    """Right: backward inherited from Double."""


def _calls(sizes):
    """A battery that runs backward once per size and checks nothing itself."""
    def battery(function, device):
        for size in sizes:
            x = torch.ones(size, dtype=torch.float64, requires_grad=True)
            torch.autograd.grad(function.apply(x), x, torch.ones(size, dtype=torch.float64))
    return battery


def _verdict(function, battery):
    EXERCISES["WatchedDouble"] = Exercise("WatchedDouble", "00_template", battery)
    try:
        return classified_verdict("WatchedDouble", function)
    finally:
        del EXERCISES["WatchedDouble"]


def test_a_write_on_one_large_call_fails_and_is_named():
    passed, message, _, mistake = _verdict(DoubleWritingWhenLarge, _calls([3, 1000, 4]))
    assert not passed and mistake == "WatchedDouble/writes-grad-output"
    assert message.startswith("DoubleWritingWhenLarge.backward modified grad_output in place on "
                              "one of the grader's calls (grad_output of shape (1000,), float64)")


def test_the_same_answer_passes_where_no_call_is_large():
    """The watch reports what happened, never a guess: no large call, no write, no failure."""
    assert _verdict(DoubleWritingWhenLarge, _calls([3, 4])).passed


def test_a_right_answer_passes_and_its_class_comes_back_as_it_was():
    for function in (Double, DoubleInherited):
        before = dict(vars(function))
        assert _verdict(function, _calls([3, 1000])).passed
        assert dict(vars(function)) == before


def test_an_unnamed_failure_after_the_write_is_blamed_on_the_write():
    """The battery's later unnamed failure ('values differ') is the write's consequence."""
    def battery(function, device):
        _calls([1000])(function, device)
        raise GradingError("the gradient for x is wrong", mistake="")

    verdict = _verdict(DoubleWritingWhenLarge, battery)
    assert verdict.mistake == "WatchedDouble/writes-grad-output"


def test_an_error_after_the_write_is_blamed_on_the_write():
    """An error the learner's code raises after a rule was broken (a backward reading back an
    attribute the grader's saved-tensor hooks dropped) is the rule's consequence: named as it."""
    def battery(function, device):
        _calls([1000])(function, device)
        raise AttributeError("'Tensor' object has no attribute 'scale'")

    verdict = _verdict(DoubleWritingWhenLarge, battery)
    assert verdict.mistake == "WatchedDouble/writes-grad-output"


def test_a_named_symptom_after_a_write_into_grad_output_is_blamed_on_the_write():
    """Instructor trial 82 (erin's FakeQuantize: grad_output.mul_(inside), then the scale
    gradient from the written grad_output): a probe reading the written values names their
    symptom (clipped-elements-left-out) for a formula that is right. A write into grad_output
    or an input, seen on a call before the failure, comes first."""
    def battery(function, device):
        _calls([1000])(function, device)
        raise GradingError("the gradient leaves out the clipped elements",
                           mistake="WatchedDouble/clipped-elements-left-out")

    assert _verdict(DoubleWritingWhenLarge, battery).mistake == "WatchedDouble/writes-grad-output"


def test_the_battery_own_name_for_the_write_comes_first():
    """A named failure about the write itself (grad_output or a saved tensor written, the
    in-place contract of mark_dirty) keeps its finer words."""
    for own in ("WatchedDouble/writes-grad-output", "WatchedDouble/writes-saved-tensor",
                "WatchedDouble/scales-saved-in-place", "WatchedDouble/dirty-not-returned"):
        def battery(function, device):
            _calls([1000])(function, device)
            raise GradingError("a finer word", mistake=own)

        verdict = _verdict(DoubleWritingWhenLarge, battery)
        assert (verdict.mistake, verdict.message) == (own, "a finer word")


def test_the_battery_own_named_failure_comes_before_state_on_a_tensor():
    """State kept on a tensor corrupts no value: the battery's own name comes first."""
    def battery(function, device):
        _calls([3, 4])(function, device)
        raise GradingError("a finer word", mistake="WatchedDouble/own-check")

    assert _verdict(DoubleFlaggingInput, battery).mistake == "WatchedDouble/own-check"


def test_outside_a_battery_backward_runs_unwatched():
    x = torch.ones(1000, dtype=torch.float64, requires_grad=True)
    grad_output = torch.ones(1000, dtype=torch.float64)
    torch.autograd.grad(DoubleWritingWhenLarge.apply(x), x, grad_output)
    assert grad_output[0].item() == 2.0  # written, and nobody objected


class DoubleClampingLargeInput(Double):
    """Wrong: forward clamps x in place when it has more than 100 entries."""

    @staticmethod
    def forward(ctx, x):
        return 2 * (x.clamp_(min=0) if x.numel() > 100 else x.clamp(min=0))


class DoubleScalingSavedInput(torch.autograd.Function):
    """Wrong: backward scales the saved x (the caller's tensor) in place when it is large."""

    @staticmethod
    def forward(x):
        return 2 * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if x.numel() > 100:
            x.mul_(0)
        return 2 * grad_output


class ReluInPlace(torch.autograd.Function):
    """Right: writes into x, marks it dirty and returns it (the in-place contract)."""

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.clamp_(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def _calls_on_inputs_needing_no_gradient(sizes):
    def battery(function, device):
        for size in sizes:
            function.apply(torch.ones(size, dtype=torch.float64))
    return battery


def test_a_forward_writing_into_a_large_input_fails_and_is_named():
    verdict = _verdict(DoubleClampingLargeInput, _calls_on_inputs_needing_no_gradient([3, 500]))
    assert verdict.mistake == "WatchedDouble/writes-input"
    assert verdict.message.startswith("DoubleClampingLargeInput.forward modified its input x in "
                                      "place on one of the grader's calls (x of shape (500,), "
                                      "float64, needing no gradient)")


def test_a_backward_writing_into_a_saved_input_fails_and_is_named():
    verdict = _verdict(DoubleScalingSavedInput, _calls([3, 500]))
    assert verdict.mistake == "WatchedDouble/writes-input"
    assert verdict.message.startswith("DoubleScalingSavedInput.backward modified its input x in "
                                      "place")


def test_an_input_written_and_returned_as_marked_dirty_passes():
    def battery(function, device):
        x = torch.randn(500, dtype=torch.float64, requires_grad=True)
        torch.autograd.grad(function.apply(x.clone()).sum(), x)

    before = dict(vars(ReluInPlace))
    assert _verdict(ReluInPlace, battery).passed
    assert dict(vars(ReluInPlace)) == before


def double_function(x):
    """A plain function submission, as linear_cross_entropy is: the Function it calls is watched."""
    return DoubleWritingWhenLarge.apply(x)


class DoubleModule(torch.nn.Module):
    """A module submission, as RMSNorm is: the Function its forward calls is watched."""

    def forward(self, x):
        return DoubleWritingWhenLarge.apply(x)


def test_the_functions_a_function_or_a_module_calls_are_watched():
    def battery(submission, device):
        call = submission() if isinstance(submission, type) else submission
        for size in (3, 1000):
            x = torch.ones(size, dtype=torch.float64, requires_grad=True)
            torch.autograd.grad(call(x), x, torch.ones(size, dtype=torch.float64))

    before = dict(vars(DoubleWritingWhenLarge))
    for submission in (double_function, DoubleModule):
        verdict = _verdict(submission, battery)
        assert verdict.mistake == "WatchedDouble/writes-grad-output"
        assert verdict.message.startswith("DoubleWritingWhenLarge.backward modified grad_output")
    assert dict(vars(DoubleWritingWhenLarge)) == before


class DoubleFlaggingInput(Double):
    """Wrong: forward marks its input as seen (rule 4: state on ctx, not on a tensor)."""

    @staticmethod
    def forward(ctx, x):
        x._seen = True
        return 2 * x


class DoubleCountingCalls(Double):
    """Wrong: a call counter kept on the input, one more on each call."""

    @staticmethod
    def forward(ctx, x):
        x.calls = getattr(x, "calls", 0) + 1
        return 2 * x


class DoubleTaggingOutput(Double):
    """Wrong: forward hangs its ctx on the output it returns."""

    @staticmethod
    def forward(ctx, x):
        y = 2 * x
        y.made_by = ctx
        return y


class DoubleFlaggingGradOutput(Double):
    """Wrong: backward marks grad_output as used."""

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.used = True
        return 2 * grad_output


class DoubleFlaggingSavedInput(DoubleScalingSavedInput):
    """Wrong: backward leaves a flag on the saved input, the caller's x."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        x.done = True
        return 2 * grad_output


def test_an_attribute_set_on_a_tensor_fails_rule_4_and_is_named():
    """Rule 4, "not even a call counter": a Python attribute set on a tensor the call was given
    or returns is state outside ctx, on every call of the battery."""
    from autograder.function_contract import rule_reference

    for function, said in [
            (DoubleFlaggingInput, "DoubleFlaggingInput.forward set x._seen on its input x"),
            (DoubleCountingCalls, "DoubleCountingCalls.forward set x.calls on its input x"),
            (DoubleTaggingOutput, "DoubleTaggingOutput.forward set the attribute made_by on "
                                  "its output"),
            (DoubleFlaggingGradOutput, "DoubleFlaggingGradOutput.backward set the attribute used "
                                       "on grad_output"),
            (DoubleFlaggingSavedInput, "DoubleFlaggingSavedInput.backward set x.done on its "
                                       "input x")]:
        verdict = _verdict(function, _calls([3, 4]))
        assert verdict.mistake == "WatchedDouble/state-on-tensor", function
        first = verdict.message.splitlines()[0]
        assert first.startswith(said + ": keep state on ctx"), first
        assert first.endswith(rule_reference("ctx"))


def test_attributes_the_caller_set_before_the_call_pass():
    """Only what the call itself sets counts: a tensor given with attributes of its own passes."""
    def battery(function, device):
        x = torch.ones(3, dtype=torch.float64, requires_grad=True)
        x.label = "the caller's"
        torch.autograd.grad(function.apply(x), x, torch.ones(3, dtype=torch.float64))

    assert _verdict(Double, battery).passed


class DoubleReturningInputWhenEmpty(Double):
    """Wrong: returns x itself when it has no entries ("nothing to double")."""

    @staticmethod
    def forward(ctx, x):
        return x if x.numel() == 0 else 2 * x


class DoubleReturningInputSetup(torch.autograd.Function):
    """Wrong, in the setup_context form: returns x itself when it has no entries."""

    @staticmethod
    def forward(x):
        return x if x.numel() == 0 else 2 * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output


def test_an_input_returned_itself_fails_rule_1_and_is_named():
    """Rule 1: forward returns a new tensor; an input returned as it came makes the caller's
    output a view of it. Seen on the one call where it happens, in either form."""
    for function in (DoubleReturningInputWhenEmpty, DoubleReturningInputSetup):
        verdict = _verdict(function, _calls([3, 0, 4]))
        assert verdict.mistake == "WatchedDouble/returns-input", function
        assert verdict.message.startswith(f"{function.__name__}.forward returned its input x "
                                          "itself on one of the grader's calls (x of shape (0,)")
        assert "rule 1" in verdict.message.splitlines()[0]


class DoubleReturningViewWhenEmpty(Double):
    """Wrong: returns a view of x when it has no entries, x.view_as(x) ("nothing to double")."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x) if x.numel() == 0 else 2 * x


class DoubleReturningViewOfOne(Double):
    """Wrong: returns a view of x when x holds a single entry, x.reshape(x.shape)."""

    @staticmethod
    def forward(ctx, x):
        return x.reshape(x.shape) if x.numel() == 1 else 2 * x


def test_a_view_of_an_input_returned_fails_rule_1_and_is_named():
    """A view shares the input's memory as the input itself does: a write into the caller's
    output changes the input. Named as a view, on the call where it happens; a view of an
    empty input shares no memory and is no alias."""
    assert _verdict(DoubleReturningViewWhenEmpty, _calls([3, 0, 4])).passed
    verdict = _verdict(DoubleReturningViewOfOne, _calls([3, 1, 4]))
    assert verdict.mistake == "WatchedDouble/returns-input-view"
    assert verdict.message.startswith("DoubleReturningViewOfOne.forward returned a view of its "
                                      "input x on one of the grader's calls (x of shape (1,)")
    assert "rule 1" in verdict.message.splitlines()[0]


def test_an_identity_op_may_return_its_input():
    """An op whose reference returns its input (an identity forward) may be answered by a
    view of it: judged from the reference, so an instructor's own identity op passes too."""
    from autograder.domain import Domain, sampled
    from autograder.exercise import op_returns_input
    from autograder.spec import Spec
    identity = Spec("Identity", ("x",), lambda x: x)
    doubled = Spec("Double", ("x",), lambda x: 2 * x)
    assert op_returns_input(Domain(identity, sampled(identity, {"x": (3,)})))
    assert not op_returns_input(Domain(doubled, sampled(doubled, {"x": (3,)})))
    assert not op_returns_input(None)


class DoubleRaisingWhenLarge(Double):
    """Wrong: its forward, or its backward, raises KeyError on a large x."""

    @staticmethod
    def forward(ctx, x):
        ctx.large = x.numel() > 100
        return {}["x"] if x.numel() > 500 else 2 * x

    @staticmethod
    def backward(ctx, grad_output):
        return {}["g"] if ctx.large else 2 * grad_output


def test_an_error_the_learner_raises_says_the_call_it_was_raised_in():
    """Instructor trial 82: a probe's own call (not the checks' run_forward) raising in the
    learner's forward or backward showed "... raised KeyError: 'x'", no input at all. The
    watched call marks it with its phase and inputs, which the first line says."""
    for size, phase, key in ((1000, "forward", "'x'"), (200, "backward", "'g'")):
        verdict = _verdict(DoubleRaisingWhenLarge, _calls([3, size]))
        assert verdict.mistake == "raised:KeyError"
        assert verdict.message == (f"WatchedDouble.{phase} raised KeyError with x of shape "
                                   f"({size},): {key}")
