"""Lessons 08 and 09: each live check's worked answer, as the solutions show it, passes every
line of its check; the learner's placeholder asks to be written; a plausible slip fails. (Apart
from test_shown_solutions.py, which is past the 350-line limit.)"""

import ast
import contextlib
import io

import torch

from grader.lessons import LESSONS, with_worked


def _lesson_08() -> str:
    return (LESSONS / "08_compile.py").read_text()


_LIVE_09 = {"bm_grads": "check_bm_grads", "prod_J_row": "check_prod_J_row",
            "cumsum_J": "check_cumsum_J", "select_J": "check_select_J"}


def _live_09(name: str, yours=None, learner: bool = False) -> list[str]:
    """The lines lesson 09's check of ``name`` prints for the worked answer (``learner``: the
    placeholder), or for ``yours`` when given."""
    source = with_worked((LESSONS / "09_patterns.py").read_text(), not learner)
    namespace = {"torch": torch}
    for node in ast.parse(source).body:
        defined = ({node.name} if isinstance(node, ast.FunctionDef) else
                   {target.id for target in getattr(node, "targets", [])
                    if isinstance(target, ast.Name)})
        if defined & {name, _LIVE_09[name], "live_check"}:
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    if yours is not None:
        namespace[name] = yours
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace[_LIVE_09[name]]()
    return printed.getvalue().splitlines()


def test_09_patterns_live_checks_pass_their_worked_answers_and_ask_for_the_placeholder():
    for name in _LIVE_09:
        lines = _live_09(name)
        assert len(lines) >= 2 and all(line.startswith("✓") for line in lines), (name, lines)
        assert _live_09(name, learner=True) == [f"Write {name} first."]


def test_09_patterns_live_checks_fail_the_named_slips():
    # b's sum without its dim of size 1
    lines = _live_09("bm_grads", lambda a, b, g: ((g * b).sum(1, keepdim=True),
                                                  (g * a).sum((0, 2))))
    assert all(line.startswith("✗") and "shapes" in line for line in lines), lines
    # the product divided by the entry: nan where the slice holds a zero
    lines = _live_09("prod_J_row", lambda x: x.prod() / x)
    assert lines[0].startswith("✓") and all(line.startswith("✗") for line in lines[1:]), lines
    # the other triangle
    lines = _live_09("cumsum_J", lambda n: torch.triu(torch.ones(n, n)))
    assert lines[0].startswith("✓") and all(line.startswith("✗") for line in lines[1:]), lines
    # the matrix transposed, (n_rows, len(index))
    lines = _live_09("select_J", lambda index, n: (index[:, None] == torch.arange(n)).double().T)
    assert all(line.startswith("✗") for line in lines), lines
    # an error in the learner's code is shown in one line, and the check goes on
    lines = _live_09("cumsum_J", lambda n: 1 / 0)
    assert len(lines) == 3 and all("raised ZeroDivisionError" in line for line in lines), lines


def _batch_dim_check(rule_returns_input_bdim: bool) -> list[str]:
    """What lesson 08's check_batch_dim_at_1 prints for a squared_norm operator whose batching
    rule returns 0 after moving the batch dim first (the solution's), or, like roll_one's rule,
    the input's batch dim."""
    source = _lesson_08()
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef) and node.name == "check_batch_dim_at_1")
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
    namespace = {"torch": torch, "squared_norm": squared_norm}
    exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_batch_dim_at_1"]()
    return printed.getvalue().splitlines()


def test_08_compile_batch_dim_check_passes_the_solutions_rule_and_fails_roll_ones():
    """Does the live check before squared_norm's self-check pass a rule that returns 0 after
    moving the batch dim first, and fail roll_one's rule (the input's batch dim) at dim 0?"""
    lines = _batch_dim_check(rule_returns_input_bdim=False)
    assert len(lines) == 2 and all(line.startswith("✓") for line in lines), lines
    lines = _batch_dim_check(rule_returns_input_bdim=True)
    assert lines[0].startswith("✗ dim= 0: shape (4, 5)") and lines[1].startswith("✓"), lines
