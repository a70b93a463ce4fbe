"""Does the backward-flow stepper record what each node received and sent, in engine order?"""

import pytest
import torch

from widgets.flow import backward_flow, step_html, trace_backward_flow


def test_does_it_record_every_node_in_engine_order(ref):
    x = torch.randn(4, requires_grad=True)
    flow = trace_backward_flow(ref.MySigmoid.apply(x).sum(), names={"x": x})
    names = [flow.graph.nodes[s.node].name for s in flow.steps]
    assert names == ["SumBackward0", "MySigmoidBackward", "AccumulateGrad"]
    custom = flow.steps[1]
    y = torch.sigmoid(x.detach())
    torch.testing.assert_close(custom.grad_outputs[0], torch.ones(4))
    torch.testing.assert_close(custom.grad_inputs[0], y * (1 - y))
    assert flow.error is None


def test_does_it_leave_grad_and_graph_as_they_were(ref):
    x = torch.randn(3, requires_grad=True)
    x.grad = marker = torch.full((3,), 7.0)
    output = ref.Square.apply(x).sum()
    trace_backward_flow(output)
    assert x.grad is marker
    output.backward()  # the graph was retained
    torch.testing.assert_close(x.grad, 7 + 2 * x.detach())


def test_does_it_report_a_backward_that_returns_too_few_gradients(ref):
    x, y = torch.randn(2, requires_grad=True), torch.randn(2, requires_grad=True)
    flow = trace_backward_flow(ref.TooFewGradients.apply(x, y).sum())
    assert "incorrect number of gradients" in flow.error
    failing = flow.steps[-1]
    assert failing.grad_inputs is None
    assert "backward stopped here" in step_html(flow, len(flow.steps) - 1)


def test_does_it_refuse_a_freed_graph(ref):
    output = ref.Square.apply(torch.randn(2, requires_grad=True)).sum()
    output.backward()
    with pytest.raises(ValueError, match="already freed"):
        trace_backward_flow(output)


def test_does_the_step_text_show_small_values_and_summarise_large_ones(ref):
    small = torch.tensor([1.0, 2.0], requires_grad=True)
    flow = trace_backward_flow(ref.Square.apply(small).sum())
    assert "[2, 4]" in step_html(flow, 1)
    large = torch.ones(10, 10, requires_grad=True)
    flow = trace_backward_flow(ref.Square.apply(large).sum())
    assert "shape (10, 10), norm 20" in step_html(flow, 1)


def test_is_a_negative_zero_shown_as_zero(ref):
    """A gradient of -0.0 (2 * x at x = -0.0) reads 0, not -0, in the step text; the recorded
    gradient keeps its sign."""
    x = torch.tensor([-0.0, 1.0], requires_grad=True)
    flow = trace_backward_flow(ref.Square.apply(x).sum())
    assert torch.signbit(flow.steps[1].grad_inputs[0][0])
    text = step_html(flow, 1)
    assert "[0, 2]" in text and "-0" not in text


def test_do_the_buttons_step_through_backward(ref):
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    view = backward_flow((ref.MySigmoid.apply(x * w)).sum(), names={"x": x, "w": w})
    step = view.controls["step"]
    assert step.max == 5 and step.value == 1
    first, picture = view.panes["details"].value, view.panes["graph"].value
    view.controls["next"].click()
    assert step.value == 2
    assert "MySigmoid.backward" in view.panes["details"].value
    assert view.panes["details"].value != first and view.panes["graph"].value != picture
    view.controls["previous"].click()
    view.controls["previous"].click()
    assert step.value == 1
