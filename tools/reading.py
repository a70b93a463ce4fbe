"""How long a lesson's main line takes: its prose read at 200 words a minute, its code read
at the same pace, and a minute for each cell the learner runs and looks at. Collapsed blocks
(`<details>`: hints, "Compare with yours", "In practice") are off the main line.

The main path is every cell from the top to the Summary's heading: its prose, collapsed blocks
included (a learner opens the hints and explanations on the way), is held to
``MAIN_PATH_WORDS``; the first markdown cell states how long the lesson takes ("**About 90 minutes**").

`python -m tools.reading [LESSON ...]` prints one row per lesson."""

import argparse
import re

import nbformat

from grader.lessons import COURSE, lesson_names

WORDS_A_MINUTE = 200
MINUTES_A_CELL = 1.0
GOAL_MINUTES = 120
MAIN_PATH_WORDS = 3000
COLLAPSED = re.compile(r"<details>.*?</details>", re.DOTALL)
HTML_TAG = re.compile(r"<[^>]+>")
SUMMARY = re.compile(r"^## Summary", re.MULTILINE)
TIME_ESTIMATE = re.compile(r"\*\*About (\d+) minutes\*\*")


def main_line_words(markdown: str) -> int:
    """Words of ``markdown`` outside its collapsed blocks (a LaTeX command counts as a word)."""
    return len(re.findall(r"[\w\\]+", COLLAPSED.sub(" ", markdown)))


def reading_minutes(notebook: nbformat.NotebookNode) -> dict[str, float]:
    """The main line's prose, code and cells of ``notebook``, in minutes, and their total."""
    prose = sum(main_line_words(cell.source) for cell in notebook.cells
                if cell.cell_type == "markdown") / WORDS_A_MINUTE
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    code = sum(len(re.findall(r"\w+", cell.source)) for cell in code_cells) / WORDS_A_MINUTE
    cells = len(code_cells) * MINUTES_A_CELL
    return {"prose": prose, "code": code, "cells": cells, "total": prose + code + cells}


def main_path(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells from the top to the Summary's heading (all of them where there is none)."""
    end = next((i for i, cell in enumerate(notebook.cells)
                if cell.cell_type == "markdown" and SUMMARY.search(cell.source)),
               len(notebook.cells))
    return notebook.cells[:end]


def main_path_words(notebook: nbformat.NotebookNode) -> int:
    """Words of prose on the main path, collapsed blocks included (their tags are not words)."""
    return sum(len(HTML_TAG.sub(" ", cell.source).split()) for cell in main_path(notebook)
               if cell.cell_type == "markdown")


def stated_minutes(notebook: nbformat.NotebookNode) -> int | None:
    """The time the lesson's first markdown cell (its title) says it takes, in minutes; None
    where it says none."""
    first = next((cell.source for cell in notebook.cells if cell.cell_type == "markdown"), "")
    found = TIME_ESTIMATE.search(first)
    return int(found.group(1)) if found else None


def lesson_notebook(lesson: str) -> nbformat.NotebookNode:
    return nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)


def lesson_minutes(lesson: str) -> dict[str, float]:
    return reading_minutes(lesson_notebook(lesson))


def table(lessons: list[str]) -> str:
    rows = [f"{'lesson':<22}{'prose':>7}{'code':>7}{'cells':>7}{'total':>7}{'stated':>8}"
            f"{'words':>7}  (minutes; goal under {GOAL_MINUTES}; main-path words at most "
            f"{MAIN_PATH_WORDS})"]
    for lesson in lessons:
        notebook = lesson_notebook(lesson)
        minutes = reading_minutes(notebook)
        rows.append(f"{lesson:<22}" + "".join(f"{minutes[part]:>7.0f}"
                                              for part in ("prose", "code", "cells", "total"))
                    + f"{stated_minutes(notebook) or '-':>8}{main_path_words(notebook):>7}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: every lesson)")
    print(table(parser.parse_args().lessons or lesson_names()))


if __name__ == "__main__":
    main()
