"""autograder.explain: the engine's errors in a learner's forward or backward, turned into
hints that name what was proven, and anything else quoted."""

import pytest
import torch

from autograder import explain
from autograder.checks import Spec, make_inputs, run_backward, run_forward
from autograder.exercises.lesson02_linear.linear import MY_LINEAR
from autograder.exercises.lesson01_sigmoid.sigmoid import MY_SIGMOID, SCALED_SIGMOID
from autograder.exercises.lesson00_template.template import SQUARE, WEIGHTED_SUM
from tests.autograder.catalogued import mistake
from tests.autograder.test_checks import x_of
from tools.solutions import solution, stub


SQUARE_SOLUTION = solution("Square")


class TestRuntimeErrors:
    """How PyTorch's own errors from forward and backward become hints."""

    def test_too_few_gradients(self, raises_hint):
        """Are the inputs that still need a None named?"""
        inputs = make_inputs({"x1": x_of(3), "x2": x_of(3), "w1": 0.5, "w2": 2.0})
        forward = run_forward(mistake("WeightedSum", "two gradients for four inputs"), WEIGHTED_SUM,
                              inputs)
        with raises_hint("backward returned 2 gradients for 4 inputs: w1 and w2 get no gradient"):
            run_backward(WEIGHTED_SUM, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_too_few_names_the_argument_the_inputs_left_to_the_call(self):
        """A check that passes eps beside its inputs (not among them): is eps still named, from
        the spec, rather than an empty name?"""
        spec = Spec("LayerNormFunction", ("x", "weight", "bias", "eps"), None)
        error = RuntimeError("function LayerNormFunctionBackward returned an incorrect number "
                             "of gradients (expected 4, got 3)")
        inputs = {"x": x_of(3), "weight": x_of(3), "bias": x_of(3)}
        hint = explain._explain_runtime_error(spec, "backward", error, inputs).hint
        assert hint.startswith("backward returned 3 gradients for 4 inputs: eps gets no "
                               "gradient"), hint

    def test_too_few_with_a_tensor_among_the_last_names_none(self, raises_hint):
        """When a tensor input sits among the last ones, the count cannot say which gradient is
        missing: is the hint the rule (one per input, in order), not a guess at names?"""

        class DropsGradX1(SQUARE_SOLUTION):
            @staticmethod
            def forward(ctx, x1, x2):
                return x1 * x2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output  # x2's gradient, say, with x1's left out

        spec = Spec("DropsGradX1", ("x1", "x2"), lambda x1, x2: x1 * x2)
        inputs = make_inputs({"x1": x_of(3), "x2": x_of(3)})
        forward = run_forward(DropsGradX1, spec, inputs)
        with raises_hint("backward returned 1 gradient for 2 inputs: return one gradient or "
                         "None per input, in forward's order (x1, x2)"):
            run_backward(spec, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_too_many_gradients(self, raises_hint):
        """Is a backward with an extra gradient told to return one per input? (PyTorch drops
        extra trailing Nones silently, so the extra one here is a tensor.)"""

        class ExtraGradient(SQUARE_SOLUTION):
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return 2 * x * grad_output, grad_output

        inputs = make_inputs({"x": x_of(3)})
        forward = run_forward(ExtraGradient, SQUARE, inputs)
        with raises_hint("backward returned 2 gradients for 1 input: return one gradient "
                         "(or None) per input forward was given; anything past the last"):
            run_backward(SQUARE, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_gradient_for_a_float_input(self, raises_hint):
        """Is a gradient returned for a Python-float input told to be None?"""
        inputs = make_inputs({"x": x_of(3), "scale": 2.0})
        submission = mistake("ScaledSigmoid", "a float gradient for scale")
        forward = run_forward(submission, SCALED_SIGMOID, inputs)
        with raises_hint("backward returned a gradient for scale, which is not a tensor: "
                         "return None for scale"):
            run_backward(SCALED_SIGMOID, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_zeros_for_a_float_input(self, raises_hint):
        """Learner trial 80: torch.zeros(()) returned for the float scale read 'a gradient for
        scale, which is not a tensor' (yet it was one): is the tensor of zeros named, and told
        that it is not None?"""
        inputs = make_inputs({"x": x_of(3), "scale": 2.0})
        submission = mistake("ScaledSigmoid", "a tensor of zeros for the float scale")
        forward = run_forward(submission, SCALED_SIGMOID, inputs)
        with raises_hint("backward returned a tensor of zeros for scale, an input that is not a "
                         "tensor: a tensor of zeros is not None; return None for scale"):
            run_backward(SCALED_SIGMOID, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_wrong_gradient_shape_from_the_engine(self, raises_hint):
        """The engine rejects a transposed grad_weight before any comparison: is the hint still
        the transpose one, naming weight?"""
        inputs = make_inputs({"x": x_of(5, 3), "weight": x_of(4, 3), "bias": x_of(4)})
        submission = mistake("MyLinearFunction", "grad_weight = x.T @ grad_output")
        forward = run_forward(submission, MY_LINEAR, inputs)
        with raises_hint("grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?"):
            run_backward(MY_LINEAR, forward.output, inputs, torch.ones(5, 4, dtype=torch.float64))

    def test_engine_indices_count_tensor_inputs_only(self, raises_hint):
        """The engine numbers only tensor inputs: is a bad grad_x2 of WeightedSum named x2?"""

        class WrongShapeX2(solution("WeightedSum")):
            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.w1, (grad_output * ctx.w2)[:2], None, None

        inputs = make_inputs({"x1": x_of(3), "x2": x_of(3), "w1": 0.5, "w2": 2.0})
        forward = run_forward(WrongShapeX2, WEIGHTED_SUM, inputs)
        with raises_hint("grad_x2 has shape (2,) but x2 has shape (3,): a gradient has its "
                         "input's shape"):
            run_backward(WEIGHTED_SUM, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_wrong_device_from_the_engine(self, raises_hint):
        """Is the engine's device error, worded as PyTorch words it, turned into the hint?"""
        error = RuntimeError("Function MyLinearFunctionBackward returned an invalid gradient at "
                             "index 1 - expected device cuda:0 but got cpu")
        with raises_hint("grad_weight is on cpu but weight is on cuda:0: create new tensors on "
                         "the input's device"):
            raise explain._explain_runtime_error(MY_LINEAR, "backward", error)

    def test_other_errors_name_phase_and_inputs(self, raises_hint):
        """Does any other RuntimeError say which phase raised it and for which input shapes?"""
        inputs = make_inputs({"x": x_of(3), "weight": x_of(4, 3), "bias": x_of(4)})
        submission = mistake("MyLinearFunction", "2-D only, as in PyTorch's docs")
        forward = run_forward(submission, MY_LINEAR, inputs)
        with raises_hint("MyLinearFunction.backward raised RuntimeError with x of shape (3,), "
                         "weight of shape (4, 3), bias of shape (4,): "):
            run_backward(MY_LINEAR, forward.output, inputs, torch.ones(4, dtype=torch.float64))

    def test_an_index_error_is_quoted_not_guessed(self, raises_hint):
        """Is an IndexError that has nothing to do with needs_input_grad quoted as it is?"""

        class WrongDim(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * grad_output.shape[3]

        inputs = make_inputs({"x": x_of(3)})
        forward = run_forward(WrongDim, SQUARE, inputs)
        with raises_hint("Square.backward raised IndexError with x of shape (3,): tuple index "
                         "out of range"):
            run_backward(SQUARE, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_needs_input_grad_past_its_end_is_named_from_the_line_that_raised(self, raises_hint):
        """Is needs_input_grad named when the raising line reads it past its end?"""
        inputs = make_inputs({"x": x_of(2, 3), "weight": x_of(4, 3)})
        submission = mistake("MyLinearFunction", "needs_input_grad[2] read without a bias")
        forward = run_forward(submission, MY_LINEAR, inputs)
        with raises_hint("ctx.needs_input_grad has one entry per argument actually passed to "
                         "apply, 2 here (x, weight); bias was left out, so it has no entry"):
            run_backward(MY_LINEAR, forward.output, inputs, torch.ones(2, 4, dtype=torch.float64))

    def test_forward_with_wrong_signature(self, raises_hint):
        """Is a forward that takes the wrong arguments shown the signature it should have?"""

        class NoCtx(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output

        with raises_hint("calling Square.apply raised TypeError: forward should take (ctx, x)"):
            run_forward(NoCtx, SQUARE, make_inputs({"x": x_of(3)}))

    def test_not_implemented_passes_through(self):
        """Does a stub's NotImplementedError reach the caller unchanged, from both phases?"""
        with pytest.raises(NotImplementedError):
            run_forward(stub("Square"), SQUARE, make_inputs({"x": x_of(3)}))
        inputs = make_inputs({"x": x_of(3)})
        forward = run_forward(mistake("Square", "backward left as the stub"), SQUARE, inputs)
        with pytest.raises(NotImplementedError):
            run_backward(SQUARE, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_in_place_saved_tensor_error(self, raises_hint):
        """Is PyTorch's in-place error about a saved tensor turned into a hint?"""
        error = RuntimeError("one of the variables needed for gradient computation has been "
                             "modified by an inplace operation: [torch.DoubleTensor [3]]")
        with raises_hint("a tensor MySigmoid saved was modified in place before backward"):
            raise explain._explain_runtime_error(MY_SIGMOID, "backward", error)

    def test_autograd_asked_inside_backward_is_named(self, raises_hint):
        """Is a backward that asks autograd about what it computed (grad mode is off there, so
        nothing was recorded) told so, with the engine's own error as the proof?"""
        class AsksAutograd(SQUARE_SOLUTION):
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return torch.autograd.grad(x ** 2, x, grad_output)[0]

        inputs = make_inputs({"x": x_of(3)})
        forward = run_forward(AsksAutograd, SQUARE, inputs)
        with raises_hint("Square.backward asked autograd for a gradient of a tensor autograd "
                         "never recorded: inside backward grad mode is off"):
            run_backward(SQUARE, forward.output, inputs, torch.ones(3, dtype=torch.float64))


def test_a_call_is_described_in_one_line_whatever_it_was_given():
    """Is a module argument (whose repr spans a line per layer) described by its layers' kinds,
    and any other repr of several lines by its type, so the hint's first line keeps the
    learner's own error?"""
    class Lines:
        def __repr__(self):
            return "first\nsecond"

    described = explain._describe({"x": torch.ones(2, 3), "f": torch.nn.Sequential(
        torch.nn.Linear(3, 3), torch.nn.Tanh()), "g": torch.nn.Tanh(), "h": Lines(), "eps": 0.5})
    assert described == ("x of shape (2, 3), f=Sequential(Linear, Tanh), g=Tanh, h=Lines, "
                         "eps=0.5")
