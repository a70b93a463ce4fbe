"""The main line of each lesson reads in about two hours: prose and code at 200 words a minute
and a minute per cell run, collapsed blocks (hints, "Compare with yours", "In practice") left
out. `pytest -s` prints the table."""

import nbformat
import pytest

from grader.lessons import lesson_names
from tools.reading import GOAL_MINUTES, lesson_minutes, main_line_words, reading_minutes, table


def test_collapsed_blocks_are_off_the_main_line():
    """Are a hint's words left out and the prose around it counted?"""
    markdown = ("Derive the gradient first.\n<details><summary>Hint 1</summary>\n"
                "Use the product rule on both factors.\n</details>\nThen write it.")
    assert main_line_words(markdown) == 7


def test_a_cell_costs_a_minute_and_its_words():
    """Does a code cell count its words and a minute, and a markdown cell its prose only?"""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(" ".join(["word"] * 400)),
        nbformat.v4.new_code_cell("y = torch.sigmoid(x)")])
    minutes = reading_minutes(notebook)
    assert minutes["prose"] == 2 and minutes["code"] == 4 / 200 and minutes["cells"] == 1
    assert minutes["total"] == pytest.approx(3.02)


@pytest.mark.parametrize("lesson", lesson_names())
def test_the_main_line_reads_in_about_two_hours(lesson):
    """Does the lesson's main line stay under the goal?"""
    minutes = lesson_minutes(lesson)["total"]
    assert minutes < GOAL_MINUTES, (
        f"{lesson}'s main line takes {minutes:.0f} minutes: move production notes and "
        "digressions into its collapsed In practice block")


def test_print_each_lesson_s_reading_length():
    """The table (visible with -s), one row per lesson."""
    print("\n" + table(lesson_names()))
