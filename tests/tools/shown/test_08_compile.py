"""Lesson 08's live checkers and its ungraded Cross: the worked answers the solutions show pass
every line of their checks, and a plausible slip fails."""

import torch

from tests.tools.shown.lesson_code import definitions, printed


def _check(checker: str, *args, **given) -> list[str]:
    """What lesson 08's ``checker`` prints with ``given`` defined."""
    return printed(definitions("08_compile", checker, **given)[checker], *args)


def _cross() -> type:
    return definitions("08_compile", "Cross")["Cross"]


def test_the_worked_cross_passes_every_check():
    """Does the worked Cross pass check_cross, line by line?"""
    lines = _check("check_cross", Cross=_cross())
    assert len(lines) == 4 and all(line.endswith("✓") for line in lines), lines


def test_the_cross_checker_catches_a_backward_with_the_factors_swapped():
    """Does check_cross fail a backward whose cross products have the wrong order (sign)?"""
    class SwappedBackward(_cross()):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return torch.linalg.cross(grad_output, b), torch.linalg.cross(a, grad_output)

    lines = _check("check_cross", Cross=SwappedBackward)
    assert lines[0].startswith("backward (gradcheck) ✗"), lines


def test_the_worked_log_sum_exp_entry_passes_the_live_checker():
    """Does the worked lse_entry, dy/dx_3 at x = (1000, 1000, 1001), pass check_lse_entry?"""
    entry = definitions("08_compile", "lse_entry")["lse_entry"]
    lines = _check("check_lse_entry", lse_entry=entry)
    assert len(lines) == 1 and lines[0].startswith("✓ 0.5761"), lines


def test_the_lse_checker_asks_about_each_usual_slip():
    """Does check_lse_entry meet an overflow (nan from e^x / sum(e^x) at 1000), x_1's entry,
    the entry's log and the max's slope each with its own question, a lambda with 'one
    number', and never print the entry it expects on a wrong answer?"""
    at = torch.tensor([1000.0, 1000.0, 1001.0], dtype=torch.float64)
    naive = (at.exp() / at.exp().sum())[2].item()
    slips = {naive: "overflowed", float("inf"): "overflowed", 0.21194: "x_1",
             -0.55144: "logarithm", 1.0: "max(x)", 0.5: "redo the derivative"}
    for number, words in slips.items():
        lines = _check("check_lse_entry", lse_entry=number)
        assert len(lines) == 1 and lines[0].startswith("✗") and words in lines[0], (number, lines)
        assert "0.5761" not in lines[0], lines
    lines = _check("check_lse_entry", lse_entry=lambda x: torch.softmax(x, 0))
    assert lines == ["✗ lse_entry is a function: write one number"], lines


def test_the_worked_softplus_slope_passes_the_one_number_checker():
    """Does the worked softplus_slope, ds/dx at x = 0.5 and beta = 4, pass check_softplus_slope?"""
    slope = definitions("08_compile", "softplus_slope")["softplus_slope"]
    lines = _check("check_softplus_slope", softplus_slope=slope)
    assert len(lines) == 1 and lines[0].startswith("✓ 0.8808"), lines


def test_the_softplus_slope_checker_asks_about_each_usual_slip():
    """Does check_softplus_slope meet ds/dz alone, a beta too many, the beta = 1 slope, s itself
    and the wrong sign each with its own question, a lambda with 'one number', and never print
    the slope it expects on a wrong answer?"""
    sigmoid_2, sigmoid_half = (torch.sigmoid(torch.tensor(u)).item() for u in (2.0, 0.5))
    slips = {sigmoid_2 / 4: "dz/dx", 4 * sigmoid_2: "too many", sigmoid_half: "β = 1",
             0.5317: "the value", 1 - sigmoid_2: "sign", 0.5: "redo question 1"}
    for number, words in slips.items():
        lines = _check("check_softplus_slope", softplus_slope=number)
        assert len(lines) == 1 and lines[0].startswith("✗") and words in lines[0], (number, lines)
        assert "0.8808" not in lines[0], lines
    lines = _check("check_softplus_slope", softplus_slope=lambda z, beta: torch.sigmoid(z))
    assert lines == ["✗ softplus_slope is a function: write one number"], lines


def _batch_dim_check(rule_returns_input_bdim: bool) -> list[str]:
    """What check_batch_dim_at_1 prints for a squared_norm operator whose batching rule returns
    0 after moving the batch dim first (the solution's), or, as an element-wise rule may, the
    input's batch dim."""
    name = "input_bdim" if rule_returns_input_bdim else "front"

    @torch.library.custom_op(f"shown_solutions_08::squared_norm_{name}", mutates_args=())
    def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
        return (x * x).sum(dim)

    @squared_norm.register_fake
    def _(x, dim):
        reduced = dim % x.dim()
        return x.new_empty(x.shape[:reduced] + x.shape[reduced + 1:])

    def rule(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        if rule_returns_input_bdim:
            sample_dim = dim % (x.dim() - 1)
            return squared_norm(x, sample_dim + (sample_dim >= x_bdim)), x_bdim
        return squared_norm(x.movedim(x_bdim, 0), dim + 1 if dim >= 0 else dim), 0

    squared_norm.register_vmap(rule)
    return _check("check_batch_dim_at_1", squared_norm=squared_norm)


def test_batch_dim_check_passes_the_solutions_rule_and_fails_the_input_batch_dim():
    """Does the live check before squared_norm's self-check pass a rule that returns 0 after
    moving the batch dim first, and fail a rule returning the input's batch dim at dim 0?"""
    lines = _batch_dim_check(rule_returns_input_bdim=False)
    assert len(lines) == 2 and all(line.startswith("✓") for line in lines), lines
    lines = _batch_dim_check(rule_returns_input_bdim=True)
    assert lines[0].startswith("✗ dim= 0: shape (4, 5)") and lines[1].startswith("✓"), lines
