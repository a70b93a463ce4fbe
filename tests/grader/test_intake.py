"""Reading a submission before it is graded: shadowing files, unreadable notebooks, and the
files placed beside the running notebook."""

import pytest

from grader.intake import files_beside, parse_notebook, shadowing_name


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
