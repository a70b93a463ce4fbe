"""How long a lesson's main line takes: its prose read at 200 words a minute, its code read
at the same pace, and a minute for each cell the learner runs and looks at. Collapsed blocks
(`<details>`: hints, "Compare with yours", "In practice") are off the main line.

`python -m tools.reading [LESSON ...]` prints one row per lesson."""

import argparse
import re

import nbformat

from grader.lessons import COURSE, lesson_names

WORDS_A_MINUTE = 200
MINUTES_A_CELL = 1.0
GOAL_MINUTES = 120
COLLAPSED = re.compile(r"<details>.*?</details>", re.DOTALL)


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


def lesson_minutes(lesson: str) -> dict[str, float]:
    return reading_minutes(nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4))


def table(lessons: list[str]) -> str:
    rows = [f"{'lesson':<22}{'prose':>7}{'code':>7}{'cells':>7}{'total':>7}  (minutes; goal "
            f"under {GOAL_MINUTES})"]
    for lesson in lessons:
        minutes = lesson_minutes(lesson)
        rows.append(f"{lesson:<22}" + "".join(f"{minutes[part]:>7.0f}"
                                              for part in ("prose", "code", "cells", "total")))
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: every lesson)")
    print(table(parser.parse_args().lessons or lesson_names()))


if __name__ == "__main__":
    main()
