"""The main line of each lesson reads in about two hours: prose and code at 200 words a minute
and a minute per cell run, collapsed blocks (hints, "Compare with yours", "In practice") left
out. The main path (top to Summary) holds at most 3,000 words of prose, hints included, and the
lesson's first cell says how long it takes. `pytest -s` prints the table."""

import nbformat
import pytest

from grader.lessons import lesson_names
from tools.reading import (GOAL_MINUTES, MAIN_PATH_WORDS, lesson_minutes, lesson_notebook,
                           main_line_words, main_path, main_path_words, reading_minutes,
                           stated_minutes, table)

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


def test_the_main_path_counts_hints_and_stops_at_the_summary():
    """Are a hint's words counted, and is nothing after the Summary's heading?"""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("**About 30 minutes** of work.\n<details>Hint one</details>"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("## Summary\nEvery word here is optional."),
        nbformat.v4.new_markdown_cell("## In practice\nSo are these.")])
    assert main_path_words(notebook) == 7
    assert stated_minutes(notebook) == 30


@pytest.mark.parametrize("lesson", lesson_names())
def test_the_main_path_reads_in_one_sitting(lesson):
    """Has the main path at most MAIN_PATH_WORDS words of prose, hints and explanations
    included? Edge cases, measurements and what the grader probes go after the Summary."""
    words = main_path_words(lesson_notebook(lesson))
    assert words <= MAIN_PATH_WORDS, (
        f"{lesson}'s main path has {words} words of prose, above {MAIN_PATH_WORDS}: move what "
        "the learner can skip after the Summary")


@pytest.mark.parametrize("lesson", lesson_names())
def test_the_lesson_says_how_long_it_takes(lesson):
    """Does the title cell state the main path's time ("**About N minutes**"), no less than
    reading and running it takes?"""
    notebook = lesson_notebook(lesson)
    stated = stated_minutes(notebook)
    assert stated is not None, f"{lesson}'s title cell gives no '**About N minutes**'"
    reading = reading_minutes(nbformat.v4.new_notebook(cells=main_path(notebook)))["total"]
    assert stated >= reading, (
        f"{lesson} says {stated} minutes, but reading and running its main path takes about "
        f"{reading:.0f}, before any exercise is solved")


def test_print_each_lesson_s_reading_length():
    """The table (visible with -s), one row per lesson."""
    print("\n" + table(lesson_names()))
