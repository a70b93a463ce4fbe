"""Lesson 04 (double backward): grading SwishFunction and CubeOnce, right and wrong."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.lesson04_double_backward.double_backward import (SHAPES, SWISH,
                                                                           check_gradgradcheck,
                                                                           swish_values)
from autograder.exercises.lesson04_double_backward.second_derivatives import (
    check_differentiable_backward)
from tests.autograder.catalogued import graded_mistake, mistake, unusual
from tests.autograder.exercises.battery import run
from tools.solutions import solution

NAMES = ["SwishFunction", "CubeOnce"]


def test_intermediate_returned_as_output_passes(device):
    """Is the other fix, returning sigmoid(beta * x) as an extra output, accepted too?"""
    EXERCISES["SwishFunction"].battery(
        unusual("SwishFunction", "the sigmoid returned as a second output and wrapped"), device)


def test_no_zero_dimensional_x_among_the_shared_shapes():
    """Is a 0-d x left out of the shapes both exercises share? SwishFunction's contract names
    none; CubeOnce's names one, and its battery tries it in a case of its own."""
    assert () not in SHAPES


SWISH_MISTAKES = [
    (mistake("SwishFunction", "saves the intermediate sigmoid"),
     "SwishFunction saved an intermediate of shape (6,) (such as sigmoid(beta * x)) with "
     "save_for_backward; forward runs without autograd, so to double backward it is a constant"),
    (mistake("SwishFunction", "detaches in backward"), "x is cut off from autograd in SwishFunction's backward: autograd finds no path from x"),
    (mistake("SwishFunction", "backward under torch.no_grad()"), "grad_x from SwishFunction's backward is cut off from autograd"),
    (mistake("SwishFunction", "@once_differentiable on a differentiable backward"),
     "SwishFunction's backward is marked @once_differentiable, so it cannot be differentiated "
     "again: a second backward through it raised the mark's error"),
    (mistake("SwishFunction", "None for beta"),
     "backward returned None for beta, which requires grad: return grad_beta"),
    (mistake("SwishFunction", "beta.item()"), "SwishFunction keeps beta as a Python number (ctx.beta, from .item() or "
     "float()): double backward cannot differentiate through a number"),
    (mistake("SwishFunction", "grad_beta misses a factor x"), "your gradient for beta is wrong"),
    (mistake("SwishFunction", "tensors on ctx"), "SwishFunction stores a tensor as ctx.x, ctx.beta: use "
     "ctx.save_for_backward"),
]


def _id(value):
    return getattr(value, "__name__", "")


@pytest.mark.parametrize("mistake, hint", SWISH_MISTAKES, ids=_id)
def test_swish_mistake_named_by_quick(mistake, hint, raises_hint):
    """Does the visible self-check already name each SwishFunction mistake?"""
    with raises_hint(hint):
        run("SwishFunction", mistake)


@pytest.mark.parametrize("mistake, hint", SWISH_MISTAKES, ids=_id)
def test_swish_mistake_named_by_full(mistake, hint, device, raises_hint):
    """Do the hidden checks name each SwishFunction mistake, on every device?"""
    with raises_hint(hint.replace("(5,)", "(6,)")):
        run("SwishFunction", mistake, device)


def test_detaching_swish_loses_the_exercise_on_grading(raises_hint):
    """Does grading fail the syllabus's example mistake (a backward that detaches)?"""
    with raises_hint("x is cut off from autograd in SwishFunction's backward"):
        EXERCISES["SwishFunction"].run(mistake("SwishFunction", "detaches in backward"))


@pytest.mark.parametrize("mistake", [mistake("SwishFunction", "saves the intermediate sigmoid"), mistake("SwishFunction", "detaches in backward"), mistake("SwishFunction", "beta.item()")])
def test_gradgradcheck_also_catches_second_order_mistakes(mistake, raises_hint):
    """Does gradgradcheck, the final check, fail what the second-order diagnosis names?"""
    with raises_hint("gradgradcheck failed for SwishFunction"):
        check_gradgradcheck(mistake, SWISH, swish_values((3,), "cpu"), ["x", "beta"])


def test_gradgradcheck_with_beta_fixed_passes_a_beta_item_swish():
    """With beta not requiring grad, is a Swish that keeps beta as a number still right?"""
    check_gradgradcheck(mistake("SwishFunction", "beta.item()"), SWISH, swish_values((3,), "cpu"), ["x"])
    check_differentiable_backward(mistake("SwishFunction", "beta.item()"), SWISH, swish_values((3,), "cpu"), ["x"])


CUBE_MISTAKES = [
    (mistake("CubeOnce", "forgets @once_differentiable"),
     "a second backward through CubeOnce succeeded: its backward is not marked "
     "@once_differentiable"),
    (mistake("CubeOnce", "detaches instead"), "a second backward through CubeOnce raised \"element 0 of tensors does not "
     "require grad and does not have a grad_fn\": your backward is not marked @once_differentiable"),
    (mistake("CubeOnce", "3x instead of 3x^2"), "your gradient for x is wrong"),
    (mistake("CubeOnce", "no NumPy at all: g * 3 * x ** 2 under the mark (review 75)"),
     "CubeOnce.backward computes with torch ops (mul, pow, mul)"),
    (mistake("CubeOnce", "@once_differentiable above @staticmethod, saves 3x^2 made with torch "
             "in forward"), "CubeOnce.forward saves a tensor it computed with torch ops"),
]


@pytest.mark.parametrize("mistake, hint", CUBE_MISTAKES, ids=_id)
def test_cube_mistake_named_by_quick(mistake, hint, raises_hint):
    """Does the visible self-check already name each CubeOnce mistake?"""
    with raises_hint(hint):
        run("CubeOnce", mistake)


@pytest.mark.parametrize("mistake, hint", CUBE_MISTAKES + [
    (mistake("CubeOnce", "x kept on ctx"), "CubeOnce stores a tensor as ctx.x: use ctx.save_for_backward"),
], ids=_id)
def test_cube_mistake_named_by_full(mistake, hint, device, raises_hint):
    """Do the hidden checks name each CubeOnce mistake, on every device?"""
    with raises_hint(hint):
        run("CubeOnce", mistake, device)


def test_missing_once_differentiable_loses_the_exercise_on_grading(raises_hint):
    """Does grading fail a CubeOnce without the decorator on every device?"""
    with raises_hint("its backward is not marked @once_differentiable"):
        EXERCISES["CubeOnce"].run(mistake("CubeOnce", "forgets @once_differentiable"))


def test_once_differentiable_needs_a_grad_output_that_requires_grad():
    """Why the check differentiates with a grad_output that requires grad: with a constant one,
    @once_differentiable returns a plain tensor and its clear error never fires."""
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    grad_x, = torch.autograd.grad(solution("CubeOnce").apply(x).sum(), x, create_graph=True)
    assert not grad_x.requires_grad
    grad_output = torch.ones(3, dtype=torch.float64, requires_grad=True)
    grad_x, = torch.autograd.grad(solution("CubeOnce").apply(x), x, grad_output, create_graph=True)
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        grad_x.sum().backward()


@pytest.mark.parametrize("name", NAMES)
def test_stub_raises_not_implemented(name):
    """Does an untouched stub raise NotImplementedError itself, as learners' copies expect?"""

    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        run(name, Stub)




def test_a_float32_step_cast_back_is_named_by_the_dtype_of_a_step(device, raises_hint):
    """Is a backward that computes sigmoid in float32 and casts it back to float64 named by the
    float32 tensor one of its steps returned, where no gradient it returns is a float32 number
    and the second derivative in beta alone is what comes out wrong?"""
    cast_back = mistake("SwishFunction",
                        "sigmoid computed in float32 and cast back, for float64 inputs")
    with raises_hint("SwishFunction's backward computes in float32 for float64 inputs: with "
                     "every input float64, its cast (.float() or .to(torch.float32)) returned "
                     "a float32 tensor, and its sigmoid then ran in float32"):
        check_differentiable_backward(cast_back, SWISH, swish_values((4,), device), ["beta"])


def test_kink_hint_blames_no_detach():
    """Does the exp(-abs(z)) Swish's message keep only the numbers of the general failure, not its
    guess of a .detach(), .data or no_grad that this backward does not have?"""
    kinked = mistake("SwishFunction", "sigmoid recomputed from exp(-|z|) with torch.where: wrong "
                     "second derivative at x = 0")
    with pytest.raises(AssertionError) as caught:
        run("SwishFunction", kinked)
    message = str(caught.value)
    assert "right everywhere but at x = 0" in message and "largest error" in message
    assert ".detach()" not in message and "no_grad" not in message


def _gradient_penalty_check(answer):
    """The lesson's check_gradient_penalty (its ungraded try-it), run on ``answer``."""
    from pathlib import Path
    source = (Path(__file__).parents[4] / "lessons" / "04_double_backward.py").read_text()
    start = source.index("def check_gradient_penalty")
    namespace = {"torch": torch, "SwishFunction": solution("SwishFunction"),
                 "gradient_penalty": answer}
    exec(source[start:source.index("\ncheck_gradient_penalty()", start)], namespace)
    namespace["check_gradient_penalty"]()


def _penalty(create_graph):
    def gradient_penalty(x, beta):
        slopes, = torch.autograd.grad(solution("SwishFunction").apply(x, beta).sum(), x,
                                      create_graph=create_graph)
        return ((slopes.norm(dim=1) - 1) ** 2).mean()
    return gradient_penalty


@pytest.mark.lesson04
def test_the_gradient_penalty_try_it_ticks_a_right_penalty_and_names_a_missing_graph(capsys):
    """Does the try-it's check tick a right penalty three times, and say that a penalty built
    without create_graph has no graph?"""
    _gradient_penalty_check(_penalty(create_graph=True))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(line.endswith("✓") for line in lines), lines
    _gradient_penalty_check(_penalty(create_graph=False))
    assert capsys.readouterr().out.startswith("✗ your P has no graph")


@pytest.mark.lesson04
@pytest.mark.parametrize("exercise, name, expected", [
    ("SwishFunction", "saves the intermediate sigmoid", "SwishFunction/saves-intermediate"),
    ("SwishFunction", "beta.item()", "SwishFunction/beta-as-number"),
    ("SwishFunction", "beta.item() inside backward", "SwishFunction/number-in-backward"),
    ("SwishFunction", "backward under torch.no_grad()", "SwishFunction/backward-detached"),
    ("SwishFunction", "@once_differentiable on a differentiable backward",
     "SwishFunction/once-differentiable"),
    ("SwishFunction", "in-place op in backward", "SwishFunction/in-place-in-backward"),
    ("SwishFunction", "s = y / x: NaN where x = 0", "SwishFunction/divides-by-x"),
    ("SwishFunction", "sigmoid recomputed from exp(-|z|) with torch.where: wrong second "
     "derivative at x = 0", "SwishFunction/kink-at-zero"),
    ("SwishFunction", "detaches in backward", "SwishFunction/input-cut-off"),
    ("SwishFunction", "needs_input_grad indices swapped", "SwishFunction/gate-on-wrong-entry"),
    ("SwishFunction", "None for beta", "SwishFunction/returns-none-gradient"),
    ("CubeOnce", "forgets @once_differentiable", "CubeOnce/not-once-differentiable"),
    ("CubeOnce", "detaches instead", "CubeOnce/unmarked-second-backward-raises"),
    ("NumpyTanh", "torch.tanh in forward", "NumpyTanh/torch-in-forward"),
    ("NumpyTanh", "torch arithmetic in backward", "NumpyTanh/torch-in-backward"),
    ("NumpyTanh", "inner backward in torch", "NumpyTanh/torch-in-inner-backward"),
    ("NumpyTanh", "a NumPy backward and nothing more", "NumpyTanh/backward-detached"),
    ("NumpyTanh", "once_differentiable", "NumpyTanh/once-differentiable"),
    ("NumpyTanh", "inner backward returns one gradient", "NumpyTanh/inner-gradient-count"),
    ("NumpyTanh", "inner backward returns its two gradients swapped",
     "NumpyTanh/inner-gradients-swapped"),
    ("NumpyTanh", "a detached y passed to the inner Function", "NumpyTanh/detaches-saved-tensor"),
    ("NumpyTanh", "a detached grad_output passed to the inner Function",
     "NumpyTanh/detaches-grad-output"),
    ("NumpyTanh", "forward saves a second torch.from_numpy of the same array",
     "NumpyTanh/saves-copy-of-output"),
    ("NumpyTanh", "forward saves x.detach()", "NumpyTanh/saves-detached-input"),
    ("NumpyTanh", "the inner Function keeps g and y as ctx attributes",
     "NumpyTanh/inner-tensor-on-ctx"),
    ("NumpyTanh", "forward writes tanh into x through .numpy() (np.tanh(a, out=a))",
     "NumpyTanh/writes-through-numpy"),
    ("NumpyTanh", "x saved and used as y", "NumpyTanh/uses-x-as-y"),
    ("CubeOnce", "no NumPy at all: g * 3 * x ** 2 under the mark (review 75)",
     "CubeOnce/torch-in-backward"),
    ("CubeOnce", "x * x * x, saves x squared made in torch, 3 * x2 * grad_output in torch",
     "CubeOnce/torch-computes-local"),
    ("NumpyTanh", "inner backward gives y nothing", "unnamed:check"),
    ("SwishFunction", "sigmoid computed in float32 and cast back, for float64 inputs",
     "SwishFunction/float32-step"),
    ("SwishFunction", "saves beta rounded to x's dtype (beta.to(x.dtype))",
     "SwishFunction/saves-rounded-beta"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves in lesson 04 (an intermediate saved, a number in place
    of a tensor, a backward cut from the graph or marked once_differentiable, torch ops where
    NumPy is asked for, a NumPy write, a copy saved) carry a stable id; a second derivative
    that is only wrong, none?"""
    assert graded_mistake(exercise, name) == expected


@pytest.mark.lesson04
def test_a_nan_second_derivative_is_told_from_a_kink_and_located():
    """Does the nan probe name a where with a 0 / 0 branch at x = 0, lesson 01's where-built
    sigmoid at |beta x| = 799.5, an overflowing 1 / (1 + exp(-z)) without a where and a cosh in
    sigma' (by the op it saw return inf, with no advice to use the torch.sigmoid already used),
    each at its own points, and stay silent for a kink (a finite wrong second derivative) and the solution?
    (The probe alone, on the saturation case's values: milliseconds.)"""
    from autograder.errors import GradingError
    from autograder.exercises.lesson04_double_backward.second_derivative_points import (
        name_nan_second_derivative)
    values = {"x": torch.tensor([-615.0, -3.0, 0.0, 0.5, 0.0, 615.0], dtype=torch.float64),
              "beta": torch.tensor(1.3, dtype=torch.float64)}
    expected = {
        "s = where(x == 0, 0.5, y / x): NaN second derivative at x = 0":
            "is nan at x = 0, while the first derivatives there are finite: backward builds s "
            "with a torch.where",
        "lesson 01's where-built sigmoid in backward: NaN second derivatives past |beta x| = 709":
            "is nan at x = -615 and 615, where beta x = -799.5 and 799.5 (float64), while the "
            "first derivatives there are finite: backward builds s with a torch.where",
        "sigmoid as 1 / (1 + exp(-beta x)) in backward: NaN second derivatives once exp "
        "overflows": "is nan at x = -615, where beta x = -799.5 (float64), while the first "
                     "derivatives there are finite: your backward's exp returned inf there",
        "sigma' as 1 / (2 + 2 cosh z): nan second derivatives once cosh overflows":
            "is nan at x = -615 and 615, where beta x = -799.5 and 799.5 (float64), while the "
            "first derivatives there are finite: your backward's cosh returned inf there"}
    earlier = GradingError("the check that failed")
    for name, words in expected.items():
        with pytest.raises(GradingError) as raised:
            name_nan_second_derivative(mistake("SwishFunction", name), SWISH, values, earlier)
        assert words in raised.value.hint and raised.value.mistake == \
            "SwishFunction/nan-second-derivative", (name, raised.value.hint)
        if "cosh" in name:  # s already comes from torch.sigmoid: no advice to use it
            assert "torch.sigmoid" not in raised.value.hint, raised.value.hint
    for silent in (mistake("SwishFunction", "sigmoid recomputed from exp(-|z|) with torch.where: "
                                            "wrong second derivative at x = 0"),
                   solution("SwishFunction")):
        name_nan_second_derivative(silent, SWISH, values, earlier)


@pytest.mark.lesson04
def test_a_wider_beta_is_saved_as_itself():
    """With a float64 beta and a float32 x, does the solution pass the wider-beta case, and is
    a forward that saves beta.to(x.dtype) named by what it saved, though its first derivatives
    are the solution's bit for bit (torch rounds a 0-d beta to x's dtype where they meet)?"""
    from autograder.errors import GradingError
    from autograder.exercises.lesson04_double_backward.swish_wider_beta import check_wider_beta
    rounded = mistake("SwishFunction", "saves beta rounded to x's dtype (beta.to(x.dtype))")
    check_wider_beta(solution("SwishFunction"), SWISH, torch.device("cpu"))
    with pytest.raises(GradingError) as raised:
        check_wider_beta(rounded, SWISH, torch.device("cpu"))
    assert raised.value.mistake == "SwishFunction/saves-rounded-beta"
    assert "saved beta rounded to x's dtype" in raised.value.hint
    x = torch.linspace(-3, 3, 7, dtype=torch.float32, requires_grad=True)
    beta = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    firsts = [torch.autograd.grad(f.apply(x, beta).sum(), (x, beta))
              for f in (solution("SwishFunction"), rounded)]
    assert all(torch.equal(a, b) for a, b in zip(*firsts))
