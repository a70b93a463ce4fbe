"""Lesson 09's live checks of the derivation steps (a + b, Exercises 1-5): each worked answer
passes every line, the learner's placeholder asks to be written, and a named slip fails."""

import torch

from tests.tools.shown.lesson_code import definitions, printed

CHECKS = {"bm_grad_b": "check_bm_grad_b", "prod_J_row": "check_prod_J_row",
          "cumsum_J": "check_cumsum_J", "select_J": "check_select_J",
          "add_grads": "check_add_grads", "jacobian_column": "check_jacobian_column"}


def _live(name: str, yours=None, learner: bool = False) -> list[str]:
    """What the check of ``name`` prints for the worked answer (``learner``: the placeholder),
    or for ``yours`` when given."""
    lesson = definitions("09_patterns", name, CHECKS[name], "live_check", learner=learner)
    if yours is not None:
        lesson[name] = yours
    return printed(lesson[CHECKS[name]])


def test_live_checks_pass_their_worked_answers_and_ask_for_the_placeholder():
    for name in CHECKS:
        lines = [line for line in _live(name) if not line.startswith("  step 3")]  # shown only
        assert len(lines) >= 2 and all(line.startswith("✓") for line in lines), (name, lines)
        assert _live(name, learner=True) == [f"Write {name} first."]


def test_live_checks_fail_the_named_slips():
    # b's sum without its dim of size 1
    lines = _live("bm_grad_b", lambda a, g: (g * a).sum((0, 2)))
    assert all(line.startswith("✗") and "shapes" in line for line in lines), lines
    # the whole product at every entry (the factor not taken out)
    lines = _live("prod_J_row", lambda x: x.prod().expand_as(x))
    checked = [line for line in lines if not line.startswith("  step 3")]
    assert checked and all(line.startswith("✗") for line in checked), lines
    # the worked division is checked on slices with no zero and only shown on those of step 3
    shown = [line for line in _live("prod_J_row") if line.startswith("  step 3")]
    assert len(shown) == 2 and "nan" in shown[0], shown
    # the other triangle
    lines = _live("cumsum_J", lambda n: torch.triu(torch.ones(n, n)))
    assert lines[0].startswith("✓") and all(line.startswith("✗") for line in lines[1:]), lines
    # the matrix transposed, (n_rows, len(index))
    lines = _live("select_J", lambda index, n: (index[:, None] == torch.arange(n)).double().T)
    assert all(line.startswith("✗") for line in lines), lines
    # an error in the learner's code is shown in one line, and the check goes on
    lines = _live("cumsum_J", lambda n: 1 / 0)
    assert len(lines) == 3 and all("raised ZeroDivisionError" in line for line in lines), lines


def test_add_grads_and_jacobian_column_checks_fail_their_slips():
    # b's gradient summed over the wrong dim (its shape is a's length, not b's)
    lines = _live("add_grads", lambda a, b, g: (g.sum(1, keepdim=True), g.sum(1)))
    assert len(lines) == 2 and all(line.startswith("✗") and "shapes" in line for line in lines)
    # Normalize's Jacobian without the term from dn/dx
    lines = _live("jacobian_column", lambda y, n: torch.eye(len(y), dtype=y.dtype)[:, 0] / n)
    assert len(lines) == 3 and all(line.startswith("✗") and "error" in line for line in lines)


def test_live_check_crosses_a_nan_the_error_maximum_would_skip():
    # grad_b all nan: Python's max over [0.0, nan] is 0.0, a false check mark
    lines = _live("bm_grad_b", lambda a, g: (g * a).sum((0, 2)).unsqueeze(1) * float("nan"))
    assert len(lines) == 2 and all(line.startswith("✗") and "nan or inf" in line
                                   for line in lines), lines
    # an inf where autograd's value is finite is crossed too
    lines = _live("cumsum_J", lambda n: torch.tril(torch.ones(n, n)) / torch.zeros(n, n))
    assert all(line.startswith("✗") and "nan or inf" in line for line in lines), lines
