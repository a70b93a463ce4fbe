"""Every exercise declares its contract's domain; the checks generated from it. (That grading
runs every property a domain implies: tests/autograder/test_catalogue.py.)"""

import math

import pytest
import torch

from autograder.domain import Constant, Domain
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from tools.solutions import solution


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_exercise_declares_its_domain(name):
    """Does every exercise state its domain, each property with the clause it enforces?"""
    domain = EXERCISES[name].domain
    assert domain is not None, f"{name} declares no domain"
    clauses = domain.clauses()
    assert list(clauses) == domain.properties()
    without = [prop for prop, clause in clauses.items() if not clause.strip()]
    assert not without, f"{name}'s checks {without} name no contract clause"


def test_every_domain_property_is_listed(capsys):
    """Which generated properties run for which exercise? (printed with -s; always passes
    once every exercise declares a domain)."""
    for name, exercise in EXERCISES.items():
        if exercise.domain is not None:
            print(f"{name}: {', '.join(exercise.domain.properties())}")


def test_constants_reach_both_ends_and_a_point_off_every_power_of_two():
    """Does a constant's range give its ends and a point no power of two lands on?"""
    low, inside, high = Constant(1e-4, 10.0, "max_norm > 0").points()
    assert (low, high) == (1e-4, 10.0)
    assert not math.log2(inside).is_integer() and low < inside < high
    assert Constant(-2.0, 8.0, "any float", also=(1e-3,)).points()[-1] == 1e-3
    assert Constant(-3, 5, "an int", integer=True).points() == (-3, 0, 5)


SQUARE = EXERCISES["Square"]


def _answer(forward_body: str, backward_body: str, name="Square"):
    namespace = {"torch": torch}
    exec(f"class {name}(torch.autograd.Function):\n"
         f"    @staticmethod\n    def forward(ctx, x):\n        {forward_body}\n"
         f"    @staticmethod\n    def backward(ctx, g):\n        {backward_body}\n", namespace)
    return namespace[name]


def _domain_only(exercise: Exercise) -> Exercise:
    return Exercise(exercise.name, exercise.lesson, lambda submission, device: None,
                    domain=exercise.domain)


def test_a_value_kept_on_the_class_is_named(raises_hint):
    """Is a Function that keeps its input on the class told which attribute it set?"""
    answer = _answer("Square.last = x\n        return x * x", "return 2 * Square.last * g")
    with raises_hint("Square.forward sets Square.last: a class attribute is shared by every "
                     "call"):
        _domain_only(SQUARE).run(answer)


def test_a_view_that_assumes_contiguous_memory_fails_on_a_transposed_input(raises_hint):
    """Is ``.view(-1)`` on a gradient caught by a transposed input, the clause quoted?"""
    answer = _answer("ctx.save_for_backward(x)\n        return x * x",
                     "x, = ctx.saved_tensors\n        return (2 * x * g).view(-1).view(x.shape)")
    with raises_hint("view size is not compatible"):
        _domain_only(SQUARE).run(answer)
    with pytest.raises(AssertionError, match="transposed inputs; contract: `x` in any layout"):
        _domain_only(SQUARE).run(answer)


def test_a_float32_intermediate_saved_for_float64_inputs_is_named(raises_hint):
    """Is a statistic saved in float32 for float64 inputs named as a precision loss?"""
    answer = _answer("ctx.save_for_backward((2 * x).float())\n        return x * x",
                     "two_x, = ctx.saved_tensors\n        return two_x.to(g.dtype) * g")
    with raises_hint("Square saved a float32 tensor of shape (3, 4) for float64 inputs"):
        _domain_only(SQUARE).run(answer)


def test_a_float64_copy_of_a_float32_input_is_named(raises_hint):
    """Is x saved as float64 for float32 x ("for accuracy") named as new memory that holds no
    digit x lacks? The no-narrower rule alone lets it pass."""
    answer = _answer("ctx.save_for_backward(x.double())\n        return x * x",
                     "x, = ctx.saved_tensors\n        return (2 * x * g).to(g.dtype)")
    with raises_hint("Square saved x as a float64 copy (96 bytes) for float32 inputs"):
        _domain_only(SQUARE).run(answer)


@pytest.mark.parametrize("narrow", ["float", "half"])
def test_a_sign_saved_in_a_narrower_dtype_passes(narrow):
    """Does a sign saved as float32 (or float16) for float64 inputs pass the domain's rule? Its
    values lose no digits, and Square's contract names no dtype for what is saved. (MyReLU's
    contract now names torch.bool for its mask: lesson 01's own checks judge that.)"""
    sign = _answer(f"ctx.save_for_backward(x, torch.sign(x).{narrow}())\n        return x * x",
                   "x, sign = ctx.saved_tensors\n        return 2 * sign * x.abs() * g")
    _domain_only(SQUARE).run(sign)


def test_a_whole_number_saved_in_a_narrower_dtype_passes():
    """Does a constant 2 saved as a float32 tensor for float64 inputs pass? float32 holds it
    exactly, so no digit was lost (a statistic's digits are: the test above)."""
    two = _answer("ctx.save_for_backward(x, torch.tensor(2.0))\n        return x * x",
                  "x, two = ctx.saved_tensors\n        return two * x * g")
    _domain_only(SQUARE).run(two)


def test_a_constant_forward_replaces_with_its_own_is_named(raises_hint):
    """Is an RMSNormFunction that adds eps = 1e-6 whatever eps it is given told it ignores the
    eps it was given, not that a step ran in float32 (at eps = 1e-12 its output is 1e-7 off)?"""
    namespace = {"torch": torch}
    exec("class RMSNormFunction(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x, weight, eps):\n"
         "        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6)\n"
         "        ctx.save_for_backward(x, weight, rstd)\n"
         "        return x * rstd * weight\n"
         "    @staticmethod\n"
         "    def backward(ctx, g):\n"
         "        x, weight, rstd = ctx.saved_tensors\n"
         "        x_hat, gw = x * rstd, g * weight\n"
         "        grad_x = rstd * (gw - x_hat * (gw * x_hat).mean(-1, keepdim=True))\n"
         "        grad_weight = (g * x_hat).reshape(-1, x.shape[-1]).sum(0)\n"
         "        return grad_x, grad_weight, None\n", namespace)
    with raises_hint("RMSNormFunction gives the same output for eps=1e-12 as for eps=1e-05"):
        _domain_only(EXERCISES["RMSNormFunction"]).run(namespace["RMSNormFunction"])


def test_a_constant_shared_between_calls_is_named(raises_hint):
    """Is a weight kept in a module global named by the two-calls probe?"""
    namespace = {"torch": torch}
    exec("SHARED = {}\n"
         "class WeightedSum(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x1, x2, w1, w2):\n"
         "        SHARED['w'] = (w1, w2)\n"
         "        return w1 * x1 + w2 * x2\n"
         "    @staticmethod\n"
         "    def backward(ctx, g):\n"
         "        w1, w2 = SHARED['w']\n"
         "        return w1 * g, w2 * g, None, None\n", namespace)
    with raises_hint("WeightedSum's backward used another call's w1, w2"):
        _domain_only(EXERCISES["WeightedSum"]).run(namespace["WeightedSum"])


def test_an_optional_input_s_flag_in_a_global_is_named(raises_hint):
    """Is a bias flag kept in a module global named by the two-calls probe, whose second call
    leaves the optional bias out, once each call alone is proven right?"""
    namespace = {"torch": torch}
    exec("HAS_BIAS = False\n"
         "class MyLinearFunction(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x, weight, bias=None):\n"
         "        global HAS_BIAS\n"
         "        HAS_BIAS = bias is not None\n"
         "        ctx.save_for_backward(x, weight)\n"
         "        out = x @ weight.T\n"
         "        return out + bias if HAS_BIAS else out\n"
         "    @staticmethod\n"
         "    def backward(ctx, g):\n"
         "        x, weight = ctx.saved_tensors\n"
         "        rows = g.reshape(-1, g.shape[-1])\n"
         "        grad_weight = rows.T @ x.reshape(-1, x.shape[-1])\n"
         "        grad_bias = rows.sum(0) if HAS_BIAS else None\n"
         "        return g @ weight, grad_weight, grad_bias\n", namespace)
    with raises_hint("MyLinearFunction is right for each call alone but not for two calls in "
                     "one graph"):
        _domain_only(EXERCISES["MyLinearFunction"]).run(namespace["MyLinearFunction"])


def test_the_green_line_says_what_a_cpu_run_did_not_exercise(monkeypatch):
    """Does a passing exercise whose contract names CUDA behaviour say it was not tried?"""
    monkeypatch.setenv("AUTOGRADER_DEVICE", "cpu")
    exercise = Exercise("Square", "00_template", lambda s, d: None,
                        domain=Domain(SQUARE.domain.spec, SQUARE.domain.values,
                                      cuda="the CUDA random state restored"))
    message = exercise.passed_message(exercise.run(solution("Square")))
    assert message.endswith("; not exercised without a GPU: the CUDA random state restored")
    assert exercise.passed_message([torch.device("cuda")]).endswith("on CUDA")


def test_a_default_that_takes_the_inputs_outside_the_contract_is_never_run():
    """CrossEntropy at ignore_index=-62 has targets of -62, out of range under the default -100:
    is the learner's forward left uncalled there (on CUDA the out-of-range gather is a
    device-side assert that stops every later check of the process), and the reference refused
    on the CPU instead?"""
    from autograder.comparison import fresh_leaves
    from autograder.exercises import EXERCISES
    from autograder.properties import _check_constant_used
    from tools.solutions import solution

    solved, seen = solution("CrossEntropy"), []

    class Recorded(solved):
        @staticmethod
        def forward(ctx, logits, target, ignore_index=-100):
            seen.append(ignore_index)
            return solved.forward(ctx, logits, target, ignore_index)

    domain = EXERCISES["CrossEntropy"].domain
    inputs = fresh_leaves(domain.values("cpu", ignore_index=-62))
    assert (inputs["target"] == -62).any()
    _check_constant_used(domain, Recorded, inputs, "ignore_index", -100)
    assert seen == []


def test_a_backward_that_views_grad_output_flat_is_named_for_its_layout(raises_hint):
    """Is ``grad_output.view(-1)`` in backward, which every contiguous grad_output lets pass,
    named for the transposed grad_output it raises on (as ``(y.t() * w).sum()`` hands one)?"""
    answer = _answer("ctx.save_for_backward(x)\n        return x * x",
                     "x, = ctx.saved_tensors\n"
                     "        return (2 * x.reshape(-1) * g.view(-1)).view(x.shape)")
    with raises_hint("Square.backward assumes a contiguous grad_output: it raised when "
                     "grad_output was transposed"):
        _domain_only(SQUARE).run(answer)


def test_a_backward_that_reads_grad_output_s_memory_is_named_for_its_layout(raises_hint):
    """Is a backward that reads grad_output's storage in the output's order (as_strided with
    a contiguous tensor's strides) named as wrong, not raising, for a transposed grad_output?"""
    answer = _answer("ctx.save_for_backward(x)\n        return x * x",
                     "x, = ctx.saved_tensors\n"
                     "        return 2 * x * g.as_strided(g.shape, g.contiguous().stride())")
    with raises_hint("Square.backward assumes a contiguous grad_output: it was wrong when "
                     "grad_output was transposed") as info:
        _domain_only(SQUARE).run(answer)
    assert info.value.mistake == "Square/assumes-contiguous-grad-output"


def test_grad_output_layouts_by_the_output_s_dims():
    """Transposed for two or more dims, a stride-2 slice for one, none for a 0-d output; and a
    domain that rules the property out does not list it."""
    from autograder.grad_output_layout import strided_like

    generator = torch.Generator().manual_seed(0)
    for shape, strides in (((2, 3, 4), (12, 1, 3)), ((5,), (2,))):
        grad_output, how = strided_like(torch.zeros(shape), generator)
        assert grad_output.shape == shape and grad_output.stride() == strides, how
    assert strided_like(torch.zeros(()), generator) is None
    assert "grad_output layout" in SQUARE.domain.properties()
    off = Domain(SQUARE.domain.spec, SQUARE.domain.values, strided_grad_output=False)
    assert "grad_output layout" not in off.properties()
