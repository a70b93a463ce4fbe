"""Derive, don't transcribe: no line of a graded exercise's backward appears anywhere in the
learner's notebook (code, markdown, collapsed hints) outside that exercise's answer cell."""

import functools
import re

import nbformat
import pytest

from grader.lessons import lesson_names, source_notebook
from grader.notebook_format import grade_id
from tools.notebooks import COURSE

# the functions that hold a gradient formula: backward, its helpers, a jvp, a batching rule
GRADIENT_FUNCTION = re.compile(r"^(\s*)def \w*(backward|jvp|vmap|grad)\w*\(")
# lines too generic to give anything away: unpacking what was saved, control flow, returning
# names computed above, decorators
TRIVIAL = re.compile(r"^([\w, ]+=\s*ctx\.\w+|.*:|@.*|return\s+[\w, ]+|return\s+grad_output)$")
# a Triton kernel's indexing and loads: every kernel has them, they are the method, not an answer
KERNEL_BOOKKEEPING = re.compile(r"tl\.(program_id|arange|load)\(|_ptr \+ |\.stride\(")
# what makes a line a formula: arithmetic, or a tensor op that moves gradients around
FORMULA = re.compile(r"[*@/]| [+-] |\.(sum|mean|cumsum|cumprod|flip|index_add|scatter\w*|gather|"
                     r"expand\w*|where|einsum|matmul|mul|exp|log\w*|sigmoid|softmax|sum_to_size)\(")


def gradient_lines(code: str) -> set[str]:
    """The non-trivial solution lines (between BEGIN and END SOLUTION, or all of ``code`` when it
    has no markers) of the gradient functions that ``code`` defines."""
    lines, inside, in_solution = set(), None, "### BEGIN SOLUTION" not in code
    for line in code.splitlines():
        if "### BEGIN SOLUTION" in line or "### END SOLUTION" in line:
            in_solution = "BEGIN" in line
            continue
        if inside is not None and line.strip() and len(line) - len(line.lstrip()) <= inside:
            inside = None
        if inside is not None:
            text = line.split("#")[0].strip()
            if (in_solution and len(text) >= 12 and FORMULA.search(text)
                    and not TRIVIAL.match(text) and not KERNEL_BOOKKEEPING.search(text)):
                lines.add(text)
        elif match := GRADIENT_FUNCTION.match(line):
            inside = len(match[1])
    return lines


def _tokens(text: str) -> str:
    """``text`` as Python-like tokens joined by a separator: spacing never hides a match."""
    return "\x1f".join(re.findall(r"\w+|\S", text))


def _shows(text: str, line: str) -> bool:
    """Does ``text`` hold ``line`` whole (not as the start of ``weight.T`` or ``f(...)``)?"""
    return re.search(rf"(?:^|\x1f){re.escape(_tokens(line))}(?=$|\x1f(?![.(\[]))",
                     text) is not None


@functools.cache
def _answers(lesson: str) -> dict[str, set[str]]:
    """Each graded answer cell's id and the lines of its gradient functions."""
    return {grade_id(cell): gradient_lines(cell.source) for cell in source_notebook(lesson).cells
            if (grade_id(cell) or "").startswith("answer_")}


@functools.cache
def _shown(lesson: str) -> list[tuple[str | None, str]]:
    """Each cell of the learner's notebook: its grade id and its tokens."""
    learner = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    return [(grade_id(cell), _tokens(cell.source)) for cell in learner.cells]


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_line_of_a_graded_backward_is_on_screen(lesson):
    """Does any line of a graded exercise's backward appear in course/ outside its answer cell?"""
    leaks = [(answer, line) for answer, lines in _answers(lesson).items()
             for line in sorted(lines)
             for cell_id, text in _shown(lesson) if cell_id != answer and _shows(text, line)]
    assert not leaks, f"course/{lesson}.ipynb shows backward code of {leaks[0][0]}: {leaks[0][1]!r}"


@pytest.mark.parametrize("lesson", lesson_names()[:-1])
def test_no_earlier_lesson_shows_a_later_lessons_backward(lesson):
    """Does a worked example or hint of ``lesson`` hand over a line a later lesson grades?"""
    later = lesson_names()[lesson_names().index(lesson) + 1:]
    leaks = [(f"{other}'s {answer}", line) for other in later
             for answer, lines in _answers(other).items() for line in sorted(lines)
             for _, text in _shown(lesson) if _shows(text, line)]
    assert not leaks, f"course/{lesson}.ipynb shows backward code of {leaks[0][0]}: {leaks[0][1]!r}"


def test_gradient_lines_finds_the_formula_and_skips_the_bookkeeping():
    """Does the line finder keep a gradient formula and drop unpacking and pass-through?"""
    code = ("class Square(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 2\n\n"
            "    @staticmethod\n    def backward(ctx, grad_output):\n"
            "        x, = ctx.saved_tensors\n        return 2 * x * grad_output  # chain rule\n")
    assert gradient_lines(code) == {"return 2 * x * grad_output"}


def test_a_line_is_found_whole_whatever_its_spacing():
    """Is a formula found with other spacing, but not inside a longer expression?"""
    assert _shows(_tokens("g = 1  # note\nreturn grad_output*local\n"), "return grad_output * local")
    assert not _shows(_tokens("grad_x = grad_output @ weight.T"), "grad_x = grad_output @ weight")
