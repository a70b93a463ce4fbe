"""Rule 2, requires_grad changed between forward and backward: a backward that decides from
``u.requires_grad`` is caught, one that reads ``ctx.needs_input_grad`` passes."""

from autograder.function_contract import rule_reference
from autograder.late_requires_grad import check_requires_grad_fixed_at_forward
from tests.autograder.rule_answers import CPU, GATED, OUTER_DOMAIN, outer


def test_a_backward_reading_requires_grad_is_caught(raises_hint):
    """Outer gating on requires_grad: u alone requiring grad at forward, v.requires_grad_()
    after it; backward returns grad_v the engine never asked for."""
    answer = outer("gu = g @ v if u.requires_grad else None\n"
                   "gv = g.T @ u if v.requires_grad else None\nreturn gu, gv")
    with raises_hint("it reads v.requires_grad at backward time") as info:
        check_requires_grad_fixed_at_forward(OUTER_DOMAIN, answer, CPU)
    first = str(info.value).splitlines()[0]
    assert first.endswith(rule_reference("gradients"))
    assert "v.requires_grad_() was called after forward (only u required grad" in first
    assert info.value.mistake == "Outer/reads-requires-grad"


def test_a_backward_reading_needs_input_grad_passes():
    check_requires_grad_fixed_at_forward(OUTER_DOMAIN, outer(GATED), CPU)


def test_a_backward_that_always_returns_both_gradients_is_not_this_check_s_business():
    """No gate at all: the same tensors with or without the late call (whether a frozen input
    must get None on the typical path is each exercise's own check)."""
    check_requires_grad_fixed_at_forward(OUTER_DOMAIN, outer("return g @ v, g.T @ u"), CPU)
