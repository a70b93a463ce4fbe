"""shared.call_state: where a call keeps what backward needs."""

import torch

from autograder.exercises.lesson00_template.template import SQUARE
from autograder.exercises.shared.call_state import check_input_version_tracking
from tools.solutions import solution


def test_version_tracking_accepts_an_independent_copy():
    """Is a Square that saves 2 * x (a new tensor, unaffected by later in-place changes) left
    alone by the version check, while one that saves x.data is not?"""

    class SavesTwiceX(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(2 * x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            twice, = ctx.saved_tensors
            return grad_output * twice

    values = {"x": torch.randn(4, dtype=torch.float64)}
    check_input_version_tracking(SavesTwiceX, SQUARE, values)
    check_input_version_tracking(solution("Square"), SQUARE, values)


def test_two_sizes_name_a_size_kept_in_a_global_and_pass_ctx():
    """Does the two-size probe (a call on 9 elements, one on 2, then the first call's backward)
    name a Square whose backward reads the element count forward left in a global, and leave
    the solution, which keeps it on ctx, alone?"""
    import pytest

    from autograder.errors import GradingError
    from autograder.exercises.shared.call_state import check_calls_of_two_sizes

    state = {}

    class GlobalCount(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            state["n"] = x.numel()
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            grad = torch.zeros_like(x)
            grad[:state["n"]] = 2 * x[:state["n"]] * grad_output[:state["n"]]
            return grad

    larger, smaller = ({"x": torch.randn(n, dtype=torch.float64)} for n in (9, 2))
    check_calls_of_two_sizes(solution("Square"), SQUARE, larger, smaller)
    with pytest.raises(GradingError, match="backward used a later call's size") as info:
        check_calls_of_two_sizes(GlobalCount, SQUARE, larger, smaller)
    assert info.value.mistake == "Square/size-shared-between-calls"


def test_requires_grad_per_call_names_a_flag_kept_in_a_global_and_passes_ctx():
    """Does the probe (a call with x and w requiring grad, a second call's forward with fewer,
    then the first call's backward) name a Function that keeps which inputs need grad in a
    global, and leave one that reads ctx.needs_input_grad alone?"""
    import pytest

    from autograder.checks import Spec
    from autograder.errors import GradingError
    from autograder.exercises.shared.call_state import check_requires_grad_per_call

    spec = Spec("Scale", ("x", "w"), lambda x, w: x * w)
    needs = [True, True]

    def scale(flags):
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                needs[:] = [x.requires_grad, w.requires_grad]
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, grad_output):
                x, w = ctx.saved_tensors
                wanted = flags(ctx)
                return (grad_output * w if wanted[0] else None,
                        (grad_output * x).sum() if wanted[1] else None)
        return Scale

    values = {"x": torch.randn(4, dtype=torch.float64), "w": torch.tensor(1.5,
                                                                         dtype=torch.float64)}
    check_requires_grad_per_call(scale(lambda ctx: ctx.needs_input_grad), spec, values)
    with pytest.raises(GradingError, match="read which inputs need grad from another call") as info:
        check_requires_grad_per_call(scale(lambda ctx: needs), spec, values)
    assert info.value.mistake == "Scale/requires-grad-shared-between-calls"
