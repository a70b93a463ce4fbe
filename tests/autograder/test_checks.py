"""autograder.checks: the checks every exercise is built from, one at a time."""

import pytest
import torch

from autograder.checks import (_layouts, check_backward_by_hand, check_gradcheck,
                               check_is_function, check_layout_untouched,
                               check_no_ctx_tensors, check_values_and_gradients,
                               check_version_tracking, make_inputs, reference_gradients,
                               run_backward, run_forward)
from autograder.errors import GradingError
from autograder.exercises.lesson01_sigmoid.sigmoid import MY_RELU, MY_SIGMOID, SCALED_SIGMOID
from autograder.exercises.lesson00_template.template import SQUARE, WEIGHTED_SUM
from tests.autograder.catalogued import mistake, unusual
from tools.solutions import solution


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
        """Is masking grad_output in place caught, with no op suggested (issue 48: lesson 01
        teaches torch.where, since inf * 0 = nan)?"""
        with raises_hint("backward modified grad_output in place") as info:
            check_values_and_gradients(mistake("MyReLU", "masks grad_output in place"), MY_RELU,
                                       {"x": x_of(6)})
        assert "such as *" not in str(info.value)

    def test_input_in_place(self, raises_hint):
        """Is clamping the input in place caught, naming the input and the method, before the
        output is compared (with the input's values as they were)?"""
        with raises_hint("MyReLU.forward modified its input x in place: inputs must stay "
                         "untouched"):
            check_values_and_gradients(mistake("MyReLU", "x.clamp_ in forward"), MY_RELU,
                                       {"x": x_of(6)})
        with raises_hint("MyReLU.backward modified its input x in place"):
            check_values_and_gradients(mistake("MyReLU", "overwrites the saved input in backward"),
                                       MY_RELU, {"x": x_of(6)})

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


class TestLayoutUntouched:
    """check_layout_untouched names the in-place op that changed grad_output's layout."""

    @pytest.mark.parametrize("shape, change, named", [
        ((2, 3), lambda g: g.unsqueeze_(1), "unsqueeze_ does that"),
        ((1, 6), lambda g: g.squeeze_(0), "squeeze_ does that"),
        ((2, 3), lambda g: g.t_(), "t_ or transpose_ does that"),
        ((2, 3), lambda g: g.as_strided_((2, 3), (1, 2)), "as_strided_ or resize_ does that"),
    ], ids=["unsqueeze_", "squeeze_", "t_", "as_strided_"])
    def test_the_op_is_named(self, shape, change, named):
        grad_output = torch.zeros(shape)
        before = _layouts(grad_output)
        change(grad_output)
        with pytest.raises(GradingError, match=named):
            check_layout_untouched(SQUARE, grad_output, before)


class TestRaisedWithTheCall:
    """Instructor trial 82: "CrossEntropy raised IndexError: Dimension out of range" said no
    input at all. An error the learner's forward or backward raises, left in its own words,
    is marked with the call, which the verdict's and the self-check's first line say."""

    @staticmethod
    def _square(forward: str, backward: str = "return 2 * x * g"):
        namespace = {"torch": torch}
        exec("class Square(torch.autograd.Function):\n"
             "    @staticmethod\n    def forward(ctx, x):\n"
             f"        ctx.save_for_backward(x)\n        {forward}\n"
             "    @staticmethod\n    def backward(ctx, g):\n"
             f"        x, = ctx.saved_tensors\n        {backward}\n", namespace)
        return namespace["Square"]

    def test_forward_and_backward_errors_name_their_call(self):
        from autograder.failure import headline
        from autograder.mistakes import mistake_of, raised_message

        for function, phase, key in [
                (self._square("return {}['x'] * x"), "forward", "'x'"),
                (self._square("return x * x", "return {}['g'] * x"), "backward", "'g'")]:
            inputs = make_inputs({"x": x_of(3, 2)})
            with pytest.raises(KeyError) as info:
                output = run_forward(function, SQUARE, inputs).output
                run_backward(SQUARE, output, inputs, torch.ones_like(output))
            assert raised_message("Square", info.value) == \
                f"Square.{phase} raised KeyError with x of shape (3, 2): {key}"
            assert headline("Square", info.value) == raised_message("Square", info.value)
            assert mistake_of(info.value) == "raised:KeyError"
