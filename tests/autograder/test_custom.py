"""An instructor's own exercise (``FunctionExercise``): a correct MyTanh passes, and each named
mistake fails with a hint that names it, in the self-check and in the hidden tests."""

import pytest
import torch

from autograder.custom import FunctionExercise
from autograder.errors import GradingError
from tools.catalogue import load

MY_TANH = FunctionExercise("MyTanh", reference=torch.tanh, saves="output")
PRODUCT = FunctionExercise("Product", reference=lambda x, y: x * y, arguments=("x", "y"),
                           saves="inputs", second_order=True, needs_input_grad=True)

TANH = """
class MyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return {gradient}
"""
TANH_SAVES_INPUT = """
class MyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.tanh(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (1 - torch.tanh(x) ** 2)
"""
TANH_SAVES_DATA = TANH.format(gradient="grad_output * (1 - y * y)").replace(
    "ctx.save_for_backward(y)", "ctx.save_for_backward(y.data)")
TANH_SAVES_DETACHED = TANH.format(gradient="grad_output * (1 - y * y)").replace(
    "ctx.save_for_backward(y)", "ctx.save_for_backward(y.detach())")
PRODUCT_CODE = """
class Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        {body}
"""
PRODUCT_RIGHT = PRODUCT_CODE.format(body="""grad_x = grad_output * y if ctx.needs_input_grad[0] else None
        grad_y = grad_output * x if ctx.needs_input_grad[1] else None
        return grad_x, grad_y""")
PRODUCT_ALWAYS_BOTH = PRODUCT_CODE.format(body="return grad_output * y, grad_output * x")
PRODUCT_ZEROS = PRODUCT_CODE.format(body="""grad_x = grad_output * y if ctx.needs_input_grad[0] else torch.zeros_like(x)
        grad_y = grad_output * x if ctx.needs_input_grad[1] else torch.zeros_like(y)
        return grad_x, grad_y""")

CORRECT = [
    (MY_TANH, TANH.format(gradient="grad_output * (1 - y * y)")),
    (MY_TANH, TANH.format(gradient="grad_output - grad_output * y ** 2")),
    (PRODUCT, PRODUCT_RIGHT),
]
MISTAKES = [
    (MY_TANH, TANH.format(gradient="-grad_output * (1 - y * y)"), "check the sign"),
    (MY_TANH, TANH_SAVES_INPUT, "MyTanh saved its input: save the output instead"),
    (MY_TANH, TANH.format(gradient="1 - y * y"), "grad_output"),
    (MY_TANH, TANH_SAVES_DATA, "did not notice its saved output was changed in place"),
    (MY_TANH, TANH_SAVES_DETACHED, "MyTanh saved an alias of its output y, not y itself"),
    (PRODUCT, PRODUCT_ALWAYS_BOTH, "when only x requires grad, computed as when every input"),
    # learner trial 80: zeros where None belongs are named as zeros, not as work like all's
    (PRODUCT, PRODUCT_ZEROS, "returns a tensor of zeros for y when only x requires grad: a "
                             "tensor of zeros is not None"),
]


@pytest.mark.parametrize("exercise, code", CORRECT)
def test_correct_functions_pass_everything(exercise, code):
    """Does correct code pass the self-check and every hidden check?"""
    function = load(exercise.name, code)
    exercise.self_check(function)
    exercise.grade(function)


@pytest.mark.parametrize("exercise, code, hint", MISTAKES)
def test_each_mistake_gets_its_hint(exercise, code, hint):
    """Does each mistake fail the hidden tests with a first line that names it?"""
    with pytest.raises(GradingError) as failure:
        exercise.grade(load(exercise.name, code))
    assert hint in str(failure.value).splitlines()[0], str(failure.value)


@pytest.mark.parametrize("exercise, code, mistake", [
    (MY_TANH, TANH_SAVES_INPUT, "MyTanh/saves-other-than-output"),
    (MY_TANH, TANH.format(gradient="1 - y * y"), "MyTanh/ignores-grad-output"),
    (MY_TANH, TANH_SAVES_DATA, "MyTanh/saved-untracked"),
    (MY_TANH, TANH_SAVES_DETACHED, "MyTanh/saves-output-alias"),
    (PRODUCT, PRODUCT_ALWAYS_BOTH, "Product/ignores-needs-input-grad"),
    (FunctionExercise("MyTanh", reference=torch.tanh, saves=8), TANH.format(
        gradient="grad_output * (1 - y * y)"), "MyTanh/saves-too-many-bytes"),
    (MY_TANH, TANH.format(gradient="-grad_output * (1 - y * y)"), "MyTanh/wrong-gradient-sign"),
    (MY_TANH, TANH.format(gradient="grad_output * (1 - y)"), "unproven:wrong-value"),
])
def test_each_proven_mistake_has_an_id(exercise, code, mistake):
    """Does each mistake a check of the instructor's exercise proves carry an id of that
    exercise (so insight groups it), and a value that only differs none?"""
    from autograder.mistakes import mistake_of

    with pytest.raises(GradingError) as failure:
        exercise.grade(load(exercise.name, code))
    assert mistake_of(failure.value) == mistake


@pytest.mark.parametrize("exercise, code, hint", MISTAKES[:3])
def test_the_self_check_names_the_same_mistakes(exercise, code, hint):
    """Does the quick self-check catch the mistakes a learner makes first, with the same hint?"""
    with pytest.raises(GradingError) as failure:
        exercise.self_check(load(exercise.name, code))
    assert hint in str(failure.value).splitlines()[0], str(failure.value)


def test_a_hint_names_the_failing_case():
    """Does the hint say which shape and dtype failed?"""
    with pytest.raises(GradingError, match=r"with x of shape \(5,\), float64"):
        MY_TANH.grade(load("MyTanh", TANH.format(gradient="-grad_output * (1 - y * y)")))


def test_a_bad_spec_is_refused():
    """Does a typo in the spec fail when the instructor writes it, not when a learner runs it?"""
    with pytest.raises(ValueError, match="saves must be one of"):
        FunctionExercise("MyTanh", reference=torch.tanh, saves="outputs")
    with pytest.raises(ValueError, match="not among"):
        FunctionExercise("Scale", reference=lambda x, s: s * x, arguments=("x", "s"),
                         constants={"scale": 2.0})


SCALE = FunctionExercise("Scale", reference=lambda x, scale: scale * x, arguments=("x", "scale"),
                         constants={"scale": 2.0}, ranges={"scale": (-3.0, 5.0)})
SCALE_ON_THE_CLASS = """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        Scale.scale = scale
        return scale * x

    @staticmethod
    def backward(ctx, grad_output):
        return Scale.scale * grad_output, None
"""


def test_a_constant_kept_on_the_class_fails_an_instructors_exercise_too():
    """Does an instructor's exercise get the generated checks: a constant on the class named?"""
    with pytest.raises(GradingError, match="Scale.forward sets Scale.scale"):
        SCALE.self_check(load("Scale", SCALE_ON_THE_CLASS))
    SCALE.grade(load("Scale", SCALE_ON_THE_CLASS.replace("Scale.scale = scale", "ctx.scale = scale")
                     .replace("Scale.scale *", "ctx.scale *")))


def test_a_range_for_an_unknown_constant_is_refused():
    """Is a range given for a name that is not a constant refused when the exercise is made?"""
    with pytest.raises(ValueError, match=r"ranges \['x'\] are not among the constants"):
        FunctionExercise("Scale", reference=lambda x: x, ranges={"x": (0.0, 1.0)})
