"""Rule 1's dtype, for a Function's forward, before anything calls backward (issue 68): a forward
that narrows float64 inputs to float32 was named by backward's matmul raising on float32 times
float64; the output's dtype is what was proven first."""

import torch

from autograder.function_contract import rule_reference
from autograder.output_dtypes import check_output_dtypes
from tests.autograder.rule_answers import CPU, GATED, OUTER_DOMAIN, SQUARE_DOMAIN, function

# backward mixes the float32 grad_output with the float64 saved v: it raises if ever run
NARROWED_OUTER = function("Outer", "ctx.save_for_backward(u, v)\nreturn torch.outer(u.float(), "
                          "v.float())", "u, v = ctx.saved_tensors\n" + GATED, "u, v")


def test_a_narrowed_output_is_named_before_backward_runs(raises_hint):
    with raises_hint("Outer.forward returned float32 for float64 inputs, where the op returns "
                     "float64") as info:
        check_output_dtypes(OUTER_DOMAIN, NARROWED_OUTER, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("values"))
    assert info.value.mistake == "Outer/wrong-output-dtype"


def test_right_and_wider_outputs_are_left_to_the_value_checks():
    """A forward computed in float64 and cast back passes; one that returns float64 for
    float32 inputs is the value checks' to name (they read forward before its gradients)."""
    for forward in ("return x * x", "return (x.double() * x.double()).to(x.dtype)",
                    "return x.double() * x.double()"):
        check_output_dtypes(SQUARE_DOMAIN, function("Square", forward, "return 2 * g"), CPU)


def test_a_forward_that_raises_is_left_to_the_battery():
    check_output_dtypes(SQUARE_DOMAIN, function("Square", "raise RuntimeError('mine')",
                                                "return g"), CPU)
    assert torch.float64 in SQUARE_DOMAIN.dtypes


def test_a_float32_output_computed_in_float16_is_named(raises_hint):
    """Rule 1: every value of a float32 output a float16 (or bfloat16) number, near the truth:
    forward ran narrower and cast back (a square's zeros at tiny x once read as a backward
    threshold). Named before backward runs; a float32 forward passes."""
    for half, name in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        forward = f"return (x.to(torch.{name}) ** 2).to(x.dtype)"
        with raises_hint(f"every value of Square's output is exactly a {name} number") as info:
            check_output_dtypes(SQUARE_DOMAIN, function("Square", forward, "return 2 * g"), CPU)
        assert f"Square.forward ran a step in {name}" in str(info.value)
        assert info.value.mistake == f"Square/{name}-step"
    check_output_dtypes(SQUARE_DOMAIN, function("Square", "return x * x", "return 2 * g"), CPU)
