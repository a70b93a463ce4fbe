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
    # the smallest step whose error bound is within gradcheck's tolerance (issue 68)
    assert "agrees with central differences at eps = 0.0001" in view.panes["summary"].value
    assert "disagrees" not in view.panes["summary"].value
    view.controls["eps"].value = 1e-3
    assert "the failure is in a case above" in view.panes["failure"].value


def _float32_sigmoid(scale: float):
    """A sigmoid computed in float32 inside (its output float32), its backward ``scale`` times
    the right one: 1 is right, -1 the sign flipped, 2 a factor 2 off."""

    class Float32Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            xf = x.float()
            z = torch.exp(-xf.abs())
            y = torch.where(xf >= 0, 1 / (1 + z), z / (1 + z))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return scale * grad_output * y * (1 - y)

    return Float32Sigmoid


SIGMOID_X = torch.tensor([4.6230, -0.8803, -6.5364, 1.7053, -3.2536], dtype=torch.float64)


def test_does_a_float32_forward_with_a_right_backward_never_read_disagrees():
    """Issue 68: a float32 sigmoid with a right backward read 'backward disagrees with central
    differences': its central differences are rounding noise of about ulp(y) / (2 eps), above
    gradcheck's tolerance at every step up to 1e-2 for the row where y is near 1 and the slope
    near 0.01. Does the view bound that noise per row from the output's dtype and magnitude,
    and say plainly that central differences cannot judge the backward at float32?"""
    from widgets.gradcheck_explorer import failure_html, summary_html

    comparison = compare_jacobians(_float32_sigmoid(1.0), SIGMOID_X)
    assert comparison.output_dtypes == [torch.float32]
    verdict = comparison.verdict(0)
    assert verdict.kind == "unjudgeable" and comparison.unjudgeable(0)
    # the rounding bound of row 0 (y near 1) is larger than that of row 2 (y near 0.0014)
    assert comparison.ulps[0][0] > 100 * comparison.ulps[0][2]
    summary = summary_html(comparison, 0, failed=True)
    assert "disagrees" not in summary and "differs" not in summary
    assert "central differences cannot judge your backward at a float32 output" in summary
    banner = failure_html(comparison, [])
    assert "exact enough to judge" in banner and "disagreement" not in banner
    assert comparison.worst_input() == 0


@pytest.mark.parametrize("scale", [-1.0, 2.0])
def test_does_a_wrong_float32_backward_still_disagree(scale):
    """A float32 forward whose backward has the sign flipped or is a factor 2 off: beyond the
    error of central differences, so it still reads 'disagrees' (at the step they are taken at)."""
    from widgets.gradcheck_explorer import failure_html, summary_html

    comparison = compare_jacobians(_float32_sigmoid(scale), SIGMOID_X)
    assert comparison.verdict(0).kind == "disagrees"
    summary = summary_html(comparison, 0, failed=True)
    assert "backward disagrees with central differences by more than their error" in summary
    assert "rounding of a float32 output" in summary
    assert "It finds a disagreement" in failure_html(comparison, [])


def test_is_a_float64_forward_still_judged_at_the_views_eps(ref):
    """The steps are tried only where the view's eps cannot judge: a right float64 backward
    agrees at eps = 1e-6 and a wrong one disagrees there, outlined as before."""
    right = compare_jacobians(ref.Square, torch.randn(4))
    assert right.verdict(0).kind == "agrees" and right.verdict(0).eps == 1e-6
    wrong = compare_jacobians(ref.OffByOneEntry, torch.randn(5))
    assert wrong.verdict(0).kind == "disagrees" and wrong.verdict(0).eps == 1e-6


class _ScalesItsInput(torch.autograd.Function):
    """WeightedSum whose forward writes into x1 (x1.mul_(w1)): learner trial 81 (issue 68)."""

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return x1.mul_(w1).add_(w2 * x2)

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.w1 * grad_output, ctx.w2 * grad_output, None, None


class _AddsZeroInPlace(torch.autograd.Function):
    """Values kept, but forward bumps x's version counter (x.add_(0)): a write all the same."""

    @staticmethod
    def forward(ctx, x):
        return x.add_(0) * 2

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output


def test_does_a_forward_that_changes_its_input_get_no_verdict_from_central_differences(ref):
    """Learner trial 81 (issue 68): WeightedSum with x1.mul_(w1) read 'x1 agrees', blamed the
    rounding of the forward's digits and drew central differences of 2e5. Each call of such a
    forward moves its input: does the view say central differences cannot be taken, draw no
    verdict and no heatmaps from them, and leave the caller's inputs alone?"""
    from widgets.gradcheck_explorer import failure_html, summary_html

    x1, x2 = torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    kept = x1.clone()
    comparison = compare_jacobians(_ScalesItsInput, x1, x2, 0.5, -2.0)
    assert comparison.changed == ["x1"]
    assert [comparison.verdict(k).kind for k in range(2)] == ["changes-input"] * 2
    summary = summary_html(comparison, 0, failed=True)
    assert "changed <code" in summary and "cannot be taken" in summary
    for misleading in ("rounding", "agrees", "differs", "Largest difference"):
        assert misleading not in summary
    assert "in place" in failure_html(comparison, []) and "disagreement" not in failure_html(
        comparison, [])
    view = explore_gradients(_ScalesItsInput, x1, x2, 0.5, -2.0, failure="modified x1")
    assert view.panes["heatmaps"].layout.display == "none"
    assert "cannot be taken" in view.panes["summary"].value
    assert torch.equal(x1, kept)
    assert compare_jacobians(_AddsZeroInPlace, torch.randn(3)).changed == ["x"]
    assert compare_jacobians(ref.Square, torch.randn(3)).changed == []


class _Float32Square(torch.autograd.Function):
    """Square's forward in float32 (x.float() ** 2), its backward right: learner trial 81."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.float() ** 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


def test_does_each_largest_difference_say_the_eps_it_was_measured_at():
    """Learner trial 81 (issue 68): a float32 Square's text said 'largest difference 2.6e-05',
    measured at eps = 0.01, beside heatmaps drawn at the slider's 1e-6 with differences of 0.03.
    Does the text give the eps of each number, and the heatmaps' own largest difference?"""
    from widgets.gradcheck_explorer import summary_html
    from widgets.markup import format_number

    comparison = compare_jacobians(_Float32Square, torch.tensor([-0.9, 0.3, 2.2, 0.7]))
    verdict = comparison.verdict(0)
    assert verdict.eps == 0.01 and comparison.eps == 1e-6
    summary = summary_html(comparison, 0, failed=True)
    assert "Largest difference at eps = 0.01: " in summary
    drawn = f"drawn at the slider's eps = 1e-06, where the largest difference is " \
            f"{format_number(comparison.max_error(0))}"
    assert drawn in summary
    # at the slider's eps where it judges, one number, at that eps
    right = summary_html(compare_jacobians(_float32_sigmoid(1.0), SIGMOID_X, eps=1e-2), 0)
    assert "Largest difference at eps = 0.01: " in right and "slider" not in right
