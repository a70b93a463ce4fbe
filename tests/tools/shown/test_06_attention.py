"""Lesson 06's live checkers: each worked answer the solutions show passes the lesson's check,
and the placeholder or a plausible slip fails it."""

import pytest
import torch

from tests.tools.shown.lesson_code import code_cells, definitions, printed


def _answer(name: str, learner: bool = False):
    """Lesson 06's function ``name`` as the solutions (or the learner's copy) have it."""
    return definitions("06_attention", name, learner=learner)[name]


def _online(combine, row, values, finish=None):
    """The output row and L from ``combine`` over three blocks of 4 and the worked finish."""
    m, ell = torch.tensor(float("-inf"), dtype=torch.float64), 0.0
    o = torch.zeros(2, dtype=torch.float64)
    for start in range(0, 12, 4):
        m, ell, o = combine(m, ell, o, row[start:start + 4], values[start:start + 4])
    return (finish or _answer("finish"))(m, ell, o)


def test_combine_worked_passes_and_no_rescale_fails():
    row = torch.tensor([-3.0, 1, 0, 2, 5, -1, 0, 1, 7, 2, 3, 0], dtype=torch.float64)
    values = torch.randn(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    exact = torch.softmax(row, 0) @ values
    output, lse = _online(_answer("combine"), row, values)
    assert torch.allclose(output, exact) and torch.allclose(lse, torch.logsumexp(row, 0))

    def no_rescale(m, ell, o, s_new, v_new):  # rescales ell but not o
        m_new = torch.maximum(m, s_new.max())
        p = torch.exp(s_new - m_new)
        return m_new, torch.exp(m - m_new) * ell + p.sum(), o + p @ v_new

    assert not torch.allclose(_online(no_rescale, row, values)[0], exact)
    with pytest.raises(NotImplementedError):  # the learner's stub holds no update to copy
        _online(_answer("combine", learner=True), row, values)
    placeholder = _online(_answer("combine"), row, values, _answer("finish", learner=True))
    assert not torch.allclose(placeholder[0], exact)


def test_online_check_needs_finish_and_start_and_shows_no_answer():
    """Does the online-softmax check give ✓ only with the worked combine, finish and start
    (the placeholder start, m at 0, or one at -1e4 leaves 0 / 0 on the row moved 100,000 down;
    finfo.min passes; a combine that does not rescale o fails on its fixed row, whose every
    block raises the maximum), and does the learner's copy of its code leave question 4
    (o / ell, m + log ell) and question 5 (m starts at -inf) to the learner?"""
    lesson = definitions("06_attention", "report", "row", "values", "combine", "finish",
                         "start", "error_online")

    def verdict() -> str:
        return printed(lesson["report"], "check", lesson["error_online"], 1e-9)[0]

    assert verdict().startswith("✓")
    lesson["start"] = _answer("start", learner=True)
    assert verdict().startswith("✗")
    lesson["start"] = lambda: (torch.tensor(-1e4, dtype=torch.float64), 0.0,
                               torch.zeros(2, dtype=torch.float64))
    assert verdict().startswith("✗")
    lesson["start"] = lambda: (torch.tensor(torch.finfo(torch.float64).min,
                                            dtype=torch.float64), 0.0,
                               torch.zeros(2, dtype=torch.float64))
    assert verdict().startswith("✓")
    lesson["start"] = _answer("start")

    def no_rescale(m, ell, o, s_new, v_new):  # rescales ell but not o
        m_new = torch.maximum(m, s_new.max())
        p = torch.exp(s_new - m_new)
        return m_new, torch.exp(m - m_new) * ell + p.sum(), o + p @ v_new

    lesson["combine"] = no_rescale
    assert verdict().startswith("✗")
    lesson["combine"] = _answer("combine")
    lesson["finish"] = _answer("finish", learner=True)
    assert verdict().startswith("✗")
    checks = [cell for cell in code_cells("06_attention", learner=True)
              if "def error_online" in cell or "after the masked first block" in cell]
    assert len(checks) == 2
    assert not any("/ ell" in cell or "log(ell)" in cell for cell in checks)
    assert not any("-inf" in cell for cell in checks if "def error_online" in cell)


def test_row_sum_check_passes_the_identity_and_shows_no_answer():
    """Does the check of question 3 give ✓ to rowsum(dO * O), with or without keepdim, ✗ to the
    placeholder and to a row sum of dO alone, and does the learner's copy leave it unwritten?"""
    lesson = definitions("06_attention", "report", "row_sum_from_output", "error_row_sum")

    def verdict() -> str:
        return printed(lesson["report"], "check", lesson["error_row_sum"], 1e-12)[0]

    assert verdict().startswith("✓")
    lesson["row_sum_from_output"] = lambda dO, O: (dO * O).sum(dim=-1, keepdim=True)
    assert verdict().startswith("✓")
    lesson["row_sum_from_output"] = lambda dO, O: dO.sum(dim=-1)
    assert verdict().startswith("✗")
    lesson["row_sum_from_output"] = _answer("row_sum_from_output", learner=True)
    assert verdict().startswith("✗")
    cell = next(cell for cell in code_cells("06_attention", learner=True)
                if "def row_sum_from_output" in cell)
    assert "grad_output * output" not in cell


def test_slope_gradient_worked_matches_autograd():
    import torch.nn.functional as F
    generator = torch.Generator().manual_seed(4)
    Q, K, V, grad_O = (torch.randn(2, 4, 6, c, generator=generator) for c in (8, 8, 5, 5))
    distance = (torch.arange(6)[:, None] - torch.arange(6)[None, :]).abs().float()
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625], requires_grad=True)
    F.scaled_dot_product_attention(Q, K, V, attn_mask=-slopes[:, None, None] * distance
                                   ).backward(grad_O)
    bias = (-slopes.detach()[:, None, None] * distance).expand(2, 4, 6, 6).clone().requires_grad_()
    F.scaled_dot_product_attention(Q, K, V, attn_mask=bias).backward(grad_O)
    assert torch.allclose(_answer("slope_gradient")(bias.grad, distance), slopes.grad, atol=1e-5)
    assert not torch.allclose(bias.grad.sum(dim=(0, 2, 3)), slopes.grad, atol=1e-5)  # plain sum


def _slope_check(slope_gradient) -> list[str]:
    """What check_slope_gradient prints for ``slope_gradient``."""
    lesson = definitions("06_attention", "check_slope_gradient", slope_gradient=slope_gradient)
    return printed(lesson["check_slope_gradient"])


def test_slope_check_passes_the_worked_and_fails_a_plain_sum():
    """Does check_slope_gradient give the worked answer ✓, a plain sum of dS' ✗, and say the
    placeholder is not written yet?"""
    assert _slope_check(_answer("slope_gradient"))[0].startswith("✓")
    assert _slope_check(lambda grad_S, distance: -grad_S.sum(dim=(0, 2, 3)))[0].startswith("✗")
    assert _slope_check(_answer("slope_gradient", learner=True)) == [
        "slope_gradient is not written yet"]


def test_report_marks_the_tolerance_and_shows_an_error_in_one_line():
    """Does report (the live checkers' verdict) give ✓ under the tolerance, ✗ over it or for
    nan, and one line for an error the learner's code raises?"""
    report = definitions("06_attention", "report")["report"]

    def verdict(largest_error) -> list[str]:
        return printed(report, "check", largest_error, 1e-12)

    assert verdict(lambda: 1e-15)[0].startswith("✓ check: largest error 1e-15")
    assert verdict(lambda: 0.17)[0].startswith("✗")
    assert verdict(lambda: float("nan"))[0].startswith("✗")

    def raises():
        raise RuntimeError("shapes cannot be multiplied\nsecond line")

    assert verdict(raises) == ["✗ check: your code raised RuntimeError: shapes cannot be multiplied"]
