"""No number the grader uses appears on a lesson's main path (issue 67): the page states what an
exercise decides (its range, its memory bound), and a failed check says the points, sizes and
tolerances it tried. Two properties, for every lesson:

- the grader's own numbers (each dtype's tolerance, the point it tries inside a constant's
  range, chosen off every round number) appear nowhere on the main path;
- a main-path sentence that speaks of the grader or the self-check holds no number but an
  ordinal (lesson 00, Exercise 2, rule 2) or a time."""

import re

import nbformat
import pytest

from autograder.exercises import EXERCISES
from autograder.tolerances import TOLERANCES
from grader.lessons import COURSE, lesson_names
from tools.reading import main_path

NUMBER = re.compile(r"(?<![\w.])([-−]?10\^\{?-?\d+\}?|[-−]?\d{1,3}(?:,\d{3})+|[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                    r"(?![\w^])")
TOLERANCE_WORDS = re.compile(r"\b(within|tolerance|rtol|atol|agrees?|close|accurate)\b", re.IGNORECASE)
GRADER_WORDS = re.compile(r"\b(grader|grading|graded|grades|hidden tests?|self-checks?|"
                          r"probe[sd]?)\b", re.IGNORECASE)
ORDINAL_OR_TIME = re.compile(r"(\b(lesson|exercise|step|part|rule)|✎)\s+\d+|\d+\s+(minutes|hours)\b",
                             re.IGNORECASE)


def main_path_prose(lesson: str) -> str:
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    return "\n".join(cell.source for cell in main_path(notebook) if cell.cell_type == "markdown")


def sentences(prose: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+|\n\n", prose)


def value_of(token: str) -> float:
    sign = -1.0 if token[0] in "-−" else 1.0
    token = token.lstrip("-−")
    if token.startswith("10^"):
        return sign * 10.0 ** int(token[3:].strip("{}"))
    return sign * float(token.replace(",", ""))


def numbers_on(text: str) -> dict[float, str]:
    """Every number written on ``text`` (1e-4, 10^{-4}, 4,096, 0.37), by value."""
    return {value_of(match.group(1)): match.group(1) for match in NUMBER.finditer(text)}


def graders_numbers(lesson: str) -> dict[float, str]:
    """The numbers the grader tries for ``lesson``'s exercises and no page needs: each
    dtype's tolerance (where the page speaks of accuracy: "within 1e-4"), and the point inside each constant's
    range (but a small integer: 2 groups is a natural example too)."""
    found = {}
    for name, exercise in EXERCISES.items():
        domain = exercise.domain
        if exercise.lesson != lesson or domain is None:
            continue
        for dtype in domain.dtypes:
            tolerance = domain.tolerances.get(dtype, TOLERANCES[dtype])
            found[tolerance.rtol] = f"{name}'s {dtype} rtol"
            found[tolerance.atol] = f"{name}'s {dtype} atol"
        for constant_name, constant in domain.constants.items():
            inside = constant.points()[1]
            if inside not in (constant.low, constant.high) and not (
                    constant.integer and abs(inside) < 10):
                found[float(inside)] = f"{name}'s point inside {constant_name}'s range"
    return found


def test_the_grader_s_numbers_are_parsed_as_a_page_writes_them():
    assert numbers_on("rtol 1e-4, n = 4,096, $10^{-5}$, x = -0.37.") == {
        1e-4: "1e-4", 4096.0: "4,096", 1e-5: "10^{-5}", -0.37: "-0.37"}


def leaks(lesson: str, prose: str) -> list[str]:
    """Each number of ``prose`` that ``lesson``'s grader tries, with its sentence."""
    grader = graders_numbers(lesson)
    return [f"{token!r} ({grader[value]}): {sentence.strip()!r}"
            for sentence in sentences(prose) for value, token in numbers_on(sentence).items()
            if value in grader and ("tol" not in grader[value]
                                    or TOLERANCE_WORDS.search(sentence))]


def test_a_tolerance_or_a_tried_point_on_the_page_is_found():
    scale = EXERCISES["ScaledSigmoid"].domain.constants["scale"].points()[1]
    planted = (f"Your float32 gradient must agree within 1e-4. The scale {scale!r} is tried. "
               "At 1e-4 the curve is flat.")
    assert len(leaks("01_sigmoid", planted)) == 2


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_grader_number_on_the_main_path(lesson):
    leaked = leaks(lesson, main_path_prose(lesson))
    assert not leaked, (f"{lesson}'s main path prints numbers its grader tries: {leaked}; a "
                        "failed check says them, the page does not")


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_number_where_the_page_speaks_of_grading(lesson):
    prose = re.sub(r"`[^`]*`|\$[^$]*\$", "", main_path_prose(lesson))
    quoted = [sentence.strip() for sentence in sentences(prose) if GRADER_WORDS.search(sentence)
              and NUMBER.search(ORDINAL_OR_TIME.sub("", sentence))]
    assert not quoted, (f"{lesson}'s main path says what grading tries, with numbers: {quoted}")
