"""tools.submissions as an instructor uses it: a known-good submission handed in from the
command line, to try grading on before a term."""

import nbformat

from grader.releases import submitted_at
from tools.submissions import main

LESSON = "98_trial"


def _root(tmp_path):
    """A course root with a lesson of one exercise, its source (the solution, between nbgrader's
    markers) and its release (the stub)."""
    def lesson(answer):
        cell = nbformat.v4.new_code_cell(answer)
        cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                     "grade_id": "answer_Twice", "schema_version": 3}
        test = nbformat.v4.new_code_cell("assert twice(2) == 4")
        test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                     "grade_id": "Twice", "points": 1, "schema_version": 3}
        return nbformat.v4.new_notebook(cells=[cell, test])

    for folder, answer in [("source", "### BEGIN SOLUTION\ndef twice(x):\n    return 2 * x\n"
                                      "### END SOLUTION"),
                           ("release", "def twice(x):\n    raise NotImplementedError()")]:
        (tmp_path / folder / LESSON).mkdir(parents=True)
        nbformat.write(lesson(answer), tmp_path / folder / LESSON / f"{LESSON}.ipynb")
    return tmp_path


def test_a_known_good_submission_is_the_release_with_the_solutions(tmp_path, monkeypatch,
                                                                  capsys):
    """Does `python -m tools.submissions 98` hand in the released notebook with its answer cell
    holding the source's solution (no markers), as learner known-good, with a timestamp.txt
    grading reads; and refuse to write over it unless --replace?"""
    root = _root(tmp_path)
    monkeypatch.setenv("COURSE_ROOT", str(root))
    assert main(["98"]) == 0
    folder = root / "submitted" / "known-good" / LESSON
    notebook = nbformat.read(folder / f"{LESSON}.ipynb", as_version=4)
    assert notebook.cells[0].source.strip() == "def twice(x):\n    return 2 * x"
    assert notebook.cells[1].source == "assert twice(2) == 4"
    assert submitted_at({"timestamp.txt": (folder / "timestamp.txt").read_bytes()})
    assert f"wrote {folder / f'{LESSON}.ipynb'}" in capsys.readouterr().out
    assert main(["98"]) == 1 and "--replace" in capsys.readouterr().err
    assert main(["98", "--replace"]) == 0 and main(["98", "--student", "ok2"]) == 0
    assert (root / "submitted" / "ok2" / LESSON / f"{LESSON}.ipynb").exists()


def test_an_unreleased_lesson_is_refused_with_the_command_that_releases_it(tmp_path,
                                                                           monkeypatch, capsys):
    root = _root(tmp_path)
    monkeypatch.setenv("COURSE_ROOT", str(root))
    assert main(["00"]) == 1
    assert "make release LESSONS=00_template" in capsys.readouterr().err


def test_a_known_good_submission_among_learners_says_it_will_be_counted(tmp_path, monkeypatch,
                                                                         capsys):
    """Trial 82: README's step 3 made the known-good submission in the term's own root. Made
    where other learners have handed in, does the command say it is graded and counted among
    them and name the trial root; and say nothing of it in a root of its own?"""
    root = _root(tmp_path)
    monkeypatch.setenv("COURSE_ROOT", str(root))
    assert main(["98"]) == 0 and "note:" not in capsys.readouterr().err
    (root / "submitted" / "alice" / LESSON).mkdir(parents=True)
    assert main(["98", "--replace"]) == 0
    said = capsys.readouterr().err
    assert "holds the submissions of 1 other learner (alice)" in said
    assert "counted like a learner" in said and "COURSE_ROOT=trial" in said
