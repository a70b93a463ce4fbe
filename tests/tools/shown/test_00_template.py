"""Lesson 00's live checkers: the worked answers the solutions show pass, and the placeholder
or a named slip fails with what is off."""

from tests.tools.shown.lesson_code import live_check


def test_worked_outer_entry_passes_and_a_sparsity_only_answer_fails():
    """Does the worked dy_du pass, and a True/False answer (right sparsity, no value) fail with
    the position of the entry it gets wrong, and its own value there, without autograd's (which
    would hand over step 1 entry by entry)?"""
    assert live_check("00_template", "dy_du") == [
        "✓ all 18 entries (i, j, k) match autograd's Jacobian"]
    lines = live_check("00_template", "dy_du", dy_du=lambda i, j, k, u, v: i == k)
    assert lines[0].startswith("✗ 3 of 18 entries differ") and "you give 1:" in lines[0], lines
    assert "autograd" not in lines[0], lines


def test_worked_gradcheck_call_passes_and_float32_inputs_fail():
    """Does the worked my_gradcheck pass on the solution's WeightedSum, and do float32 inputs
    or inputs that require no grad fail with what gradcheck objected to, and the class passed
    instead of .apply with the fix?"""
    import warnings

    import torch

    from tests.tools.shown.lesson_code import definitions

    given = {"warnings": warnings, "WeightedSum": definitions(
        "00_template", "WeightedSum")["WeightedSum"]}
    assert live_check("00_template", "my_gradcheck", **given) == [
        "✓ gradcheck passed on float64 inputs"]

    def float32():
        x1, x2 = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
        return torch.autograd.gradcheck(given["WeightedSum"].apply, (x1, x2, 0.5, -2.0))

    lines = live_check("00_template", "my_gradcheck", my_gradcheck=float32, **given)
    assert lines[0].startswith("✗ gradcheck warned: Input #0 requires gradient"), lines

    def no_grad():
        return torch.autograd.gradcheck(given["WeightedSum"].apply,
                                        (torch.randn(4, dtype=torch.float64),) * 2 + (0.5, -2.0))

    lines = live_check("00_template", "my_gradcheck", my_gradcheck=no_grad, **given)
    assert lines[0].startswith("✗ my_gradcheck raised ValueError: gradcheck expects"), lines

    def the_class():  # gradcheck(WeightedSum, ...): an AttributeError ('is_complex') otherwise
        x1, x2 = (torch.randn(4, dtype=torch.float64, requires_grad=True) for _ in range(2))
        return torch.autograd.gradcheck(given["WeightedSum"], (x1, x2, 0.5, -2.0))

    lines = live_check("00_template", "my_gradcheck", my_gradcheck=the_class, **given)
    assert lines == ["✗ gradcheck called the class itself, which makes an instance (PyTorch "
                     "warned that a Function should not be instantiated): pass "
                     "WeightedSum.apply"], lines
    assert live_check("00_template", "my_gradcheck", learner=True) == [
        "Write your call into my_gradcheck first."]


def test_gradcheck_call_on_the_stub_or_a_wrong_backward_is_told_what_happened():
    """Is my_gradcheck on the stub WeightedSum (a NotImplementedError with no message) told to
    write WeightedSum first, without the checker crashing, and a False from gradcheck with
    raise_exception=False told that gradcheck found the backward wrong, not to return it?"""
    import warnings

    import torch

    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x1, x2, w1, w2):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError()

    lines = live_check("00_template", "my_gradcheck", warnings=warnings, WeightedSum=Stub)
    assert lines == ["✗ my_gradcheck raised NotImplementedError: WeightedSum is still the stub; "
                     "write WeightedSum first"], lines

    class Swapped(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x1, x2, w1, w2):
            ctx.w1, ctx.w2 = w1, w2
            return w1 * x1 + w2 * x2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.w2, grad_output * ctx.w1, None, None

    def quiet():
        x1, x2 = (torch.randn(4, dtype=torch.float64, requires_grad=True) for _ in range(2))
        return torch.autograd.gradcheck(Swapped.apply, (x1, x2, 0.5, -2.0),
                                        raise_exception=False)

    lines = live_check("00_template", "my_gradcheck", warnings=warnings, WeightedSum=Swapped,
                       my_gradcheck=quiet)
    assert lines[0].startswith("✗ gradcheck returned False: it found that WeightedSum's "
                               "backward disagrees with finite differences"), lines
