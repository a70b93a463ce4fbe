"""Does the compile view show one graph around an operator and a break around a jvp?"""

import pytest
import torch

from widgets.compile_graph import (capture, capture_html, capture_text, compile_explorer,
                                   short_reason)

pytestmark = pytest.mark.lesson08


class ExpWithJvp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y

    @staticmethod
    def jvp(ctx, x_tangent):
        y, = ctx.saved_tensors
        return x_tangent * y


class ExpNoJvp(ExpWithJvp):
    jvp = torch.autograd.Function.jvp


@pytest.fixture(scope="module")
def x():
    return torch.randn(3, dtype=torch.float64, requires_grad=True)


def test_does_a_function_with_jvp_break_the_graph(x):
    result = capture(lambda x: ExpWithJvp.apply(x) * 2, x)
    assert result.error is None and not result.full_graph
    assert len(result.breaks) == 1
    assert "Remove the custom `jvp` method if possible" in result.breaks[0]
    assert "Developer debug context" not in result.breaks[0]
    assert "1 graph break" in capture_text(result)


def test_is_a_function_without_jvp_one_graph(x):
    result = capture(lambda x: ExpNoJvp.apply(x) * 2, x)
    assert result.full_graph and result.breaks == []
    assert "one graph" in capture_html("no jvp", result)


def test_is_an_operator_one_node_of_one_graph(x):
    @torch.library.custom_op("autograd_course::view_test_exp", mutates_args=())
    def exp_op(t: torch.Tensor) -> torch.Tensor:
        return torch.exp(t)

    exp_op.register_fake(lambda t: torch.empty_like(t))
    exp_op.register_autograd(lambda ctx, grad: grad * ctx.saved_tensors[0],
                             setup_context=lambda ctx, inputs, output: ctx.save_for_backward(output))
    result = capture(lambda x: exp_op(x).sin(), x)
    assert result.full_graph
    assert "torch.ops.autograd_course.view_test_exp.default" in result.graphs[0]


def test_is_a_failing_function_reported(x):
    def broken(t):
        raise NotImplementedError
    result = capture(broken, x)
    assert result.error.startswith("NotImplementedError")
    assert "compilation failed" in capture_html("stub", result)


def test_short_reason_keeps_the_hints():
    reason = ("Unsupported custom jvp\n  Explanation: no.\n  Hint: Remove it.\n\n"
              "  Developer debug context: call_apply\n\n For more details, see a link")
    assert short_reason(reason) == "Unsupported custom jvp\nExplanation: no.\nHint: Remove it."


def test_does_the_toggle_switch_functions(x):
    view = compile_explorer({"with jvp": lambda x: ExpWithJvp.apply(x) * 2,
                             "without jvp": lambda x: ExpNoJvp.apply(x) * 2}, x)
    assert "graph break" in view.panes["graph"].value
    view.controls["function"].value = "without jvp"
    assert "one graph" in view.panes["graph"].value
    assert set(view.captures) == {"with jvp", "without jvp"}
