"""Does the explorer compare analytic and numerical Jacobians and point at the worst entry?"""

import pytest
import torch

from widgets.gradcheck_explorer import (compare_jacobians, element_name, explore_gradients,
                                        output_element)


def test_does_a_correct_function_agree(ref):
    x = torch.randn(2, 3)
    comparison = compare_jacobians(ref.Square, x)
    assert comparison.names == ["x"] and comparison.output_shapes == [(2, 3)]
    torch.testing.assert_close(comparison.analytic[0], torch.diag(2 * x.double().flatten()))
    assert comparison.agrees(0)
    assert comparison.max_error(0) < 1e-8


def test_does_it_find_a_single_wrong_entry(ref):
    comparison = compare_jacobians(ref.OffByOneEntry, torch.randn(5))
    assert not comparison.agrees(0)
    assert comparison.worst(0) == (2, 2)
    assert abs(comparison.max_error(0) - 0.5) < 1e-6


def test_does_it_blame_only_the_wrong_input(ref):
    x, weight, bias = torch.randn(4, 3), torch.randn(3, 3), torch.randn(3)
    comparison = compare_jacobians(ref.TransposedLinear, x, weight, bias)
    assert comparison.names == ["x", "weight", "bias"]
    assert [comparison.agrees(k) for k in range(3)] == [False, True, True]
    assert comparison.worst_input() == 0


def test_does_it_skip_non_tensor_inputs_and_work_in_float64(ref):
    comparison = compare_jacobians(ref.ScaledSigmoid, torch.randn(3), 2.0)
    assert comparison.names == ["x"]
    assert comparison.analytic[0].dtype == torch.float64
    assert comparison.agrees(0)


def test_does_it_name_elements_by_index():
    assert element_name("x", 5, (2, 3)) == "x[1, 2]"
    assert element_name("beta", 0, ()) == "beta"


def test_does_it_name_a_jacobian_row_in_the_outputs_own_indices():
    """Issue 48: 'd output[21] / d x[1, 3, 0]' mixed a flat index with a nested one: is row 21
    of a (2, 4, 3) output output[1, 3, 0], and a row past the first of two outputs named in
    the second?"""
    assert output_element(21, [(2, 4, 3)]) == "output[1, 3, 0]"
    assert output_element(0, [()]) == "output"
    assert output_element(7, [(2, 3), (4,)]) == "outputs[1][1]"
    with pytest.raises(IndexError):
        output_element(10, [(2, 3), (4,)])


def test_does_the_view_open_on_the_wrong_input(ref):
    x, weight, bias = torch.randn(4, 3), torch.randn(3, 3), torch.randn(3)
    view = explore_gradients(ref.TransposedLinear, x, weight, bias)
    assert view.controls["input"].value == "x"
    assert "disagrees" in view.panes["summary"].value
    picture = view.panes["heatmaps"].value
    view.controls["input"].value = "weight"
    assert "agree within" in view.panes["summary"].value
    assert view.panes["heatmaps"].value != picture


def test_does_eps_change_the_numerical_jacobian(ref):
    view = explore_gradients(ref.MySigmoid, torch.randn(4))
    view.controls["eps"].value = 1e-1
    assert "eps = 1e-01" in view.panes["summary"].value


def test_does_the_view_report_a_failing_backward(ref):
    view = explore_gradients(ref.TooFewGradients, torch.randn(2), torch.randn(2))
    assert "TooFewGradients raised RuntimeError" in view.panes["summary"].value


def test_do_colour_scales_move_in_steps():
    from widgets.gradcheck_explorer import _round_up
    assert [_round_up(v) for v in (0.3, 1.0, 1.2, 4.9, 7e-6)] == pytest.approx(
        [0.5, 1.0, 2.0, 5.0, 1e-5])


def test_does_it_refuse_a_huge_jacobian(ref):
    with pytest.raises(ValueError, match="smaller inputs"):
        compare_jacobians(ref.Square, torch.randn(400, 400))


def test_does_the_view_explain_a_huge_jacobian_without_a_picture(ref):
    view = explore_gradients(ref.Square, torch.randn(400, 400))
    assert "smaller inputs" in view.panes["summary"].value
    assert "raised" not in view.panes["summary"].value
    assert view.panes["heatmaps"].layout.display == "none"


def test_does_a_backward_that_divides_by_zero_still_draw():
    """A nan gradient (prod / x at a zero) must not break the colour scale."""

    class ProdDividingByZero(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.prod(x, 0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * torch.prod(x, 0) / x

    view = explore_gradients(ProdDividingByZero, torch.tensor([2.0, 0.0, 3.0]))
    assert view.panes["heatmaps"].value


# Under a failed self-check (issue 24, "views agree with verdicts") ------------------------

def _hint_of(exercise: str, name: str) -> str:
    from autograder.grading import verdict
    from tools.catalogue import mistake

    wrong = mistake(exercise, name).load()
    passed, message = verdict(exercise, wrong)
    assert not passed
    return wrong, message.splitlines()[0]


def test_does_agreement_under_a_failed_self_check_say_the_failure_is_elsewhere():
    """CrossEntropy divided by N agrees with its own forward: does the view say so in one
    line, never repeat the hint shown just above it (issue 48), and never tick?"""
    from autograder.exercises import EXERCISES

    wrong, hint = _hint_of("CrossEntropy", "dividing by N instead of the counted rows")
    view = explore_gradients(wrong, *EXERCISES["CrossEntropy"].example(), failure=hint)
    note = view.panes["failure"].value
    assert "your own" in note and "the failure is in a case above" in note
    assert hint[:40] not in note and "self-check said" not in note and "edge values" not in note
    assert "✓" not in note + view.panes["summary"].value
    assert "agrees" in view.panes["summary"].value


def test_does_it_show_a_forgotten_broadcast_sum_the_engine_hid():
    """The engine sums BroadcastMul's unsummed gradient, so the heatmaps agree: does the view
    show what backward returned?"""
    from autograder.exercises import EXERCISES

    wrong, hint = _hint_of("BroadcastMul", "forgot to sum the broadcast dims")
    view = explore_gradients(wrong, *EXERCISES["BroadcastMul"].example(), failure=hint)
    assert "the engine summed it" in view.panes["failure"].value
    assert "grad_a of shape (3, 4) for a of shape (3, 1)" in view.panes["failure"].value


def test_does_it_show_a_needs_input_grad_slip():
    """A gradient that goes missing when its input alone requires grad: is it named, with the
    entry of ctx.needs_input_grad that belongs to it?"""
    from widgets.gradcheck_probes import backward_notes

    class GatedOnTheWrongEntry(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_a = grad_output * b if ctx.needs_input_grad[1] else None
            return grad_a, grad_output * a if ctx.needs_input_grad[1] else None

    notes = backward_notes(GatedOnTheWrongEntry, torch.randn(3), torch.randn(3))
    assert any("a alone requiring grad, backward returns None" in n and "entry 0" in n
               for n in notes)


def test_does_a_correct_function_get_no_notes_and_a_raising_one_say_so(ref):
    """No false alarms on a right answer; and an error is reported as an error."""
    from widgets.gradcheck_explorer import failure_html
    from widgets.gradcheck_probes import backward_notes

    assert backward_notes(ref.Square, torch.randn(4)) == []
    assert "raised an error" in failure_html(None, [])


def test_are_nan_entries_drawn_and_counted():
    """A backward that divides by zero: is the nan counted in words and drawn in a colour off
    the red-white-blue scale, with the worst entry at the nan?"""
    from matplotlib.colors import to_hex

    from widgets.gradcheck_explorer import NAN_COLOUR, heatmap_colours, summary_html

    class DividesByZero(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.prod(x, 0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * torch.prod(x, 0) / x

    comparison = compare_jacobians(DividesByZero, torch.tensor([2.0, 0.0, 3.0]))
    assert comparison.nans(0) == 1 and comparison.worst(0) == (0, 1)
    assert "nan or inf, drawn yellow" in summary_html(comparison, 0)
    assert to_hex(heatmap_colours().get_bad()) == NAN_COLOUR.lower()


def test_does_the_summary_name_the_outline_by_its_colour(ref):
    """The worst entry's outline is black, and the text says black (not red)."""
    from widgets.gradcheck_explorer import MARK_COLOUR, JacobianFigure, summary_html
    from widgets.figures import INK

    comparison = compare_jacobians(ref.OffByOneEntry, torch.randn(5))
    assert "black outline" in summary_html(comparison, 0) and "red" not in summary_html(comparison, 0)
    assert MARK_COLOUR == INK
    assert JacobianFigure().marks[0].get_edgecolor()[:3] == pytest.approx((0x22 / 255,) * 3)


class _Float32Softplus(torch.autograd.Function):
    """Softplus computed in float32 (a learner's shortcut), its backward the exact slope."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def test_does_a_forward_rounded_to_float32_not_blame_the_backward():
    """Central differences of a float32-rounded forward are noise at eps = 1e-6: does the view
    say the backward is right for that forward (it agrees at a larger eps), not that backward
    disagrees, and does the banner above follow the eps slider?"""
    x = torch.tensor([-1.5, 0.3, 2.0], dtype=torch.float64)
    comparison = compare_jacobians(_Float32Softplus, x)
    assert not comparison.agrees(0) and comparison.noisy(0)
    view = explore_gradients(_Float32Softplus, x, failure="a step ran in float32")
    assert "right for your forward once eps is large enough" in view.panes["failure"].value
    assert "agrees with central differences at eps = 0.001" in view.panes["summary"].value
    assert "disagrees" not in view.panes["summary"].value
    view.controls["eps"].value = 1e-3
    assert "the failure is in a case above" in view.panes["failure"].value
