"""Derive, don't transcribe: no line of a graded exercise's backward appears anywhere in the
learner's notebook (code, markdown, collapsed hints) outside that exercise's answer cell; none of
its final formulas (``lessons/formulas/<lesson>.toml``) appears at or above its answer cell; and
its prompt does not name an op its backward is built from."""

import functools
import re
import tomllib

import nbformat
import pytest

from grader.lessons import LESSONS, lesson_names, source_notebook
from grader.notebook_format import grade_id
from tools.notebooks import COURSE, SOLUTIONS

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


def solution_gradient_code(code: str):
    """Each solution line (between BEGIN and END SOLUTION, or all of ``code`` when it has no
    markers) inside a gradient function that ``code`` defines, its comment cut off."""
    inside, in_solution = None, "### BEGIN SOLUTION" not in code
    for line in code.splitlines():
        if "### BEGIN SOLUTION" in line or "### END SOLUTION" in line:
            in_solution = "BEGIN" in line
            continue
        if inside is not None and line.strip() and len(line) - len(line.lstrip()) <= inside:
            inside = None
        if inside is not None:
            if in_solution:
                yield line.split("#")[0].strip()
        elif match := GRADIENT_FUNCTION.match(line):
            inside = len(match[1])


def gradient_lines(code: str) -> set[str]:
    """The non-trivial solution lines of the gradient functions that ``code`` defines."""
    return {text for text in solution_gradient_code(code)
            if len(text) >= 12 and FORMULA.search(text) and not TRIVIAL.match(text)
            and not KERNEL_BOOKKEEPING.search(text)}


def _tokens(text: str) -> str:
    """``text`` as Python-like tokens joined by a separator: spacing never hides a match."""
    return "\x1f".join(re.findall(r"\w+|\S", text))


def _shows(text: str, line: str) -> bool:
    """Does ``text`` hold ``line`` whole (not as the start of ``weight.T`` or ``f(...)``)?"""
    return _whole_line(line).search(text) is not None


@functools.cache
def _whole_line(line: str) -> re.Pattern:
    """``line``'s tokens, not followed by an attribute, a call or an index."""
    return re.compile(rf"(?:^|\x1f){re.escape(_tokens(line))}(?=$|\x1f(?![.(\[]))")


@functools.cache
def _answer_sources(lesson: str) -> dict[str, str]:
    """Each graded answer cell's id and its source, solution included."""
    return {grade_id(cell): cell.source for cell in source_notebook(lesson).cells
            if (grade_id(cell) or "").startswith("answer_")}


@functools.cache
def _answers(lesson: str) -> dict[str, set[str]]:
    """Each graded answer cell's id and the lines of its gradient functions."""
    return {answer: gradient_lines(source) for answer, source in _answer_sources(lesson).items()}


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


# --- the maths: final formulas, written in code or LaTeX ----------------------------------------

# spacing and LaTeX sizing never hide a formula
LATEX_SPACING = re.compile(r"\s+|\\[,;!]|\\(left|right|big|Big|bigg|Bigg)\b")
EXERCISE_HEADING = re.compile(r"^#+ ✎", re.MULTILINE)
# calls that are bookkeeping in any backward (shapes, dtypes, devices, conversions), never the
# op a prompt could give away
BOOKKEEPING_CALLS = {"apply", "as_tensor", "clone", "contiguous", "cpu", "detach", "dim", "double",
                     "float", "from_numpy", "half", "isinstance", "item", "len", "numel", "numpy",
                     "range", "reshape", "size", "to", "tolist", "tuple", "type_as", "view",
                     "view_as", "zip", "unsqueeze", "squeeze"}


def normalised(text: str) -> str:
    return LATEX_SPACING.sub("", text)


@functools.cache
def final_formulas(lesson: str) -> dict[str, dict]:
    """``lessons/formulas/<lesson>.toml``: per answer cell, ``fragments`` of its final formulas
    and the ops its contract itself names (``named_by_contract``)."""
    path = LESSONS / "formulas" / f"{lesson}.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


@functools.cache
def _learner_cells(lesson: str) -> tuple[nbformat.NotebookNode, ...]:
    return tuple(nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4).cells)


def _answer_index(cells: list, answer: str) -> int:
    return next(index for index, cell in enumerate(cells) if grade_id(cell) == answer)


def backward_calls(code: str) -> set[str]:
    """The functions and methods the solution's gradient functions in ``code`` call."""
    calls = {call for text in solution_gradient_code(code)
             for call in re.findall(r"(?:\.|\btorch\.|\bF\.)(\w+)\(", text)}
    return calls - BOOKKEEPING_CALLS


def prompt(cells: list, answer_index: int) -> str:
    """The markdown from the exercise's heading down to its answer cell."""
    start = max(index for index in range(answer_index + 1)
                if cells[index].cell_type == "markdown"
                and EXERCISE_HEADING.search(cells[index].source))
    return "\n".join(cell.source for cell in cells[start:answer_index]
                     if cell.cell_type == "markdown")


def names(markdown: str, op: str) -> bool:
    """Does ``markdown`` name ``op`` in code (inline or fenced), outside its collapsed blocks?"""
    shown = re.sub(r"<details>.*?</details>", " ", markdown, flags=re.DOTALL)
    code = re.findall(r"```.*?```|`[^`\n]+`", shown, flags=re.DOTALL)
    return any(re.search(rf"\b{re.escape(op)}\b", span) for span in code)


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_graded_exercise_lists_its_final_formulas(lesson):
    """Does each answer cell list fragments that the solutions notebook really shows?"""
    listed = final_formulas(lesson)
    answers = set(_answers(lesson))
    assert set(listed) == answers, (
        f"lessons/formulas/{lesson}.toml lists {sorted(set(listed) - answers)} that are not "
        f"answer cells and misses {sorted(answers - set(listed))}")
    solutions = normalised("\n".join(
        cell.source for cell in nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4).cells))
    for answer, entry in listed.items():
        assert entry["fragments"], f"{answer} lists no fragment of its final formulas"
        unseen = [fragment for fragment in entry["fragments"]
                  if normalised(fragment) not in solutions]
        assert not unseen, (f"{lesson} {answer}: {unseen} appear nowhere in the solutions "
                            "notebook: a fragment must be one the course really writes")


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_final_formula_is_shown_at_or_above_its_answer_cell(lesson):
    """Does a final formula appear in the learner's notebook before the learner wrote it?"""
    cells = _learner_cells(lesson)
    for answer, entry in final_formulas(lesson).items():
        above = [(index, normalised(cell.source))
                 for index, cell in enumerate(cells[:_answer_index(cells, answer) + 1])]
        leaks = [(index, fragment) for fragment in entry["fragments"]
                 for index, text in above if normalised(fragment) in text]
        assert not leaks, (f"course/{lesson}.ipynb cell {leaks[0][0]} shows {answer}'s final "
                           f"formula {leaks[0][1]!r} before its answer cell")


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_prompt_names_an_op_its_backward_is_built_from(lesson):
    """Does an exercise's prompt hand over the op its backward needs?"""
    cells = _learner_cells(lesson)
    for answer in _answers(lesson):
        allowed = set(final_formulas(lesson).get(answer, {}).get("named_by_contract", []))
        text = prompt(cells, _answer_index(cells, answer))
        named = sorted(op for op in backward_calls(_answer_sources(lesson)[answer]) - allowed
                       if names(text, op))
        assert not named, f"course/{lesson}.ipynb: the prompt of {answer} names {named}"


def test_a_formula_is_found_whatever_its_spacing():
    """Is a LaTeX or code formula found with other spacing and sizing?"""
    assert normalised(r"y \, (1 - y)") in normalised(r"$\left( y(1-y) \right)$")
    assert normalised("grad_output*(1 - y)") in normalised("g = grad_output * (1 - y)")


def test_backward_calls_are_the_ops_of_the_solution_backward():
    """Are the solution backward's ops found, and forward's and bookkeeping's left out?"""
    code = ("class Cumsum(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, x):\n        return x.cumsum(0)\n\n"
            "    @staticmethod\n    def backward(ctx, grad_output):\n        ### BEGIN SOLUTION\n"
            "        g = grad_output.flip(0).cumsum(0).flip(0)\n"
            "        return torch.where(g > 0, g, g).contiguous()\n        ### END SOLUTION\n")
    assert backward_calls(code) == {"flip", "cumsum", "where"}


def test_a_prompt_names_an_op_only_in_code_and_outside_hints():
    """Is an op named in code spans, but not as an English word or inside a collapsed hint?"""
    assert names("Use `x.flip(0)` here.", "flip")
    assert not names("Flip the sum, then cumsum it.", "cumsum")
    assert not names("<details><summary>Hint</summary>`cumsum`</details>", "cumsum")
