"""Lesson 00's live checkers: the worked answers the solutions show pass, and the placeholder
or a named slip fails with what is off."""

from tests.tools.shown.lesson_code import live_check


def test_worked_square_entry_passes_and_a_lost_sign_fails():
    """Does the worked my_square_entry pass its checker, and 2|x| on the diagonal fail?"""
    assert live_check("00_template", "my_square_entry") == [
        "✓ all 9 entries (i, j) match autograd's Jacobian"]
    lines = live_check("00_template", "my_square_entry",
                       my_square_entry=lambda i, j, x: 2 * abs(x[j]) if i == j else 0.0)
    assert lines[0].startswith("✗ 1 of 9 entries differ") and "(1, 1)" in lines[0], lines
    assert live_check("00_template", "my_square_entry", learner=True) == [
        "Write your step 1 into my_square_entry first."]


def test_worked_outer_entry_passes_and_a_sparsity_only_answer_fails():
    """Does the worked dy_du pass, and a True/False answer (right sparsity, no value) fail with
    the entry it gets wrong?"""
    assert live_check("00_template", "dy_du") == [
        "✓ all 18 entries (i, j, k) match autograd's Jacobian"]
    lines = live_check("00_template", "dy_du", dy_du=lambda i, j, k, u, v: i == k)
    assert lines[0].startswith("✗ 3 of 18 entries differ") and "you give 1, autograd 3" in lines[0]


def test_worked_outer_grad_u_passes_and_a_transposed_g_fails():
    """Does the worked my_grad_u pass at every entry, and G on the wrong side or an unsummed
    product fail?"""
    lines = live_check("00_template", "my_grad_u")
    assert len(lines) == 3 and all(line.endswith("✓") for line in lines), lines
    wrong_side = live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G.T @ v)
    assert wrong_side[0].startswith("✗ my_grad_u raised RuntimeError"), wrong_side
    unsummed = live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G * v)
    assert unsummed[0].startswith("✗ your result has shape (3, 2)"), unsummed
    no_v = live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G.sum(1))
    assert any(line.endswith("✗") for line in no_v), no_v


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


def test_worked_square_grad_x_passes_and_a_forgotten_grad_output_fails():
    """Does the worked my_grad_x pass at every entry, and the local derivative alone (no G)
    fail with that named, a wrong factor at its entries?"""
    lines = live_check("00_template", "my_grad_x")
    assert len(lines) == 3 and all(line.endswith("✓") for line in lines), lines
    alone = live_check("00_template", "my_grad_x", my_grad_x=lambda G, x: 2 * x)
    assert alone == ["✗ your result is dy/dx alone, right only for a G of all ones: where "
                     "does G[j] go?"], alone
    halved = live_check("00_template", "my_grad_x", my_grad_x=lambda G, x: G * x)
    assert all(line.endswith("✗") for line in halved), halved
    matrix = live_check("00_template", "my_grad_x", my_grad_x=lambda G, x: G[:, None] * 2 * x)
    assert matrix[0].startswith("✗ your result has shape (3, 3), x has shape (3,)"), matrix
    assert live_check("00_template", "my_grad_x", learner=True) == [
        "Write your step 2 into my_grad_x first."]


def test_outer_grad_u_as_a_column_is_told_its_shape():
    """Is a grad_u of shape (3, 1), the right entries as a column, told to return shape (3,)
    rather than asked which index its sum runs over?"""
    lines = live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G @ v[:, None])
    assert lines == ["✗ right number of entries, shape (3, 1): return shape (3,), u's"], lines


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


def test_worked_weighted_grads_pass_and_a_gradient_for_a_float_fails():
    """Do the worked four values pass at every place, and do a gradient returned for w1, the
    weights swapped, or two values for four inputs fail with what is off?"""
    lines = live_check("00_template", "my_weighted_grads")
    assert lines == ["for x1   yours [0.5, -1.0, 2.0]   autograd [0.5, -1.0, 2.0]   ✓",
                     "for x2   yours [-3.0, 6.0, -12.0]   autograd [-3.0, 6.0, -12.0]   ✓",
                     "for w1   yours None   rule 1 None   ✓",
                     "for w2   yours None   rule 1 None   ✓"], lines
    float_grad = live_check("00_template", "my_weighted_grads",
                            my_weighted_grads=lambda G, w1, w2: (w1 * G, w2 * G, G.sum(), None))
    assert float_grad[2] == "for w1   yours 3.0   rule 1 None   ✗ (a float input gets None)"
    swapped = live_check("00_template", "my_weighted_grads",
                         my_weighted_grads=lambda G, w1, w2: (w2 * G, w1 * G, None, None))
    assert swapped[0].endswith("✗") and swapped[1].endswith("✗"), swapped
    two = live_check("00_template", "my_weighted_grads",
                     my_weighted_grads=lambda G, w1, w2: (w1 * G, w2 * G))
    assert two == ["✗ you return 2 values: forward has four inputs, x1, x2, w1 and w2, and "
                   "backward returns one value for each"], two
    assert live_check("00_template", "my_weighted_grads", learner=True) == [
        "Write your four values into my_weighted_grads first."]
