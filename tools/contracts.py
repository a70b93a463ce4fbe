"""The contract list each graded exercise shows the learner, read from the released notebook.

An exercise's statement (the markdown between its heading and its answer cell) gives its
contract as one bullet list, introduced by a paragraph that names the contract and ends with a
colon ("The contract, which the self-check and the hidden tests check:"). Each bullet is one
``tools.catalogue.clauses.Clause`` of the exercise's (``tools.catalogue.contract_of``);
``tests/autograder/test_clauses.py`` holds the two equal.

`python -m tools.contracts [EXERCISE ...]` prints each exercise's bullets beside its clauses.
"""

import argparse
import re

import nbformat

from grader.lessons import COURSE

BULLET = re.compile(r"^- ")


def normalised(text: str) -> str:
    """``text`` with its whitespace runs made single spaces: a bullet wrapped differently is
    the same bullet."""
    return " ".join(text.split())


def statement(lesson: str, exercise: str) -> str:
    """The markdown the learner reads before ``exercise``'s answer cell, from the cell that
    opens its section (a heading naming it) on."""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    cells = notebook.cells
    answer = next((i for i, cell in enumerate(cells)
                   if cell.metadata.get("nbgrader", {}).get("grade_id") == f"answer_{exercise}"),
                  None)
    if answer is None:
        raise LookupError(f"lesson {lesson} has no answer cell answer_{exercise}")
    heading = re.compile(rf"^#+ .*`{re.escape(exercise)}`", re.MULTILINE)
    start = next((i for i in range(answer, -1, -1) if cells[i].cell_type == "markdown"
                  and heading.search(cells[i].source)), None)
    if start is None:
        raise LookupError(f"no heading names `{exercise}` above its answer cell in {lesson}")
    return "\n\n".join(cell.source for cell in cells[start:answer] if cell.cell_type == "markdown")


def contract_bullets(lesson: str, exercise: str) -> list[str]:
    """The bullets of the list that follows the statement's paragraph ending 'contract...:',
    each with its whitespace normalised; [] where the statement has no such list."""
    lines = statement(lesson, exercise).splitlines()
    for index, line in enumerate(lines):
        if not line.rstrip().endswith(":"):
            continue
        paragraph = [line]
        for previous in reversed(lines[:index]):
            if not previous.strip():
                break
            paragraph.insert(0, previous)
        if "contract" not in " ".join(paragraph).lower():
            continue
        return _bullets(lines[index + 1:])
    return []


def _bullets(lines: list[str]) -> list[str]:
    bullets: list[str] = []
    for line in lines:
        if BULLET.match(line):
            bullets.append(line[2:])
        elif bullets and line.startswith("  ") and line.strip():
            bullets[-1] += " " + line.strip()
        elif bullets or line.strip():
            break
    return [normalised(bullet) for bullet in bullets]


def main() -> None:
    from autograder.exercises import EXERCISES
    from tools.catalogue import contract_of

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", help="exercise names (default: all)")
    names = parser.parse_args().exercises or list(EXERCISES)
    for name in names:
        exercise = EXERCISES[name]
        print(f"{name} ({exercise.lesson})")
        for bullet in contract_bullets(exercise.lesson, name):
            print(f"  lesson: {bullet}")
        for clause in contract_of(name)[0]:
            print(f"  clause: {normalised(clause.text)}  <- {', '.join(clause.checks)}")


if __name__ == "__main__":
    main()
