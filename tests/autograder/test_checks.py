"""autograder.checks: the checks every exercise is built from, one at a time."""

import pytest
import torch

from autograder import checks
from autograder.checks import (check_backward_by_hand, check_gradcheck, check_is_function,
                               check_no_ctx_tensors, check_values_and_gradients,
                               check_version_tracking, make_inputs, reference_gradients,
                               run_backward, run_forward, Spec)
from autograder.exercises.linear import MY_LINEAR
from autograder.exercises.sigmoid import MY_RELU, MY_SIGMOID, SCALED_SIGMOID
from autograder.exercises.template import SQUARE, WEIGHTED_SUM
from tests.autograder.catalogued import mistake, unusual
from tools.solutions import solution, stub


SQUARE_SOLUTION = solution("Square")


def x_of(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


class TestCheckIsFunction:
    """check_is_function: the submission must be a Function subclass, passed as the class."""

    def test_accepts_a_function_class(self):
        """Is a Function subclass accepted and returned?"""
        assert check_is_function(SQUARE_SOLUTION, SQUARE) is SQUARE_SOLUTION

    def test_instance(self, raises_hint):
        """Is an instance told to pass the class and call .apply?"""
        with pytest.warns(DeprecationWarning):
            instance = SQUARE_SOLUTION()
        with raises_hint("Square is an instance: pass the class itself and call Square.apply(...)"):
            check_is_function(instance, SQUARE)

    def test_plain_function(self, raises_hint):
        """Is a plain Python function told what it should derive from?"""
        with raises_hint("Square must be a class deriving from torch.autograd.Function, "
                         "got function"):
            check_is_function(mistake("Square", "a plain function"), SQUARE)

    def test_other_class(self, raises_hint):
        """Is an unrelated class (a Module, say) rejected?"""
        with raises_hint("must be a class deriving from torch.autograd.Function, got type"):
            check_is_function(torch.nn.ReLU, MY_RELU)


class TestRuntimeErrors:
    """How PyTorch's own errors from forward and backward become hints."""

    def test_too_few_gradients(self, raises_hint):
        """Are the inputs that still need a None named?"""
        inputs = make_inputs({"x1": x_of(3), "x2": x_of(3), "w1": 0.5, "w2": 2.0})
        forward = run_forward(mistake("WeightedSum", "two gradients for four inputs"), WEIGHTED_SUM,
                              inputs)
        with raises_hint("backward returned 2 gradients for 4 inputs: return None for w1 and w2"):
            run_backward(WEIGHTED_SUM, forward.output, inputs, torch.ones(3, dtype=torch.float64))

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
        with raises_hint("grad_x2 has shape (2,) but x2 has shape (3,): a gradient must have"):
            run_backward(WEIGHTED_SUM, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_wrong_device_from_the_engine(self, raises_hint):
        """Is the engine's device error, worded as PyTorch words it, turned into the hint?"""
        error = RuntimeError("Function MyLinearFunctionBackward returned an invalid gradient at "
                             "index 1 - expected device cuda:0 but got cpu")
        with raises_hint("grad_weight is on cpu but weight is on cuda:0: create new tensors on "
                         "the input's device"):
            raise checks._explain_runtime_error(MY_LINEAR, "backward", error)

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


class TestMakeInputs:
    """make_inputs and reference_gradients."""

    def test_fresh_leaves(self):
        """Are tensors copied into fresh leaves that require grad, the originals untouched?"""
        original = x_of(3)
        made = make_inputs({"x": original, "scale": 2.0})
        assert made["x"].is_leaf and made["x"].requires_grad and made["scale"] == 2.0
        assert made["x"].data_ptr() != original.data_ptr() and not original.requires_grad

    def test_chosen_inputs_require_grad(self):
        """Does a set of names choose which inputs require grad?"""
        made = make_inputs({"x": x_of(3), "weight": x_of(2, 3)}, requires_grad={"weight"})
        assert not made["x"].requires_grad and made["weight"].requires_grad

    def test_integer_tensors_never_require_grad(self):
        """Can an integer tensor pass through without autograd refusing it?"""
        made = make_inputs({"index": torch.arange(3)})
        assert not made["index"].requires_grad

    def test_reference_gradients_fill_unused_with_zeros(self):
        """Is an input the reference does not use given a zero gradient?"""
        inputs = make_inputs({"x1": x_of(3), "x2": x_of(3), "w1": 0.5, "w2": 0.0})
        truth = reference_gradients(WEIGHTED_SUM, inputs, torch.ones(3, dtype=torch.float64))
        assert set(truth) == {"x1", "x2"}
        torch.testing.assert_close(truth["x1"], torch.full((3,), 0.5, dtype=torch.float64))


class TestCheckValuesAndGradients:
    """check_values_and_gradients: forward, every gradient, and nothing written in place."""

    def test_returns_both_traces(self):
        """Does a correct Function pass and hand back what it saved and what backward did?"""
        forward, backward = check_values_and_gradients(SQUARE_SOLUTION, SQUARE, {"x": x_of(4)})
        assert [s.role for s in forward.saved] == ["input x"]
        assert len(backward.grads) == 1

    def test_wrong_forward(self, raises_hint):
        """Is a wrong forward reported before any gradient?"""
        with raises_hint("Square's output is wrong"):
            check_values_and_gradients(mistake("Square", "forward computes x ** 3"), SQUARE,
                                       {"x": x_of(4)})

    def test_grad_output_in_place(self, raises_hint):
        """Is masking grad_output in place caught?"""
        with raises_hint("backward modified grad_output in place"):
            check_values_and_gradients(mistake("MyReLU", "masks grad_output in place"), MY_RELU,
                                       {"x": x_of(6)})

    def test_input_in_place(self, raises_hint):
        """Is clamping the input in place caught, naming the input?"""
        with raises_hint("MyReLU modified its input x in place: inputs must stay untouched"):
            check_values_and_gradients(mistake("MyReLU", "x.clamp_ in forward"), MY_RELU,
                                       {"x": x_of(6)})

    def test_wrong_gradient_is_diagnosed(self, raises_hint):
        """Does a wrong gradient reach diagnose_gradient with the input's name?"""
        with raises_hint("your gradient for x is off by a constant factor 2.5"):
            check_values_and_gradients(mistake("Square", "constant factor 5x"), SQUARE,
                                       {"x": x_of(4)})

    def test_float32_tolerances(self):
        """Does a correct Function pass in float32 with float32 tolerances?"""
        check_values_and_gradients(solution("MySigmoid"), MY_SIGMOID, {"x": x_of(3, 4).float()},
                                   rtol=1e-5, atol=1e-6)


class TestCheckGradcheck:
    """check_gradcheck: torch.autograd.gradcheck, its failure turned into a hint."""

    def test_correct_passes(self):
        """Does gradcheck pass a correct Function with a float argument?"""
        check_gradcheck(solution("WeightedSum"), WEIGHTED_SUM,
                        {"x1": x_of(3), "x2": x_of(3, seed=1), "w1": 0.5, "w2": -2.0})

    def test_wrong_backward(self, raises_hint):
        """Is a gradcheck failure a GradingError (not an AttributeError from the except clause)?"""
        with raises_hint("gradcheck failed for Square: the analytic Jacobian differs from the "
                         "numerical one") as info:
            check_gradcheck(mistake("Square", "constant factor 5x"), SQUARE, {"x": x_of(3)})
        assert "Jacobian mismatch" in str(info.value)


class TestStructuralChecks:
    """check_no_ctx_tensors, check_backward_by_hand and check_version_tracking."""

    def test_ctx_tensor(self, raises_hint):
        """Is ctx.mask = mask named, with the fix, and no reference cycle claimed for it?"""
        forward = run_forward(mistake("MyReLU", "mask kept as ctx.mask"), MY_RELU,
                              make_inputs({"x": x_of(3)}))
        with raises_hint("MyReLU stores a tensor as ctx.mask: use ctx.save_for_backward") as info:
            check_no_ctx_tensors(MY_RELU, forward)
        assert "cycle" not in str(info.value)

    def test_ctx_output_makes_a_cycle(self, raises_hint):
        """Is an output kept on ctx, the one case that makes a reference cycle, told so?"""
        forward = run_forward(mistake("MySigmoid", "output kept as ctx.y"), MY_SIGMOID,
                              make_inputs({"x": x_of(3)}))
        with raises_hint("ctx.y is the output, whose grad_fn is ctx: a reference cycle"):
            check_no_ctx_tensors(MY_SIGMOID, forward)

    def test_no_ctx_tensor(self):
        """Does a Function with only float attributes on ctx pass?"""
        forward = run_forward(solution("ScaledSigmoid"), SCALED_SIGMOID,
                              make_inputs({"x": x_of(3), "scale": 2.0}))
        check_no_ctx_tensors(SCALED_SIGMOID, forward)

    def backward_of(self, function):
        inputs = make_inputs({"x": x_of(3)})
        forward = run_forward(function, MY_SIGMOID, inputs)
        return run_backward(MY_SIGMOID, forward.output, inputs, torch.ones(3, dtype=torch.float64))

    def test_reentry(self, raises_hint):
        """Is torch.autograd.grad inside backward named?"""
        with raises_hint("MySigmoid.backward calls torch.autograd.grad: write the gradient "
                         "formula by hand"):
            check_backward_by_hand(MY_SIGMOID, self.backward_of(
                mistake("MySigmoid", "asks autograd inside backward")))

    def test_builtin_backward_op(self, raises_hint):
        """Is torch.ops.aten.sigmoid_backward named?"""
        with raises_hint("MySigmoid.backward uses the built-in op sigmoid_backward"):
            check_backward_by_hand(MY_SIGMOID, self.backward_of(
                mistake("MySigmoid", "built-in sigmoid_backward")))

    def test_by_hand_passes(self):
        """Does a hand-written backward pass?"""
        check_backward_by_hand(MY_SIGMOID, self.backward_of(solution("MySigmoid")))

    def test_version_tracking_with_save_for_backward(self):
        """Does writing into a saved output make a correct Function's backward raise?"""
        check_version_tracking(solution("MySigmoid"), MY_SIGMOID, {"x": x_of(4)})

    def test_version_tracking_with_a_view_output(self):
        """Is an output that views forward's own tensor (flattened, reshaped back), which
        autograd refuses to see written, protected too?"""
        check_version_tracking(unusual("MySigmoid", "flattened, then reshaped back: the output "
                                       "is a view"), MY_SIGMOID, {"x": x_of(2, 3)})

    def test_version_tracking_with_ctx_attribute(self, raises_hint):
        """Is an output kept as ctx.y, unprotected by the version counter, caught?"""
        with raises_hint("MySigmoid did not notice its saved output was changed in place: "
                         "save tensors with ctx.save_for_backward"):
            check_version_tracking(mistake("MySigmoid", "output kept as ctx.y"), MY_SIGMOID,
                                   {"x": x_of(4)})

    def test_in_place_saved_tensor_error(self, raises_hint):
        """Is PyTorch's in-place error about a saved tensor turned into a hint?"""
        error = RuntimeError("one of the variables needed for gradient computation has been "
                             "modified by an inplace operation: [torch.DoubleTensor [3]]")
        with raises_hint("a tensor MySigmoid saved was modified in place before backward"):
            raise checks._explain_runtime_error(MY_SIGMOID, "backward", error)
