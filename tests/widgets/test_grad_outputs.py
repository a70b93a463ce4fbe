"""Does the several-outputs view say which outputs got a gradient, which got None, and which
got zeros that autograd materialised?"""

import pytest
import torch

from tools.catalogue import lesson07_outputs
from tools.solutions import solution
from widgets.grad_outputs import (NONE, NOT_CALLED, TENSOR, ZEROS, output_names, outputs_explorer,
                                  summary_text, trace_html, trace_outputs)

pytestmark = pytest.mark.lesson07


class SinCos(torch.autograd.Function):
    """Materialises zeros for an unused output (the default)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        x, = ctx.saved_tensors
        return grad_sin * torch.cos(x) - grad_cos * torch.sin(x)


def _mistake(name):
    return next(m for m in lesson07_outputs.MISTAKES if m.name == name).load()


X = torch.tensor([[0.5, -1.0, 2.0, 0.25]], dtype=torch.float64)


def test_does_an_unused_output_show_none_with_materialisation_off():
    trace = trace_outputs(solution("SplitHalves"), (X,), [True, False])
    assert [row.received for row in trace.rows] == [TENSOR, NONE]
    assert trace.rows[0].name == "first" and trace.rows[1].share is None
    assert trace.input_grad[0, 2:].abs().sum() == 0 and trace.input_grad[0, :2].abs().sum() > 0


def test_does_an_unused_output_show_materialised_zeros_by_default():
    trace = trace_outputs(SinCos, (X,), [True, False])
    assert [row.received for row in trace.rows] == [TENSOR, ZEROS]
    assert "set_materialize_grads(False)" in summary_text(SinCos, trace)


def test_are_the_shares_the_parts_of_the_input_gradient():
    trace = trace_outputs(SinCos, (X,), [True, True])
    total = trace.rows[0].share + trace.rows[1].share
    assert torch.allclose(total, trace.input_grad)


def test_is_backward_not_called_when_no_output_feeds_the_loss():
    trace = trace_outputs(solution("SplitHalves"), (X,), [False, False])
    assert not trace.called and trace.input_grad is None
    assert all(row.received == NOT_CALLED for row in trace.rows)
    assert "never calls backward" in summary_text(solution("SplitHalves"), trace)


def test_are_indices_shown_as_not_differentiable():
    sort = solution("SortWithIndices")
    trace = trace_outputs(sort, (X,), [True, True])
    values, indices = trace.rows
    assert output_names(sort, 2) == ["values", "indices"]
    assert values.differentiable and not indices.differentiable and not indices.used
    assert indices.received == ZEROS  # integer zeros: the solution keeps materialisation on
    assert "not differentiable" in trace_html(sort, trace)


def test_does_an_in_place_function_run_on_a_copy():
    relu = solution("ReLUInPlace")
    x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)
    trace = trace_outputs(relu, (x,), [True])
    assert x.tolist() == [-1.0, 0.0, 2.0]  # the caller's tensor is untouched
    assert trace.input_grad[0] == 0 and trace.input_grad[1] == 0


def test_does_a_none_summed_show_the_type_error():
    trace = trace_outputs(_mistake("None gradient concatenated"), (X,), [True, False])
    assert trace.error and "raised TypeError" in trace.error
    assert "NoneType" in trace_html(None, trace)


def test_do_the_checkboxes_drive_the_table():
    view = outputs_explorer(solution("SplitHalves"), X)
    assert "None" not in view.panes["table"].value
    view.controls["second"].value = False
    assert "<b>None</b>" in view.panes["table"].value
    view.controls["first"].value = False
    assert "never calls backward" in view.panes["table"].value


def test_is_a_non_differentiable_output_box_disabled():
    view = outputs_explorer(solution("SortWithIndices"), X)
    assert view.controls["indices"].disabled and not view.controls["indices"].value


def test_does_the_view_report_a_stub(ref):
    view = outputs_explorer(ref.Stub, X)
    assert "not implemented yet" in view.panes["table"].value
