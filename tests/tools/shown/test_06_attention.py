"""Lesson 06's live checkers: each worked answer the solutions show passes the lesson's check,
and the placeholder or a plausible slip fails it."""

import torch

from tests.tools.shown.lesson_code import code_cells, definitions, printed


def _answer(name: str, learner: bool = False):
    """Lesson 06's function ``name`` as the solutions (or the learner's copy) have it."""
    return definitions("06_attention", name, "my_P_from_lse", learner=learner)[name]


def test_softmax_vjp_worked_passes_and_first_guess_fails():
    s, v = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    p = torch.softmax(s, dim=0)
    J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s)
    for learner, ok in ((False, True), (True, False)):
        vjp = _answer("my_softmax_vjp", learner)
        assert ((vjp(p, v) - J.T @ v).abs().max() < 1e-12) == ok


def test_lse_worked_rebuilds_p_where_the_first_guess_overflows():
    scores = torch.randn(3, 6, generator=torch.Generator().manual_seed(0)) * 40
    scores[0, 0] = 100.0
    worked = definitions("06_attention", "my_lse", "my_P_from_lse")
    lse = worked["my_lse"](scores)
    error = (worked["my_P_from_lse"](scores, lse) - torch.softmax(scores, -1)).abs().max()
    assert torch.isfinite(lse).all() and error < 1e-5
    assert torch.isinf(_answer("my_lse", learner=True)(scores)).any()


def test_row_sum_worked_passes():
    generator = torch.Generator().manual_seed(1)
    P = torch.softmax(torch.randn(3, 6, dtype=torch.float64, generator=generator), -1)
    V, dO = (torch.randn(*shape, dtype=torch.float64, generator=generator)
             for shape in ((6, 4), (3, 4)))
    assert torch.allclose(_answer("my_row_sum")(dO, P @ V), ((dO @ V.T) * P).sum(-1))


def test_pv_vjp_worked_passes_and_placeholder_and_slips_fail():
    """Does the Step 1 check give the worked (dP, dV) ✓, and the placeholder, a dV from P
    instead of P^T (a shape error: 3 queries, 4 keys) and dP = dO V without the transpose ✗?"""
    generator = torch.Generator().manual_seed(8)
    P1 = torch.softmax(torch.randn(3, 4, dtype=torch.float64, generator=generator), dim=-1)
    V1, dO1 = (torch.randn(*shape, dtype=torch.float64, generator=generator)
               for shape in ((4, 2), (3, 2)))
    lesson = definitions("06_attention", "report", "error_of_pv_vjp", P1=P1, V1=V1, dO1=dO1)

    def verdict(my_pv_vjp) -> str:
        lesson["my_pv_vjp"] = my_pv_vjp
        return printed(lesson["report"], "check", lesson["error_of_pv_vjp"], 1e-12)[0]

    assert verdict(_answer("my_pv_vjp")).startswith("✓")
    assert verdict(_answer("my_pv_vjp", learner=True)).startswith("✗")
    assert verdict(lambda dO, P, V: (dO @ V.T, P @ dO)).startswith(
        "✗ check: your code raised RuntimeError")
    assert verdict(lambda dO, P, V: (dO @ V.T, (dO.T @ P).T)).startswith("✓")


def test_scores_vjp_worked_passes_and_placeholder_and_slips_fail():
    """Does the Step 3 check give the worked (dQ, dK) ✓, and the placeholder, a dQ and dK
    without the scale, and a dK from dS instead of dS^T (a shape error: 3 queries, 4 keys)
    ✗?"""
    generator = torch.Generator().manual_seed(7)
    Q3, K3, dS3 = (torch.randn(*shape, dtype=torch.float64, generator=generator)
                   for shape in ((3, 8), (4, 8), (3, 4)))
    lesson = definitions("06_attention", "report", "error_of_scores_vjp", Q3=Q3, K3=K3,
                         dS3=dS3)

    def verdict(my_scores_vjp) -> str:
        lesson["my_scores_vjp"] = my_scores_vjp
        return printed(lesson["report"], "check", lesson["error_of_scores_vjp"], 1e-12)[0]

    assert verdict(_answer("my_scores_vjp")).startswith("✓")
    assert verdict(_answer("my_scores_vjp", learner=True)).startswith("✗")
    assert verdict(lambda dS, Q, K, scale: (dS @ K, dS.T @ Q)).startswith("✗")
    assert verdict(lambda dS, Q, K, scale: (scale * dS @ K, scale * dS @ Q)).startswith(
        "✗ check: your code raised RuntimeError")


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
    assert not torch.allclose(_online(_answer("combine", learner=True), row, values)[0], exact)
    placeholder = _online(_answer("combine"), row, values, _answer("finish", learner=True))
    assert not torch.allclose(placeholder[0], exact)


def test_online_check_needs_finish_and_start_and_shows_no_answer():
    """Does the online-softmax check give ✓ only with the worked combine, finish and start
    (the placeholder start, m at 0, leaves 0 / 0 on the row moved 1000 down; finfo.min
    passes), and does the learner's copy of its code leave question 4 (o / ell, m + log ell)
    and question 5 (m starts at -inf) to the learner?"""
    lesson = definitions("06_attention", "report", "row", "values", "combine", "finish",
                         "start", "error_online")

    def verdict() -> str:
        return printed(lesson["report"], "check", lesson["error_online"], 1e-12)[0]

    assert verdict().startswith("✓")
    lesson["start"] = _answer("start", learner=True)
    assert verdict().startswith("✗")
    lesson["start"] = lambda: (torch.tensor(torch.finfo(torch.float64).min,
                                            dtype=torch.float64), 0.0,
                               torch.zeros(2, dtype=torch.float64))
    assert verdict().startswith("✓")
    lesson["start"] = _answer("start")
    lesson["finish"] = _answer("finish", learner=True)
    assert verdict().startswith("✗")
    checks = [cell for cell in code_cells("06_attention", learner=True)
              if "def error_online" in cell or "after the masked first block" in cell]
    assert len(checks) == 2
    assert not any("/ ell" in cell or "log(ell)" in cell for cell in checks)
    assert not any("-inf" in cell for cell in checks if "def error_online" in cell)


def _tiled_forward_check(tiled_forward) -> list[str]:
    """What check_tiled_forward prints for ``tiled_forward``."""
    from autograder.memory import TensorAccounting
    lesson = definitions("06_attention", "check_tiled_forward", TensorAccounting=TensorAccounting,
                         tiled_forward=tiled_forward)
    return printed(lesson["check_tiled_forward"])


def test_tiled_forward_check_passes_the_worked_and_names_a_row_block():
    """Does check_tiled_forward give the worked answer two ✓, and name the placeholder's whole
    score matrix and a block of queries against every key (right values, too big)?"""
    lines = _tiled_forward_check(_answer("tiled_forward"))
    assert len(lines) == 2 and all(line.startswith("✓") for line in lines), lines

    def row_block(Q, K, V, scale, block):
        outputs, lses = [], []
        for i in range(0, Q.shape[-2], block):
            scores = (Q[..., i:i + block, :] @ K.transpose(-2, -1)) * scale
            lse = torch.logsumexp(scores, -1)
            outputs.append(torch.exp(scores - lse.unsqueeze(-1)) @ V)
            lses.append(lse)
        return torch.cat(outputs, -2), torch.cat(lses, -1)

    lines = _tiled_forward_check(row_block)
    assert lines[0].startswith("✓") and "a block of queries against every key" in lines[1], lines
    placeholder = _answer("tiled_forward", learner=True)
    assert "the whole score matrix" in _tiled_forward_check(placeholder)[1]
    assert _tiled_forward_check(lambda *args, **kwargs: 1 / 0) == [
        "✗ tiled_forward raised ZeroDivisionError: division by zero"]


def test_tiled_forward_worked_makes_nothing_bigger_than_a_tile():
    from autograder.memory import TensorAccounting
    generator = torch.Generator().manual_seed(3)
    Q, K, V = (torch.randn(2, 40, 8, dtype=torch.float64, generator=generator) for _ in range(3))
    with TensorAccounting() as books:
        O, L = _answer("tiled_forward")(Q, K, V, 8 ** -0.5, block=8)
    scores = (Q @ K.transpose(-2, -1)) * 8 ** -0.5
    assert torch.allclose(O, torch.softmax(scores, -1) @ V)
    assert torch.allclose(L, torch.logsumexp(scores, -1))
    outputs = {tuple(O.shape), tuple(L.shape)}
    largest = max((s for s in books.phase.shapes if s not in outputs),
                  key=lambda s: torch.Size(s).numel())
    assert largest == (2, 8, 8)


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


def test_tile_backward_worked_sums_to_autograd_and_a_tile_row_sum_fails():
    from autograder.exercises.lesson06_attention.attention_steps import tile_errors

    def tile_row_sum(q, k, v, do, L, D, scale):  # D from the tile's own dP * P
        p = torch.exp((q @ k.T) * scale - L.unsqueeze(-1))
        dp = do @ v.T
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return scale * ds @ k, scale * ds.T @ q, p.T @ do

    my_row_sum = _answer("my_row_sum")
    assert max(tile_errors(_answer("tile_backward"), my_row_sum)) < 1e-12
    assert max(tile_errors(tile_row_sum, my_row_sum)) > 1e-3


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


def _tiles_check(my_row_sum) -> list[str]:
    """What the backward-by-tiles check cell prints for the worked tile_backward and
    ``my_row_sum``."""
    from autograder.exercises.lesson06_attention.attention_steps import (row_sum_is_right,
                                                                         tile_errors)
    from tests.tools.shown.lesson_code import cell_from, run_code
    namespace = definitions("06_attention", "report", "tile_backward", my_row_sum=my_row_sum,
                            row_sum_is_right=row_sum_is_right, tile_errors=tile_errors)
    return run_code(cell_from("06_attention", "def error_by_tiles():"), namespace)


def test_tiles_check_names_a_wrong_my_row_sum_before_blaming_tile_backward():
    """Does the tiles check give the worked answers ✓, and, with my_row_sum's placeholder (or
    one that raises), say that my_row_sum is not right instead of a ✗ for tile_backward?"""
    assert _tiles_check(_answer("my_row_sum"))[-1].startswith("✓ dQ, dK and dV by tiles")

    def raises(dO, O):
        raise NotImplementedError

    for my_row_sum in (_answer("my_row_sum", learner=True), raises):
        assert _tiles_check(my_row_sum) == [
            "✗ your my_row_sum (Derive: one number per query row) is not right yet: D is built "
            "from it"]
