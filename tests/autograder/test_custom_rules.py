"""An instructor's own exercise (``FunctionExercise``) is graded on the Function contract's
rules too: its domain (``FunctionExercise.domain_of``) runs every one of them after its battery,
and a wrong answer that the battery alone lets pass fails with the rule's reference."""

import pytest
import torch

from autograder.custom import FunctionExercise
from autograder.domain import RULE_PROPERTIES
from autograder.function_contract import rule_reference
from tests.autograder.rule_answers import function

MY_TANH = FunctionExercise("MyTanh", reference=torch.tanh)
PRODUCT = FunctionExercise("Product", reference=lambda x, y: x * y, arguments=("x", "y"))

TANH_FORWARD = "y = torch.tanh(x)\nctx.save_for_backward(y)\nreturn y"
TANH_READ = "y, = ctx.saved_tensors\n"
PRODUCT_FORWARD = "ctx.save_for_backward(x, y)\nreturn x * y"
PRODUCT_READ = "x, y = ctx.saved_tensors\n"
PRODUCT_GATED = ("return (g * y if ctx.needs_input_grad[0] else None,\n"
                 "        g * x if ctx.needs_input_grad[1] else None)")


def test_the_domain_implies_every_rule():
    for exercise in (MY_TANH, PRODUCT):
        properties = exercise.domain_of().properties()
        assert [p for p in properties if p in RULE_PROPERTIES] == list(RULE_PROPERTIES)


@pytest.mark.parametrize("exercise, answer, phrase, rule", [
    (MY_TANH, function("MyTanh", TANH_FORWARD, TANH_READ + "return (g * (1 - y * y)).squeeze()"),
     "tried dimensions of size 1", "values"),
    (MY_TANH, function("MyTanh", TANH_FORWARD,
                       TANH_READ + "return g * (torch.ones(y.shape, dtype=y.dtype) - y * y)"),
     "made a tensor on the default device (torch.ones without device=)", "values"),
    (MY_TANH, function("MyTanh", "torch.manual_seed(0)\n" + TANH_FORWARD,
                       TANH_READ + "return g * (1 - y * y)"),
     "the CPU random number generator is not where the op leaves it", "caller"),
    (PRODUCT, function("Product", PRODUCT_FORWARD, PRODUCT_READ
                       + "return (g * y if x.requires_grad else None,\n"
                         "        g * x if y.requires_grad else None)", "x, y"),
     "it reads y.requires_grad at backward time", "gradients"),
    (PRODUCT, function("Product", PRODUCT_FORWARD, PRODUCT_READ
                       + "if not g.any():\n"
                         "    return torch.zeros_like(x), torch.zeros_like(y)\n"
                       + PRODUCT_GATED, "x, y"),
     "returned a tensor of zeros for y, which needs no gradient, with a grad_output of zeros",
     "gradients"),
    (PRODUCT, function("Product", "ctx.save_for_backward(x, y)\nif (x == 1).all():\n"
                                  "    return y.view_as(y)\nreturn x * y",
                       PRODUCT_READ + PRODUCT_GATED, "x, y"),
     "Product.forward returned a view of its input y", "values"),
    (MY_TANH, function("MyTanh", "x.calls = getattr(x, 'calls', 0) + 1\n" + TANH_FORWARD,
                       TANH_READ + "return g * (1 - y * y)"),
     "MyTanh.forward set x.calls on its input x: keep state on ctx", "ctx"),
    (MY_TANH, function("MyTanh", "y = x.tanh_() if not x.requires_grad else torch.tanh(x)\n"
                                 "ctx.save_for_backward(y)\nreturn y",
                       TANH_READ + "return g * (1 - y * y)"),
     "MyTanh.forward modified its input x in place when called with no input needing a "
     "gradient", "unwritten"),
])
def test_a_rule_the_battery_misses_fails_with_its_reference(raises_hint, exercise, answer,
                                                            phrase, rule):
    with raises_hint(phrase) as info:
        exercise.self_check(answer)
    assert str(info.value).splitlines()[0].endswith(rule_reference(rule))


def test_correct_answers_pass_every_rule(capsys):
    MY_TANH.self_check(function("MyTanh", TANH_FORWARD, TANH_READ + "return g * (1 - y * y)"))
    PRODUCT.grade(function("Product", PRODUCT_FORWARD, PRODUCT_READ + PRODUCT_GATED, "x, y"))
    assert capsys.readouterr().out.count("✓") == 2
