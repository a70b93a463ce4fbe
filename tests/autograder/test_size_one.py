"""Rule 1, dimensions of size 1: a backward that squeezes its gradient is caught on the shapes
derived from the domain's typical inputs (every dimension of one size cut to 1) and on those a
domain declares; a correct one passes."""

import torch

from autograder.domain import Domain
from autograder.errors import GradingError
from autograder.function_contract import rule_reference
from autograder.narrowed import narrowed
from autograder.size_one import check_size_one, size_one_cases
from autograder.spec import Spec
from tests.autograder.rule_answers import CPU, SQUARE, SQUARE_DOMAIN, function

SQUEEZED = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                    "x, = ctx.saved_tensors\nreturn (2 * x * g).squeeze()")
RIGHT = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                 "x, = ctx.saved_tensors\nreturn 2 * x * g")


def test_the_derived_shapes_cut_one_size_at_a_time():
    """Linear's x (3, 4), weight (5, 4), bias (5,): each size cut to 1 everywhere it occurs,
    so the shapes still agree; a size the reference refuses is left out."""
    spec_values = {"x": torch.randn(3, 4), "weight": torch.randn(5, 4), "bias": torch.randn(5)}
    linear = Domain(Spec("Linear", ("x", "weight", "bias"),
                         lambda x, weight, bias: x @ weight.T + bias),
                    lambda device, dtype=torch.float64, seed=0: spec_values)
    shapes = [tuple(tuple(v.shape) for v in case.values())
              for case in narrowed(linear, spec_values, 1)]
    assert shapes == [((1, 4), (5, 4), (5,)), ((3, 1), (5, 1), (5,)), ((3, 4), (1, 4), (1,))]
    assert [tuple(c["x"].shape) for c in size_one_cases(SQUARE_DOMAIN, CPU)] == [(1, 4), (3, 1)]


def test_a_squeezed_gradient_is_caught(raises_hint):
    with raises_hint("tried dimensions of size 1: x of shape (1, 4)") as info:
        check_size_one(SQUARE_DOMAIN, SQUEEZED, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("values"))


def test_a_correct_answer_passes():
    check_size_one(SQUARE_DOMAIN, RIGHT, CPU)


def test_a_declared_case_is_tried_where_none_is_derived(raises_hint):
    declared = Domain(SQUARE, SQUARE_DOMAIN.values, size_one_derived=False,
                      size_one=lambda device, dtype: {"x": torch.randn(2, 1, 3, dtype=dtype)})
    assert "size one" in declared.properties()
    with raises_hint("x of shape (2, 1, 3)"):
        check_size_one(declared, SQUEEZED, CPU)
    check_size_one(declared, RIGHT, CPU)
    off = Domain(SQUARE, SQUARE_DOMAIN.values, size_one_derived=False)
    assert "size one" not in off.properties()


RAISES_AT_ONE = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                         "x, = ctx.saved_tensors\nx.squeeze().shape[1]  # a dimension of 1 gone\n"
                         "return 2 * x * g")


def test_an_error_raised_only_at_size_one_is_named_so(raises_hint):
    """Issue 68's instructor trial: an answer that raises only where a dimension has size 1
    (a .squeeze()) was grouped as raised:IndexError. Is it the size-1 case's mistake, its first
    line saying what was seen: the error at size 1, and the same call running at size 2?"""
    with raises_hint("Square.backward raised IndexError where a dimension has size 1 (x of "
                     "shape (1, 4)), and the same call runs with that dimension of size 2 (x "
                     "of shape (2, 4))") as info:
        check_size_one(SQUARE_DOMAIN, RAISES_AT_ONE, CPU)
    assert info.value.mistake == "Square/fails-on-size-one"
    assert "What it raised: tuple index out of range" in str(info.value).splitlines()[0]


def test_an_error_raised_at_every_size_is_left_as_it_is():
    """The same error at size 2 too proves nothing about size 1: the learner's own words stay."""
    import pytest

    from autograder.errors import GradingError

    everywhere = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                          "x, = ctx.saved_tensors\nx.shape[5]\nreturn 2 * x * g")
    with pytest.raises(GradingError) as info:
        check_size_one(SQUARE_DOMAIN, everywhere, CPU)
    assert not (info.value.mistake or "").endswith("fails-on-size-one")


PICKED = Spec("Picked", ("logits", "target"),
              lambda logits, target: logits.gather(1, target[:, None]).sum())


def _picked(forward: str, backward: str = "logits, target = ctx.saved_tensors\n"
            "grad = torch.zeros_like(logits)\n"
            "grad[torch.arange(len(target)), target] = 1\nreturn grad * g, None"):
    """Picked: the target's logit of each row, summed; ``forward`` saves logits and target."""
    return function("Picked", forward, backward, "logits, target")


_SAVED = "ctx.save_for_backward(logits, target)\n"


def _raised(function_, logits, target):
    import pytest

    from autograder.checks import run_backward, run_forward

    inputs = {"logits": logits.requires_grad_(), "target": target}
    with pytest.raises(BaseException) as info:
        forward = run_forward(function_, PICKED, inputs)
        run_backward(PICKED, forward.output, inputs, torch.ones((), dtype=logits.dtype))
    return info.value


def test_an_error_at_one_row_with_a_class_target_is_named_so():
    """Instructor trial 82 (frank's CrossEntropy and SmoothedCrossEntropy): a .squeeze() that
    raises at N = 1, in forward or in backward, with an integer target beside the logits. Was
    raised:IndexError (an integer input proved nothing); the rows are grown, the target's with
    the logits', and the same call runs: the size-1 case's mistake, both shapes said."""
    logits, target = torch.randn(1, 5, dtype=torch.float64), torch.tensor([3])
    in_forward = _picked(_SAVED + "return torch.logsumexp(logits.squeeze(), dim=1).sum()")
    in_backward = _picked(_SAVED + "return logits.gather(1, target[:, None]).sum()",
                          "logits, target = ctx.saved_tensors\n"
                          "grad = torch.zeros_like(logits).squeeze()\n"
                          "grad[torch.arange(len(target)), target] = 1\nreturn grad * g, None")
    for answer, phase in ((in_forward, "forward"), (in_backward, "backward")):
        error = _raised(answer, logits.clone(), target)
        assert error.mistake == "Picked/fails-on-size-one", error
        assert str(error).startswith(
            f"Picked.{phase} raised IndexError where a dimension has size 1 (logits of shape "
            "(1, 5), target of shape (1,)), and the same call runs with that dimension of size "
            "2 (logits of shape (2, 5), target of shape (2,))")


def test_a_class_out_of_range_at_one_class_is_not_a_size_one_error():
    """A target out of range where the logits have one class (class 1 of C = 1) is not proven
    a size-1 error by growing the classes, which would make it valid: only the dimensions the
    integer target shares are grown, and the learner's own words stay, with the call."""
    from autograder.mistakes import raised_message

    made_class_1 = _picked(_SAVED + "rows = torch.arange(len(target))\n"
                           "return logits[rows, torch.ones_like(target)].sum()")
    error = _raised(made_class_1, torch.randn(1, 1, dtype=torch.float64), torch.tensor([0]))
    assert type(error) is IndexError
    assert raised_message("Picked", error).startswith(
        "Picked.forward raised IndexError with logits of shape (1, 1), target of shape (1,): "
        "index 1 is out of bounds")
