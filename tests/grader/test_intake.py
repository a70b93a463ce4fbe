"""Reading a submission before it is graded: shadowing files, unreadable notebooks, and the
files placed beside the running notebook."""

import nbformat
import pytest

from grader.faults import put_in_answer
from grader.intake import files_beside, parse_notebook, restore_cells, shadowing_name
from grader.notebook_format import grade_id


@pytest.mark.parametrize("name, shadows", [
    ("torch.py", "torch"), ("autograder/seal.py", "autograder"), ("numpy/__init__.py", "numpy"),
    ("sitecustomize.py", "sitecustomize.py"), ("evil.pth", "evil.pth"),
    (".ipython/profile_default/startup/00.py", ".ipython"), ("matplotlibrc", "matplotlibrc"),
    ("helpers.py", None), ("data/points.csv", None), ("notes.md", None)])
def test_which_files_would_shadow_the_grader(name, shadows):
    """Is a file beside the notebook set aside exactly when its name would shadow a module that
    grading imports, or be loaded by Python or IPython before the grader?"""
    assert shadowing_name(name) == shadows


@pytest.mark.parametrize("data, phrase", [
    (b"", "is empty"), (b"   \n", "is empty"), (b"{oops", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8"), (b'{"cells": 3}', "not a notebook"),
    (b"[1, 2]", "not a notebook")])
def test_an_unreadable_notebook_says_why(data, phrase):
    """Does a notebook that cannot be graded become an invalid-notebook fault that says why?"""
    notebook, faults = parse_notebook("00_template.ipynb", data)
    assert notebook is None and [f.kind for f in faults] == ["invalid-notebook"]
    assert phrase in faults[0].message


def test_files_beside_keep_the_learners_data_and_nothing_that_shadows():
    """Are data files kept, notebooks and shadowing modules left out, and the size budget
    applied smallest first, with a fault for each file left out?"""
    files = {"00_template.ipynb": b"{}", "data/points.csv": b"1,2", "torch.py": b"x = 1",
             "big.bin": b"0" * (2 << 20), "small.txt": b"hi"}
    beside, faults = files_beside(files, limit_mb=1)
    assert sorted(beside) == ["data/points.csv", "small.txt"]
    assert sorted(fault.kind for fault in faults) == ["large-files", "shadowing-file"]


def _entry(name: str, source: str, released: str, *, locked=True, grade=False, solution=False):
    return {"grade_id": name, "cell_type": "code", "source": source, "released_source": released,
            "locked": locked, "checksum": "0" * 32, "grade": grade, "solution": solution,
            "points": 1.0 if grade else 0.0}


def _reference() -> dict:
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    return {"notebook": "lesson", "kernelspec": None, "cells": [
        _entry("cell-001", "import torch", "import torch"),
        _entry("answer_Square", "class Square:\n    pass", stub, locked=False, solution=True),
        _entry("Square", "self_check('Square', Square)\n### BEGIN HIDDEN TESTS\ngrade('Square', "
               "Square)\n### END HIDDEN TESTS\n", "self_check('Square', Square)", grade=True),
        _entry("cell-004", "print('between')", "print('between')"),
        _entry("answer_Twice", "twice = 2", stub, locked=False, solution=True),
        _entry("Twice", "assert twice == 2", "assert twice == 2", grade=True)]}


def _pasted(*sources: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def test_answers_pasted_into_a_new_notebook_are_matched_by_what_they_define():
    """A notebook of only the learner's answers, without nbgrader metadata: is each answer
    matched to its cell (a class by its name, an assignment by where it stands between the
    read-only cells), the missing cells put back after their answers, and one fault said?"""
    notebook = _pasted("print('between')", "twice = 2", "class Square:\n    def f(self): ...")
    restored, faults = restore_cells(notebook, _reference())
    assert [grade_id(cell) for cell in restored.cells] == [
        "cell-001", "cell-004", "answer_Twice", "Twice", "answer_Square", "Square"]
    assert [fault.kind for fault in faults] == ["no-nbgrader-metadata"]
    assert "matched 2 of 2 answer cells" in faults[0].message


def test_a_copy_of_the_solutions_is_graded_as_it_stands():
    """A solutions notebook (hidden tests removed, no metadata): are its test cells
    recognised by their visible code, so nothing is duplicated?"""
    notebook = _pasted("import torch", "class Square:\n    pass", "self_check('Square', Square)",
                       "print('between')", "twice = 2", "assert twice == 2")
    restored, faults = restore_cells(notebook, _reference())
    assert [grade_id(cell) for cell in restored.cells] == [
        "cell-001", "answer_Square", "Square", "cell-004", "answer_Twice", "Twice"]
    assert "### BEGIN HIDDEN TESTS" in restored.cells[2].source  # graded with its hidden tests


def test_an_answer_that_cannot_be_found_is_named():
    """Does the fault say which answer it could not find (so the instructor knows why that
    exercise scored 0)?"""
    restored, faults = restore_cells(_pasted("print('between')", "twice = 2"), _reference())
    assert "found no answer for answer_Square" in faults[0].message
    assert faults[0].cell == "answer_Square"  # the learner's feedback names it


def test_a_missing_practice_answer_is_not_said_to_cost_points():
    """A pasted notebook lacking a practice answer (no graded test) and a graded one: does the
    fault say the practice cell is worth no points, and only the graded one's stub scores 0?"""
    reference = _reference()
    reference["cells"].append(_entry("answer_practice", "def practice():\n    return 1",
                                     "# YOUR CODE HERE", locked=False, solution=True))
    _, faults = restore_cells(_pasted("print('between')", "twice = 2"), reference)
    assert faults[0].message.endswith(
        ", found no answer for the practice cell answer_practice (worth no points), and none "
        "for answer_Square (its stub graded instead: 0 points)")


def test_an_answer_that_cannot_be_found_is_graded_as_not_answered():
    """A pasted notebook that lacks an answer: is the lesson's stub put in its place, before its
    test cell, so that the test finds an unanswered exercise (not-implemented) rather than a
    name the learner never defined (raised:NameError)?"""
    restored, _ = restore_cells(_pasted("print('between')", "twice = 2"), _reference())
    assert [grade_id(cell) for cell in restored.cells] == [
        "cell-001", "answer_Square", "Square", "cell-004", "answer_Twice", "Twice"]
    assert restored.cells[1].source == "# YOUR CODE HERE\nraise NotImplementedError()"
    assert restored.cells[1].metadata.nbgrader.solution


def test_a_test_cell_added_after_a_notebook_without_a_timestamp_says_so():
    """A notebook with no timestamp.txt, graded after a test cell was added: does its note say
    the cell came after the notebook was handed in, its date unknown (not "released to this
    learner")?"""
    from grader.intake import _new_cell

    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    cells = [_new_cell(entry) for entry in reference["cells"] if entry["grade_id"] != "Twice"]
    restored, faults = restore_cells(nbformat.v4.new_notebook(cells=cells), reference)
    assert [(fault.kind, fault.cell) for fault in faults] == [("added-test-cell", "Twice")]
    assert ("added to the lesson on 2026-01-02 00:00:00 UTC, after this notebook was handed in "
            "(no timestamp.txt: date unknown)") in faults[0].message


def test_a_pasted_notebook_counts_a_test_cell_added_after_it_was_handed_in():
    """A pasted notebook (no metadata) handed in before a test cell was added: is the added
    cell noted for it as for any other notebook, so a regrade's count of notebooks it was
    graded in includes this one?"""
    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    notebook = _pasted("print('between')", "twice = 2", "class Square:\n    def f(self): ...")
    restored, faults = restore_cells(notebook, reference, submitted_at="2026-01-01 00:00:00")
    assert [(fault.kind, fault.cell) for fault in faults] == [
        ("no-nbgrader-metadata", ""), ("added-test-cell", "Twice")]
    restored, faults = restore_cells(notebook, reference, submitted_at="2026-01-03 00:00:00")
    assert [fault.kind for fault in faults] == ["no-nbgrader-metadata"]


def test_an_answer_that_does_not_parse_is_a_fault_of_its_own():
    """An answer cell with a SyntaxError: is it a syntax-error fault naming the cell, the line
    and what Python said (so the notebook is worth a look), while magics and shell escapes in
    an answer are not taken for one?"""
    from grader.answers import answer_faults

    notebook = _pasted("print('between')", "twice = 2", "class Square:\n    def f(self)\n"
                       "        pass")
    restored, _ = restore_cells(notebook, _reference())
    faults = answer_faults(restored, _reference())
    assert [(fault.kind, fault.cell) for fault in faults] == [("syntax-error", "answer_Square")]
    assert "answer cell answer_Square does not parse (SyntaxError at line 2: expected ':')" in \
        faults[0].message
    magic = _pasted("print('between')", "%time twice = 2", "class Square:\n    pass")
    assert answer_faults(restore_cells(magic, _reference())[0], _reference()) == []


def test_a_notebook_whose_every_answer_is_the_stub_is_a_fault():
    """The released notebook handed in unchanged: is it an unanswered fault (the wrong file
    handed in?), and a notebook with one answer written not?"""
    from grader.answers import answer_faults
    from grader.intake import _new_cell

    reference = _reference()
    released = [_new_cell(entry) for entry in reference["cells"]]
    for cell, entry in zip(released, reference["cells"]):
        cell.source = entry["released_source"]
    restored, _ = restore_cells(nbformat.v4.new_notebook(cells=released), reference)
    faults = answer_faults(restored, reference)
    assert [fault.kind for fault in faults] == ["unanswered"]
    assert faults[0].message.startswith("every answer cell (2) is still the lesson's stub")
    released[4].source = "twice = 2"
    restored, _ = restore_cells(nbformat.v4.new_notebook(cells=released), reference)
    assert answer_faults(restored, reference) == []


def test_an_exercise_added_after_hand_in_gets_its_answer_stub_not_a_name_never_defined():
    """A notebook handed in before the instructor added an exercise (its answer cell and its
    test, issue 68: `MyTanh 0 / 1 ✗ the test raised NameError`): is the answer cell's stub put
    in before the added test, so the test finds an unanswered exercise, and does the note say
    so; while a notebook handed in after, that deleted the answer, gets no stub?"""
    from grader.intake import _new_cell

    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    cells = [_new_cell(entry) for entry in reference["cells"]
             if entry["grade_id"] not in ("answer_Twice", "Twice")]
    notebook = nbformat.v4.new_notebook(cells=cells)
    restored, faults = restore_cells(notebook, reference, submitted_at="2026-01-01 00:00:00")
    assert [grade_id(cell) for cell in restored.cells] == [
        "cell-001", "answer_Square", "Square", "cell-004", "answer_Twice", "Twice"]
    assert restored.cells[4].source == "# YOUR CODE HERE\nraise NotImplementedError()"
    assert restored.cells[4].metadata.nbgrader.solution
    assert [(fault.kind, fault.cell) for fault in faults] == [("added-test-cell", "Twice")]
    assert ("put it in after the stub of its answer (answer_Twice: not answered) and graded it"
            in faults[0].message)
    assert put_in_answer(faults[0]) and put_in_answer(faults[0].to_dict())  # as insight reads it
    later, faults = restore_cells(notebook, reference, submitted_at="2026-01-03 00:00:00")
    assert "answer_Twice" not in [grade_id(cell) for cell in later.cells]
    assert [fault.kind for fault in faults] == ["deleted-test-cell"]


def test_a_test_added_for_an_answer_the_notebook_has_is_put_in_after_it():
    """A test cell added later for an exercise the notebook already answers: is the answer
    kept (no stub), the note the usual one?"""
    from grader.intake import _new_cell

    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    cells = [_new_cell(entry) for entry in reference["cells"] if entry["grade_id"] != "Twice"]
    cells[4].source = "twice = 2"
    restored, faults = restore_cells(nbformat.v4.new_notebook(cells=cells), reference,
                                     submitted_at="2026-01-01 00:00:00")
    assert [cell.source for cell in restored.cells if grade_id(cell) == "answer_Twice"] == [
        "twice = 2"]
    assert faults[0].message.endswith("put it in after its answer and graded it")
    assert not put_in_answer(faults[0])  # its failure on the learner's own stub is theirs


def test_an_answer_cell_that_stops_with_an_error_is_a_fault_of_its_own():
    """An answer cell that raised when it ran (issue 68: `import torchquant`, a module grading
    lacks): is it an answer-error fault naming the cell, the error and its line, while the
    stub's NotImplementedError, a cell that does not parse (its syntax-error) and a cell a
    fault of the run already names (a timeout) are not?"""
    from grader.answers import answer_error_faults
    from grader.faults import Fault, own_status

    def answer(name, source, ename, evalue, traceback=()):
        cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
            "grade_id": name, "solution": True, "grade": False, "locked": False}})
        cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                               traceback=list(traceback))]
        return cell

    crashed = answer("answer_SignSTE", "import torchquant\nclass SignSTE: ...",
                     "ModuleNotFoundError", "No module named 'torchquant'",
                     ["\x1b[0;31mModuleNotFoundError\x1b[0m",
                      "Cell \x1b[0;32mIn[3], line 1\x1b[0m"])
    stub = answer("answer_RoundSTE", "raise NotImplementedError()", "NotImplementedError", "")
    unparsed = answer("answer_FakeQuantize", "class FakeQuantize(", "SyntaxError", "'(' was "
                      "never closed")
    looped = answer("answer_Softmax", "while True: pass", "KeyboardInterrupt", "")
    checked = answer("answer_Twice", "twice = 3\nself_check('Twice', twice)", "GradingError",
                     "twice is 3, expected 2")  # a failed self-check: its test says the same
    notebook = nbformat.v4.new_notebook(cells=[crashed, stub, unparsed, looped, checked])
    timeout = Fault("timeout", "answer_Softmax ran past the 30 s limit", "answer_Softmax")
    faults = answer_error_faults(notebook, [timeout])
    assert [(fault.kind, fault.cell) for fault in faults] == [("answer-error", "answer_SignSTE")]
    assert faults[0].message.startswith("answer cell answer_SignSTE stopped with "
                                        "ModuleNotFoundError: No module named 'torchquant' at "
                                        "line 1: the rest of it did not run")
    assert own_status(faults) == "answer-error"


def _stamped(notebook, test_cells):
    """``notebook`` as a learner's copy of a release holding ``test_cells`` (releases.stamp)."""
    notebook.metadata["autograder"] = {"release": {"released": "2026-01-01 00:00:00",
                                                   "test_cells": list(test_cells)}}
    return notebook


def test_a_late_copy_of_the_release_before_a_test_was_added_never_had_it():
    """Issue 68: a learner fetched the lesson, the instructor then added a test cell, and the
    learner handed in (or resubmitted) after that, from the copy they fetched: is the missing
    test cell the routine added-test-cell (the notebook's stamp says its release never held
    it), not deleted-test-cell, whatever the timestamp; and is a copy of the release that held
    the cell and lost it still deleted-test-cell?"""
    from grader.intake import _new_cell

    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    cells = [_new_cell(entry) for entry in reference["cells"] if entry["grade_id"] != "Twice"]
    older = _stamped(nbformat.v4.new_notebook(cells=cells), ["Square"])
    _, faults = restore_cells(older, reference, submitted_at="2026-01-03 00:00:00")
    assert [(fault.kind, fault.cell) for fault in faults] == [("added-test-cell", "Twice")]
    assert ("added to the lesson on 2026-01-02 00:00:00 UTC, after the release this notebook was "
            "made from (it never held the cell; handed in on 2026-01-03 00:00:00 UTC): put it in "
            "after its answer and graded it") in faults[0].message
    newer = _stamped(nbformat.v4.new_notebook(cells=cells), ["Square", "Twice"])
    _, faults = restore_cells(newer, reference, submitted_at="2026-01-03 00:00:00")
    assert [(fault.kind, fault.cell) for fault in faults] == [("deleted-test-cell", "Twice")]
    unstamped = nbformat.v4.new_notebook(cells=cells)  # released before the stamp: its timestamp
    _, faults = restore_cells(unstamped, reference, submitted_at="2026-01-03 00:00:00")
    assert [fault.kind for fault in faults] == ["deleted-test-cell"]
    _, faults = restore_cells(unstamped, reference, submitted_at="2026-01-01 00:00:00")
    assert [fault.kind for fault in faults] == ["added-test-cell"]


def test_a_late_copy_of_the_release_before_an_exercise_was_added_gets_its_stub():
    """A copy of the release before an exercise (answer and test) was added, handed in after:
    is the answer's stub put in, as for a notebook handed in before?"""
    from grader.intake import _new_cell

    reference = _reference() | {"added": {"Twice": "2026-01-02 00:00:00"}}
    cells = [_new_cell(entry) for entry in reference["cells"]
             if entry["grade_id"] not in ("answer_Twice", "Twice")]
    older = _stamped(nbformat.v4.new_notebook(cells=cells), ["Square"])
    restored, faults = restore_cells(older, reference, submitted_at="2026-01-03 00:00:00")
    assert "answer_Twice" in [grade_id(cell) for cell in restored.cells]
    assert [fault.kind for fault in faults] == ["added-test-cell"] and put_in_answer(faults[0])


def test_release_stamps_each_released_notebook_with_its_test_cells(tmp_path):
    """Does ``releases.record`` write into each released notebook the test cells it holds, so
    that a learner's copy says which release it came from?"""
    from grader.intake import released_tests
    from grader.releases import record

    test = nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade_id": "Square", "grade": True, "solution": False, "locked": True, "points": 1,
        "schema_version": 3}})
    answer = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {
        "grade_id": "answer_Square", "grade": False, "solution": True, "locked": False,
        "schema_version": 3}})
    folder = tmp_path / "release" / "01_x"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[answer, test]), folder / "01_x.ipynb")
    record(tmp_path, "01_x")
    assert released_tests(nbformat.read(folder / "01_x.ipynb", as_version=4)) == {"Square"}
    assert released_tests(nbformat.v4.new_notebook()) is None
