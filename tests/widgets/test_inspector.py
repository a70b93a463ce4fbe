"""Does the forward-save inspector classify what a Function saved, and warn where it should?"""

import torch

from widgets.inspector import inspect_forward, inspect_saved, inspection_html


def test_does_it_see_a_saved_output(ref):
    inspection = inspect_forward(ref.MySigmoid, torch.randn(5))
    assert [s.role for s in inspection.saved] == ["output"]
    assert inspection.warnings == []
    assert inspection.saved_bytes == inspection.input_bytes == 20


def test_does_it_tell_an_alias_of_the_output_from_the_output():
    """Review 56: y.detach() shares y's memory but is saved cut from the graph."""
    class SavesDetached(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.sigmoid(x)
            ctx.save_for_backward(y.detach())
            return y

        @staticmethod
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            return grad_output * y * (1 - y)

    inspection = inspect_forward(SavesDetached, torch.randn(5))
    assert [s.role for s in inspection.saved] == ["intermediate (the output's memory)"]
    assert inspection.new_bytes == 0 and "not the output itself" in inspection.warnings[0]


def test_is_the_green_line_free_of_double_backward_for_lesson_00(ref):
    """Issue 48: lesson 00 shows this line; double backward is lesson 04's."""
    html = inspection_html(inspect_forward(ref.Square, torch.randn(3)))
    assert "Everything went through save_for_backward" in html
    assert "double backward" not in html


def test_does_it_name_a_saved_input_from_forwards_signature(ref):
    inspection = inspect_forward(ref.Square, torch.randn(3, 2))
    assert [s.role for s in inspection.saved] == ["input x"]
    assert inspection.saved[0].shape == (3, 2)
    assert inspection.new_bytes == 0


def test_does_it_list_non_tensor_ctx_attributes(ref):
    inspection = inspect_forward(ref.ScaledSigmoid, torch.randn(4), 3.0)
    assert inspection.ctx_attributes == {"scale": 3.0}
    assert inspection.needs_input_grad == (True, False)
    html = inspection_html(inspection)
    assert "ctx.scale" in html and "3.0" in html


def test_does_it_warn_about_a_saved_float_intermediate(ref):
    inspection = inspect_forward(ref.SloppySwish, torch.randn(6), 1.5)
    assert [s.role for s in inspection.saved] == ["input x", "intermediate"]
    assert inspection.new_bytes == 24
    assert len(inspection.warnings) == 1
    assert "double backward" in inspection.warnings[0]
    assert "float32 intermediate of shape (6,)" in inspection.warnings[0]


def test_does_it_accept_a_boolean_mask_intermediate(ref):
    x, weight, bias = torch.randn(5, 3), torch.randn(4, 3), torch.randn(4)
    inspection = inspect_forward(ref.FusedLinearReLU, x, weight, bias)
    roles = [(s.role, s.dtype) for s in inspection.saved]
    assert roles == [("input x", torch.float32), ("input weight", torch.float32),
                     ("intermediate", torch.bool)]
    assert inspection.warnings == []
    assert inspection.ctx_attributes == {"has_bias": True}
    assert "a mask carries no gradient" in inspection_html(inspection)


def test_does_it_warn_about_a_tensor_stored_on_ctx(ref):
    inspection = inspect_forward(ref.MaskOnCtx, torch.randn(4))
    assert inspection.ctx_tensor_attributes == {"ctx.mask": False}
    assert "mask" not in inspection.ctx_attributes
    assert any(w.startswith("ctx.mask holds a tensor") for w in inspection.warnings)
    assert "ctx.save_for_backward" in inspection_html(inspection)


def test_does_it_explain_when_nothing_requires_grad(ref):
    inspection = inspect_forward(ref.Square, torch.randn(3), requires_grad=False)
    assert not inspection.recorded and inspection.saved == []
    assert "No input requires grad" in inspection_html(inspection)


def test_does_it_leave_the_learners_tensors_alone(ref):
    x = torch.randn(3)
    inspect_forward(ref.Square, x)
    assert not x.requires_grad and x.grad is None


def test_does_the_html_escape_values(ref):
    class Odd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.note = "<b>bold</b>"
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    html = inspection_html(inspect_forward(Odd, torch.randn(2)))
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold" in html


def test_does_the_requires_grad_toggle_change_the_report(ref):
    x, weight = torch.randn(5, 3), torch.randn(4, 3)
    view = inspect_saved(ref.MyLinear, x, weight, torch.randn(4))
    assert set(view.controls) == {"x", "weight", "bias"}
    before = view.panes["report"].value
    assert "(True, True, True)" in before
    view.controls["x"].value = False
    assert "(False, True, True)" in view.panes["report"].value


def test_does_the_view_show_a_stub_as_not_implemented(ref):
    view = inspect_saved(ref.Stub, torch.randn(3))
    assert "not implemented yet" in view.panes["report"].value


def test_does_a_float_tensor_on_ctx_get_the_double_backward_warning():
    class TanhOnCtx(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.y = torch.tanh(x)
            return ctx.y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * (1 - ctx.y ** 2)

    inspection = inspect_forward(TanhOnCtx, torch.randn(3))
    assert inspection.ctx_tensor_attributes == {"ctx.y": True}
    assert "breaks double backward" in inspection.warnings[0]


def test_are_star_args_named_by_position():
    from widgets.functions import input_names

    class Checkpoint(torch.autograd.Function):
        @staticmethod
        def forward(ctx, run_fn, *args):
            return run_fn(*args)

    assert input_names(Checkpoint, 3) == ["run_fn", "args[0]", "args[1]"]


def _saving(make_saved):
    """A Function of x that saves ``make_saved(x)`` and returns x * 3."""
    class SavesOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(make_saved(x))
            return x * 3

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 3
    return SavesOne


def test_is_a_tensor_made_from_no_input_a_constant_not_a_warning():
    """A scale saved as torch.tensor(3.0), or a full() scaled: double backward is fine."""
    for make in (lambda x: torch.tensor(3.0, dtype=x.dtype),
                 lambda x: torch.full((4,), 2.0) * 1.5):
        inspection = inspect_forward(_saving(make), torch.randn(4))
        assert [s.role for s in inspection.saved] == ["constant"]
        assert inspection.warnings == [] and inspection.new_bytes > 0
        assert "made from no input" in inspection_html(inspection)


def test_does_what_came_from_an_input_still_warn():
    """Computed from x, written into a constant by x, or a number read out of x: each warns."""
    for make in (lambda x: 2 * x, lambda x: torch.ones(4).mul_(x),
                 lambda x: torch.tensor(x.sum().item()),
                 lambda x: torch.from_numpy(2 * x.numpy())):
        inspection = inspect_forward(_saving(make), torch.randn(4))
        assert [s.role for s in inspection.saved] == ["intermediate"]
        assert len(inspection.warnings) == 1


def test_are_rows_numbered_as_backward_reads_ctx_saved_tensors(ref):
    """With the weight frozen the lesson's fused Function saves (None, weight, mask): the weight
    is saved_tensors[1], and saved_tensors[0] is shown as None, not as the weight."""
    x, weight, bias = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    inspection = inspect_forward(ref.FusedLinearReLU, x, weight, bias,
                                 requires_grad={"x", "bias"})
    assert inspection.slots[0] is None
    assert [s.role for s in inspection.slots[1:]] == ["input weight", "intermediate"]
    assert [s.role for s in inspection.saved] == ["input weight", "intermediate"]
    html = inspection_html(inspection)
    assert html.index("saved_tensors[0]") < html.index("None") < html.index("saved_tensors[1]")
    assert html.index("saved_tensors[1]") < html.index("input weight")
    assert "saved_tensors[2]" in html and "Saved 2 tensors" in html


def test_does_a_function_that_saves_only_none_get_a_table_of_nones():
    class SavesNone(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None)
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    inspection = inspect_forward(SavesNone, torch.randn(3))
    assert inspection.slots == [None] and inspection.saved == []
    assert "saved_tensors[0]" in inspection_html(inspection)
