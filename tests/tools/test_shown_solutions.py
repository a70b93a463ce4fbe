"""An ungraded "Try it" whose worked answer the solutions show (a WORKED region): the worked
code passes the lesson's own checker, and a plausible slip fails it."""

import ast
import contextlib
import io

import torch

from grader.lessons import LESSONS, WORKED, with_worked


def _lesson_08() -> str:
    return (LESSONS / "08_compile.py").read_text()


def _shown_cross() -> type:
    """The Cross class of lesson 08's worked region, as the solutions show it."""
    worked = next(match[1] for match in WORKED.finditer(_lesson_08()) if "class Cross" in match[1])
    namespace = {"torch": torch}
    exec(worked, namespace)  # noqa: S102 - our lesson
    return namespace["Cross"]


def _checker_output(cross) -> str:
    """What lesson 08's check_cross prints for ``cross``."""
    lesson = _lesson_08()
    source = lesson[lesson.index("def check_cross():"):lesson.index("\ncheck_cross()\n")]
    namespace = {"torch": torch, "Cross": cross}
    exec(source, namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_cross"]()
    return printed.getvalue()


def test_the_worked_cross_passes_every_check():
    """Does the worked answer lesson 08's solutions show pass its own checker, line by line?"""
    lines = _checker_output(_shown_cross()).splitlines()
    assert len(lines) == 4 and all(line.endswith("✓") for line in lines), lines


def test_the_checker_catches_a_backward_with_the_factors_swapped():
    """Does the checker fail a backward whose cross products have the wrong order (sign)?"""
    class SwappedBackward(_shown_cross()):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return torch.linalg.cross(grad_output, b), torch.linalg.cross(a, grad_output)

    output = _checker_output(SwappedBackward)
    assert "backward (gradcheck) ✗" in output


def _worked_step(name: str) -> dict:
    """The namespace of lesson 08's worked region that defines ``name``, as the solutions show."""
    worked = next(match[1] for match in WORKED.finditer(_lesson_08())
                  if f"{name} = lambda" in match[1])
    namespace = {"torch": torch}
    exec(worked, namespace)  # noqa: S102 - our lesson
    return namespace


def _checker_run(checker: str, **steps) -> list[str]:
    """The lines lesson 08's ``checker`` prints with ``steps`` defined."""
    lesson = _lesson_08()
    source = lesson[lesson.index(f"def {checker}("):lesson.index(f"\n{checker}()\n")]
    namespace = {"torch": torch, "F": torch.nn.functional, **steps}
    exec(source, namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace[checker]()
    return printed.getvalue().splitlines()


def test_the_worked_log_sum_exp_steps_pass_the_live_checker():
    """Do lesson 08's worked lse_weights and lse_jvp pass every line of check_lse_steps?"""
    steps = _worked_step("lse_weights")
    lines = _checker_run("check_lse_steps", lse_weights=steps["lse_weights"],
                         lse_jvp=steps["lse_jvp"])
    assert len(lines) == 6 and all(line.endswith("✓") for line in lines), lines


def test_the_lse_checker_catches_weights_from_a_new_sum_of_exponentials():
    """Does e^x / sum(e^x), right near 0, fail the live checker at |x| = 1000?"""
    naive = lambda x, y: x.exp() / x.exp().sum(-1, keepdim=True)  # noqa: E731
    lines = _checker_run("check_lse_steps", lse_weights=naive,
                         lse_jvp=lambda x, y, x_dot: (naive(x, y) * x_dot).sum(-1))
    assert lines[0].endswith("✓") and "1000, 999, 998): ✗" in lines[1], lines


def test_the_worked_softplus_slope_passes_and_an_extra_beta_fails():
    """Does lesson 08's worked softplus_slope pass check_softplus_slope, and beta times it
    fail at every point?"""
    slope = _worked_step("softplus_slope")["softplus_slope"]
    lines = _checker_run("check_softplus_slope", softplus_slope=slope)
    assert len(lines) == 4 and all(line.endswith("✓") for line in lines), lines
    wrong = _checker_run("check_softplus_slope", softplus_slope=lambda x, b: b * slope(x, b))
    assert all("✗" in line for line in wrong), wrong


# Lessons 06 and 07: each live checker's worked answer, as the solutions show it, passes the
# lesson's check, and the placeholder or a plausible slip fails it.

def _worked(lesson: str, name: str, learner: bool = False) -> dict:
    """The functions of ``lesson`` as the solutions show them (``learner``: as the learner's
    copy has them): ``name`` (with lesson 06's my_P_from_lse, which my_lse's check needs), run
    in a namespace of their own."""
    source = with_worked((LESSONS / f"{lesson}.py").read_text(), not learner)
    namespace = {"torch": torch}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in (name, "my_P_from_lse"):
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    return namespace


def test_06_attention_softmax_vjp_worked_passes_and_first_guess_fails():
    s, v = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    p = torch.softmax(s, dim=0)
    J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s)
    for learner, ok in ((False, True), (True, False)):
        vjp = _worked("06_attention", "my_softmax_vjp", learner)["my_softmax_vjp"]
        assert ((vjp(p, v) - J.T @ v).abs().max() < 1e-12) == ok


def test_06_attention_lse_worked_rebuilds_p_where_the_first_guess_overflows():
    scores = torch.randn(3, 6, generator=torch.Generator().manual_seed(0)) * 40
    scores[0, 0] = 100.0
    worked = _worked("06_attention", "my_lse")
    lse = worked["my_lse"](scores)
    error = (worked["my_P_from_lse"](scores, lse) - torch.softmax(scores, -1)).abs().max()
    assert torch.isfinite(lse).all() and error < 1e-5
    assert torch.isinf(_worked("06_attention", "my_lse", learner=True)["my_lse"](scores)).any()


def test_06_attention_row_sum_worked_passes():
    generator = torch.Generator().manual_seed(1)
    P = torch.softmax(torch.randn(3, 6, dtype=torch.float64, generator=generator), -1)
    V, dO = (torch.randn(*shape, dtype=torch.float64, generator=generator)
             for shape in ((6, 4), (3, 4)))
    row_sum = _worked("06_attention", "my_row_sum")["my_row_sum"]
    assert torch.allclose(row_sum(dO, P @ V), ((dO @ V.T) * P).sum(-1))


def _online(combine, row, values):
    m, ell = torch.tensor(float("-inf"), dtype=torch.float64), 0.0
    o = torch.zeros(2, dtype=torch.float64)
    for start in range(0, 12, 4):
        m, ell, o = combine(m, ell, o, row[start:start + 4], values[start:start + 4])
    return o / ell, m + torch.log(torch.as_tensor(ell))


def test_06_attention_combine_worked_passes_and_no_rescale_fails():
    row = torch.tensor([-3.0, 1, 0, 2, 5, -1, 0, 1, 7, 2, 3, 0], dtype=torch.float64)
    values = torch.randn(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    exact = torch.softmax(row, 0) @ values
    output, lse = _online(_worked("06_attention", "combine")["combine"], row, values)
    assert torch.allclose(output, exact) and torch.allclose(lse, torch.logsumexp(row, 0))

    def no_rescale(m, ell, o, s_new, v_new):  # rescales ell but not o
        m_new = torch.maximum(m, s_new.max())
        p = torch.exp(s_new - m_new)
        return m_new, torch.exp(m - m_new) * ell + p.sum(), o + p @ v_new

    assert not torch.allclose(_online(no_rescale, row, values)[0], exact)
    assert not torch.allclose(_online(_worked("06_attention", "combine", learner=True)["combine"],
                                      row, values)[0], exact)


def test_06_attention_tiled_forward_worked_makes_nothing_bigger_than_a_tile():
    from autograder.memory import TensorAccounting
    tiled_forward = _worked("06_attention", "tiled_forward")["tiled_forward"]
    generator = torch.Generator().manual_seed(3)
    Q, K, V = (torch.randn(2, 40, 8, dtype=torch.float64, generator=generator) for _ in range(3))
    with TensorAccounting() as books:
        O, L = tiled_forward(Q, K, V, 8 ** -0.5, block=8)
    scores = (Q @ K.transpose(-2, -1)) * 8 ** -0.5
    assert torch.allclose(O, torch.softmax(scores, -1) @ V)
    assert torch.allclose(L, torch.logsumexp(scores, -1))
    outputs = {tuple(O.shape), tuple(L.shape)}
    largest = max((s for s in books.phase.shapes if s not in outputs),
                  key=lambda s: torch.Size(s).numel())
    assert largest == (2, 8, 8)


def test_06_attention_slope_gradient_worked_matches_autograd():
    import torch.nn.functional as F
    slope_gradient = _worked("06_attention", "slope_gradient")["slope_gradient"]
    generator = torch.Generator().manual_seed(4)
    Q, K, V, grad_O = (torch.randn(2, 4, 6, c, generator=generator) for c in (8, 8, 5, 5))
    distance = (torch.arange(6)[:, None] - torch.arange(6)[None, :]).abs().float()
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625], requires_grad=True)
    F.scaled_dot_product_attention(Q, K, V, attn_mask=-slopes[:, None, None] * distance
                                   ).backward(grad_O)
    bias = (-slopes.detach()[:, None, None] * distance).expand(2, 4, 6, 6).clone().requires_grad_()
    F.scaled_dot_product_attention(Q, K, V, attn_mask=bias).backward(grad_O)
    assert torch.allclose(slope_gradient(bias.grad, distance), slopes.grad, atol=1e-5)
    assert not torch.allclose(bias.grad.sum(dim=(0, 2, 3)), slopes.grad, atol=1e-5)  # plain sum


def test_07_outputs_sort_backward_worked_passes_on_a_row_and_a_batch_and_gather_fails():
    x = torch.tensor([0.3, -1.2, 2.5, 0.9, -0.4])
    values, indices = torch.sort(x)
    grad_values = torch.tensor([10.0, 20.0, 30.0, 40.0, 50.0])
    leaf = x.clone().requires_grad_()
    torch.sort(leaf).values.backward(grad_values)
    for learner, ok in ((False, True), (True, False)):
        backward = _worked("07_outputs", "my_sort_backward", learner)["my_sort_backward"]
        assert torch.equal(backward(grad_values, indices), leaf.grad) == ok
        batched = backward(grad_values.reshape(1, 5), indices.reshape(1, 5))
        assert torch.equal(batched, leaf.grad.reshape(1, 5)) == ok


def _clamp_check_output(clamp: type) -> str:
    """What lesson 07's check_clamp_in_place prints for ``clamp``."""
    source = with_worked((LESSONS / "07_outputs.py").read_text(), True)
    namespace = {"torch": torch, "ClampInPlace": clamp}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("first_line",
                                                               "check_clamp_in_place"):
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_clamp_in_place"]()
    return printed.getvalue()


def _clamp(learner: bool = False) -> type:
    source = with_worked((LESSONS / "07_outputs.py").read_text(), not learner)
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.ClassDef) and node.name == "ClampInPlace")
    namespace = {"torch": torch}
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    return namespace["ClampInPlace"]


def test_07_outputs_clamp_worked_passes_its_check_and_a_tie_sent_to_the_bound_fails():
    assert _clamp_check_output(_clamp()).startswith("✓ gradients of x, lo and hi match")
    assert _clamp_check_output(_clamp(learner=True)).strip() == "ClampInPlace is not written yet"

    class TieToTheBound(_clamp()):
        @staticmethod
        def forward(ctx, x, lo, hi):
            where = (x >= hi).to(torch.int8) - (x <= lo).to(torch.int8)
            x.clamp_(lo, hi)
            ctx.mark_dirty(x)
            ctx.save_for_backward(where)
            return x

    assert _clamp_check_output(TieToTheBound).startswith("✗ the gradient of x")


def test_06_attention_tile_backward_worked_sums_to_autograd_and_a_tile_row_sum_fails():
    generator = torch.Generator().manual_seed(5)
    Q, K, V, dO = (torch.randn(16, 4, dtype=torch.float64, generator=generator)
                   for _ in range(4))
    leaves = [t.clone().requires_grad_() for t in (Q, K, V)]
    O = torch.softmax((leaves[0] @ leaves[1].T) * 0.5, dim=-1) @ leaves[2]
    O.backward(dO)
    L, D = torch.logsumexp((Q @ K.T) * 0.5, dim=-1), (dO * O.detach()).sum(-1)
    worked = _worked("06_attention", "tile_backward")["tile_backward"]

    def tile_row_sum(q, k, v, do, L, D, scale):  # D from the tile's own dP * P
        p = torch.exp((q @ k.T) * scale - L.unsqueeze(-1))
        dp = do @ v.T
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return scale * ds @ k, scale * ds.T @ q, p.T @ do

    for tile_backward, ok in ((worked, True), (tile_row_sum, False)):
        tiled = [torch.zeros_like(t) for t in (Q, K, V)]
        for i in (0, 8):
            for j in (0, 8):
                dq, dk, dv = tile_backward(Q[i:i + 8], K[j:j + 8], V[j:j + 8], dO[i:i + 8],
                                           L[i:i + 8], D[i:i + 8], 0.5)
                tiled[0][i:i + 8] += dq
                tiled[1][j:j + 8] += dk
                tiled[2][j:j + 8] += dv
        assert all(torch.allclose(t, leaf.grad) for t, leaf in zip(tiled, leaves)) == ok


# Lessons 00 and 01: each live checker's worked answer, as the solutions show it, passes the
# lesson's checker cell, and the placeholder or a named slip fails it.

def _code_cells(lesson: str, learner: bool = False) -> list[str]:
    """The code cells of ``lesson`` as the solutions show them (``learner``: as the learner's
    copy has them)."""
    source = with_worked((LESSONS / f"{lesson}.py").read_text(), not learner)
    return [cell.split("\n", 1)[1] for cell in source.split("\n# %%")[1:]
            if not cell.startswith(" [markdown]") and not cell.startswith(" nbgrader")]


def _live_check(lesson: str, name: str, learner: bool = False, **slip) -> list[str]:
    """The lines the checker cell of ``name`` (``if name is None:``) prints after the cell that
    defines ``name``; ``slip`` replaces that definition."""
    cells = _code_cells(lesson, learner)
    namespace = {"torch": torch}
    exec(next(cell for cell in cells if cell.startswith((f"{name} = ", f"def {name}("))),
         namespace)  # noqa: S102 - our lesson
    namespace.update(slip)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(next(cell for cell in cells if cell.startswith(f"if {name} is None:")),
             namespace)  # noqa: S102 - our lesson
    return printed.getvalue().splitlines()


def test_00_template_worked_square_entry_passes_and_a_lost_sign_fails():
    """Does lesson 00's worked my_square_entry pass its checker, and 2|x| on the diagonal fail?"""
    assert _live_check("00_template", "my_square_entry") == [
        "✓ all 9 entries (i, j) match autograd's Jacobian"]
    lines = _live_check("00_template", "my_square_entry",
                        my_square_entry=lambda i, j, x: 2 * abs(x[j]) if i == j else 0.0)
    assert lines[0].startswith("✗ 1 of 9 entries differ") and "(1, 1)" in lines[0], lines
    assert _live_check("00_template", "my_square_entry", learner=True) == [
        "Write your step 1 into my_square_entry first."]


def test_00_template_worked_outer_entry_passes_and_a_sparsity_only_answer_fails():
    """Does lesson 00's worked dy_du pass, and a True/False answer (right sparsity, no value)
    fail with the entry it gets wrong?"""
    assert _live_check("00_template", "dy_du") == [
        "✓ all 18 entries (i, j, k) match autograd's Jacobian"]
    lines = _live_check("00_template", "dy_du", dy_du=lambda i, j, k, u, v: i == k)
    assert lines[0].startswith("✗ 3 of 18 entries differ") and "you give 1, autograd 3" in lines[0]


def test_00_template_worked_outer_grad_u_passes_and_a_transposed_g_fails():
    """Does lesson 00's worked my_grad_u pass at every entry, and G on the wrong side or an
    unsummed product fail?"""
    lines = _live_check("00_template", "my_grad_u")
    assert len(lines) == 3 and all(line.endswith("✓") for line in lines), lines
    wrong_side = _live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G.T @ v)
    assert wrong_side[0].startswith("✗ my_grad_u raised RuntimeError"), wrong_side
    unsummed = _live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G * v)
    assert unsummed[0].startswith("✗ your result has shape (3, 2)"), unsummed
    no_v = _live_check("00_template", "my_grad_u", my_grad_u=lambda G, u, v: G.sum(1))
    assert any(line.endswith("✗") for line in no_v), no_v


def test_01_sigmoid_worked_forward_passes_and_the_textbook_formulas_fail():
    """Does lesson 01's worked my_sigmoid pass all eight points with a finite autograd gradient,
    and do 1 - 1 / (1 + e^x) (0 in the left tail) and e^x / (1 + e^x) (nan at 800) fail?"""
    lines = _live_check("01_sigmoid", "my_sigmoid")
    assert len(lines) == 9 and all(line.rstrip().endswith("✓") for line in lines[:8]), lines
    assert lines[8].endswith("✓ finite at every point"), lines
    cancels = _live_check("01_sigmoid", "my_sigmoid",
                          my_sigmoid=lambda x: 1 - 1 / (1 + torch.exp(x)))
    assert "✗ 0: does your formula subtract two numbers near 1 here?" in cancels[2], cancels
    overflows = _live_check("01_sigmoid", "my_sigmoid",
                            my_sigmoid=lambda x: torch.exp(x) / (1 + torch.exp(x)))
    assert "✗ not finite" in overflows[7] and "nan at x = [800.0]" in overflows[8], overflows
    assert _live_check("01_sigmoid", "my_sigmoid", learner=True) == [
        "Write your forward into my_sigmoid first."]


# Lesson 02: the three gradients of x @ W.T + b, checked shape first with out != in.

def _linear_check_output(gradients, *shapes) -> list[str]:
    """What lesson 02's check_linear_gradients prints for ``gradients`` on ``shapes``."""
    source = with_worked((LESSONS / "02_linear.py").read_text(), True)
    namespace = {"torch": torch, "my_linear_gradients": gradients}
    node = next(node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
                and node.name == "check_linear_gradients")
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_linear_gradients"](*shapes)
    return printed.getvalue().splitlines()


def test_02_linear_worked_gradients_pass_for_every_leading_shape_and_slips_fail():
    shapes = ((5, 3), (2, 5, 3), (3,))
    worked = _worked("02_linear", "my_linear_gradients")["my_linear_gradients"]
    lines = _linear_check_output(worked, *shapes)
    assert len(lines) == 3 and all(line.count("✓") == 3 for line in lines), lines
    placeholder = _worked("02_linear", "my_linear_gradients", learner=True)
    assert "grad_x ✗ not written yet" in _linear_check_output(
        placeholder["my_linear_gradients"], (5, 3))[0]
    swapped = lambda G, x, W: (G @ W, x.T @ G, G.sum())  # noqa: E731 - a transpose, a 0-d sum
    line, = _linear_check_output(swapped, (5, 3))
    assert "grad_x ✓" in line and "grad_weight ✗ shape (3, 4), not (4, 3)" in line, line
    assert "grad_bias ✗ shape (), not (4,)" in line, line
    batched = lambda G, x, W: (G @ W, G.mT @ x, G.sum(dim=0))  # noqa: E731 - right for 2-D only
    lines = _linear_check_output(batched, *shapes)
    assert lines[0].count("✓") == 3 and "grad_weight ✗ shape (2, 4, 3), not (4, 3)" in lines[1]
    assert "✗ raises RuntimeError" in lines[2], lines


def _tiled_forward_check(tiled_forward) -> list[str]:
    """What lesson 06's check_tiled_forward prints for ``tiled_forward``."""
    import math

    from autograder.memory import TensorAccounting
    source = with_worked((LESSONS / "06_attention.py").read_text(), True)
    namespace = {"torch": torch, "math": math, "TensorAccounting": TensorAccounting,
                 "tiled_forward": tiled_forward}
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef) and node.name == "check_tiled_forward")
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_tiled_forward"]()
    return printed.getvalue().splitlines()


def test_06_attention_tiled_forward_check_passes_the_worked_and_names_a_row_block():
    """Does check_tiled_forward give the worked answer two ✓, and name the placeholder's whole
    score matrix and a block of queries against every key (right values, too big)?"""
    worked = _worked("06_attention", "tiled_forward")["tiled_forward"]
    lines = _tiled_forward_check(worked)
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
    placeholder = _worked("06_attention", "tiled_forward", learner=True)["tiled_forward"]
    assert "the whole score matrix" in _tiled_forward_check(placeholder)[1]
    assert _tiled_forward_check(lambda *args, **kwargs: 1 / 0) == [
        "✗ tiled_forward raised ZeroDivisionError: division by zero"]


def _slope_check(slope_gradient) -> str:
    """What lesson 06's check_slope_gradient prints for ``slope_gradient``."""
    source = with_worked((LESSONS / "06_attention.py").read_text(), True)
    namespace = {"torch": torch, "F": torch.nn.functional, "slope_gradient": slope_gradient}
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef) and node.name == "check_slope_gradient")
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_slope_gradient"]()
    return printed.getvalue()


def test_06_attention_slope_check_passes_the_worked_and_fails_a_plain_sum():
    """Does check_slope_gradient give the worked answer ✓, a plain sum of dS' ✗, and say the
    placeholder is not written yet?"""
    assert _slope_check(_worked("06_attention", "slope_gradient")["slope_gradient"]
                        ).startswith("✓")
    assert _slope_check(lambda grad_S, distance: -grad_S.sum(dim=(0, 2, 3))).startswith("✗")
    placeholder = _worked("06_attention", "slope_gradient", learner=True)["slope_gradient"]
    assert _slope_check(placeholder).strip() == "slope_gradient is not written yet"


def _from_y_check(answers: dict) -> list[str]:
    """What lesson 07's check_derivatives_from_y prints for ``answers``."""
    import math
    source = (LESSONS / "07_outputs.py").read_text()
    namespace = {"torch": torch, "math": math}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("first_line",
                                                               "check_derivatives_from_y"):
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_derivatives_from_y"](answers)
    return printed.getvalue().splitlines()


def test_07_outputs_derivative_from_y_check_passes_softplus_and_fails_sigmoid_of_y():
    """Does the from-y checker pass 1 - e^-y for softplus and the three other answers, and fail
    sigmoid(y), the derivative written in x but fed y?"""
    right = {"softplus": lambda y: 1 - torch.exp(-y), "tanh": lambda y: 1 - y ** 2,
             "sin": "y is not enough", "cube": lambda y: 3 * y.abs() ** (2 / 3)}
    lines = _from_y_check(right)
    assert len(lines) == 4 and all(line.startswith("✓") for line in lines), lines
    assert _from_y_check({**right, "softplus": torch.sigmoid})[0].startswith("✗   softplus")


# Lesson 03: LSQ's two derivatives, checked against autograd through the detach trick.

def _lsq_check_output(dy_dx, dy_ds) -> list[str]:
    """What lesson 03's check_fake_quantize_derivation prints for ``dy_dx`` and ``dy_ds``."""
    import math

    source = with_worked((LESSONS / "03_ste.py").read_text(), True)
    namespace = {"torch": torch, "math": math, "my_dy_dx": dy_dx, "my_dy_ds": dy_ds,
                 "predicted_y": None, "predicted_dy_dx": None, "predicted_dy_ds": None}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in (
                "compare", "lsq_by_autograd", "check_fake_quantize_derivation"):
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_fake_quantize_derivation"]()
    return printed.getvalue().splitlines()


def test_03_ste_worked_lsq_derivatives_pass_and_the_minus_v_only_slip_fails():
    source = with_worked((LESSONS / "03_ste.py").read_text(), True)
    start = source.index("my_dy_dx = lambda")
    namespace = {"torch": torch}
    exec(source[start:source.index("\n\n", start)], namespace)  # noqa: S102 - our lesson
    lines = _lsq_check_output(namespace["my_dy_dx"], namespace["my_dy_ds"])
    assert lines[:2] == ["s = 0.5: dy/dx ✓; dy/ds ✓", "s = 1.5: dy/dx ✓; dy/ds ✓"], lines
    assert lines[2] == "question 5, y: no prediction written", lines

    def minus_v_only(x, s, qmin, qmax):  # forgets the product rule's round(v) term
        v = x / s
        return torch.where(v < qmin, float(qmin), torch.where(v > qmax, float(qmax), -v))

    def one_over_s(x, s, qmin, qmax):  # keeps the chain rule's 1/s, drops the outer factor s
        v = x / s
        return ((v >= qmin) & (v <= qmax)) / s

    lines = _lsq_check_output(one_over_s, minus_v_only)
    assert lines[0].startswith("s = 0.5: dy/dx ✗ at v = -4: yours 2, autograd's 1"), lines
    assert "dy/ds ✗ at v = -4: yours 4, autograd's 0" in lines[0], lines


# Lessons 04 and 05: the live derivation checkers pass the worked answers and show where a
# named slip is off.

def _run_cells(lesson: str, cells: list[str], **slip) -> list[str]:
    """What ``cells`` of ``lesson`` (solutions' copy, the first cell holding each given start)
    print, run in order in one namespace, ``slip`` replacing names after the first cell."""
    import math

    sources = _code_cells(lesson)
    namespace = {"torch": torch, "math": math}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, start in enumerate(cells):
            exec(next(cell for cell in sources if start in cell), namespace)  # noqa: S102
            if index == 0:
                namespace.update(slip)
    return printed.getvalue().splitlines()


def test_04_double_backward_swish_derivation_worked_passes_and_a_lost_beta_is_located():
    """Does the worked my_dy_dx / my_dL_dbeta pass at Hint 3's point and every beta, and a
    dy/dx without beta fail with the point and both values?"""
    cells = ["my_dy_dx = lambda", "def check_swish_derivation():\n"]  # the cell calls it
    lines = _run_cells("04_double_backward", cells)
    assert len(lines) == 5 and all(line.endswith("dL/dbeta ✓") for line in lines), lines
    assert lines[0].startswith("Hint 3, beta = 2.0: dy/dx ✓"), lines
    no_beta = _run_cells("04_double_backward", cells, my_dy_dx=lambda x, beta: (
        torch.sigmoid(x) * (1 + x * (1 - torch.sigmoid(x)))))
    assert "dy/dx ✗ at x = -0.5: yours 0.2600, autograd 0.0723" in no_beta[0], no_beta


def test_04_double_backward_backward_of_backward_worked_passes_and_slips_are_named():
    """Do the worked grad_g, grad_a, grad_c agree with autograd, and a one-term grad_g and a
    transposed grad_a fail with what is off?"""
    cells = ["grad_g = lambda", "def b(g, a, c):"]
    lines = _run_cells("04_double_backward", cells)
    assert len(lines) == 3 and all("✓" in line for line in lines), lines
    slips = _run_cells("04_double_backward", cells,
                       grad_g=lambda gbar_a, gbar_c, g, a, c: gbar_a @ c,
                       grad_a=lambda gbar_a, gbar_c, g, a, c: gbar_c @ g.T)
    assert slips[0].startswith("grad_g ✗ 12 of 12 entries differ; furthest off at"), slips
    assert slips[1] == "grad_a ✗ shape (2, 3), not (3, 2): the transpose's shape", slips


def test_05_checkpointing_peak_worked_passes_and_a_peak_without_the_held_inputs_fails():
    """Does the worked my_peak / my_best_k pass every counted case, and a peak that forgets the
    k held inputs fail (and hold back the my_best_k check)?"""
    cells = ["my_peak = lambda", "from autograder.exercises.checkpoint_memory import"]
    lines = _run_cells("05_checkpointing", cells)
    assert len(lines) == 10 and all(line.endswith("✓") for line in lines[:8]), lines
    forgets = _run_cells("05_checkpointing", cells, my_peak=lambda n, a, k: n / k * a)
    assert forgets[0] == "n = 16, a = 2, k =  1: counted  33, yours  32.00 ✗", forgets
    assert forgets[-1].startswith("my_best_k: checked once every my_peak line"), forgets




def test_06_attention_report_marks_the_tolerance_and_shows_an_error_in_one_line():
    """Does lesson 06's report (its live checkers' verdict) give ✓ under the tolerance, ✗ over
    it or for nan, and one line for an error the learner's code raises?"""
    source = (LESSONS / "06_attention.py").read_text()
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef) and node.name == "report")
    namespace: dict = {}
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson

    def printed(largest_error) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            namespace["report"]("check", largest_error, 1e-12)
        return out.getvalue()

    assert printed(lambda: 1e-15).startswith("✓ check: largest error 1e-15")
    assert printed(lambda: 0.17).startswith("✗") and printed(lambda: float("nan")).startswith("✗")

    def raises():
        raise RuntimeError("shapes cannot be multiplied\nsecond line")

    assert printed(raises) == "✗ check: your code raised RuntimeError: shapes cannot be multiplied\n"
