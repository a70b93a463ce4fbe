"""Which cells grading leaves out: a released demo cell that sets nothing a cell that runs reads;
never a cell the learner wrote or changed, nor one the analysis cannot see through."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from grader.needed_cells import cell_names, demo_sources, unneeded_cells

TEST = {"nbgrader": {"grade_id": "Square", "grade": True, "solution": False, "points": 1}}
ANSWER = {"nbgrader": {"grade_id": "answer_Square", "grade": False, "solution": True}}


def _notebook(*cells) -> nbformat.NotebookNode:
    """Cells given as (source, metadata) or source (a demo cell)."""
    return new_notebook(cells=[new_code_cell(cell) if isinstance(cell, str)
                               else new_code_cell(cell[0], metadata=cell[1]) for cell in cells])


def _unneeded(notebook, released=None) -> set[int]:
    return unneeded_cells(notebook, demo_sources(released or notebook))


def test_a_demo_nobody_reads_is_left_out_and_one_a_test_reads_runs():
    notebook = _notebook("import torch", "table = torch.ones(3)", "plot = torch.zeros(2)",
                         ("class Square: pass", ANSWER), ("assert table.sum() == 3", TEST))
    assert _unneeded(notebook) == {2}


def test_answers_tests_and_cells_the_learner_changed_always_run():
    released = _notebook("import torch", "plot = torch.zeros(2)", ("pass", ANSWER),
                         ("grade('Square', Square)", TEST))
    submitted = _notebook("import torch", "plot = torch.zeros(3)", ("pass", ANSWER),
                          ("grade('Square', Square)", TEST), "extra = 1")
    assert _unneeded(submitted, released) == set()


def test_a_demo_that_calls_the_learners_class_before_its_test_runs():
    notebook = _notebook("import torch", ("class Square: pass", ANSWER),
                         "y = Square.apply(torch.ones(2))", ("grade('Square', Square)", TEST),
                         "z = Square.apply(torch.ones(2))")
    assert _unneeded(notebook) == {4}  # after the test it cannot change the grade


def test_a_name_read_in_a_function_body_is_read_when_the_function_is_called():
    notebook = _notebook(("def helper():\n    return table", ANSWER), "table = 3",
                         ("assert helper() == 3", TEST), "other = 1")
    assert _unneeded(notebook) == {3}


def test_a_functions_own_parameters_and_locals_are_not_global_reads():
    found = cell_names("def f(x):\n    y = x + 1\n    return y * scale\nresult = f(2)")
    assert found.reads == {"f", "scale"} and found.late_reads == {"scale"}
    assert found.binds == {"f", "result"}


def test_what_the_analysis_cannot_see_through_makes_earlier_cells_run():
    for unseen in ("globals()['table']", "eval('table')", "from helpers import *",
                   "__import__('sys').modules['__main__'].table", "%run other.py"):
        notebook = _notebook("table = 3", "plot = 4", (unseen, TEST))
        assert _unneeded(notebook) == set(), unseen
    assert cell_names("%timeit x + 1").opaque  # a magic demo cell runs itself
    assert cell_names("def broken(:").opaque


def test_mutating_an_attribute_or_item_binds_its_base_name():
    assert cell_names("config.scale = 2").binds == {"config"}
    assert cell_names("table[0] = 2").binds == {"table"}
    notebook = _notebook(("class Square: pass", ANSWER), "Square.scale = 2",
                         ("grade('Square', Square)", TEST))
    assert _unneeded(notebook) == set()


def test_vars_of_an_object_reads_the_object_and_vars_alone_reaches_the_namespace():
    assert not cell_names("original = vars(Stack)['backward']").opaque
    assert cell_names("names = vars()").opaque and cell_names("print(dir())").opaque


def test_calling_an_imported_name_does_not_make_its_cell_run():
    notebook = _notebook("from torch.nn import functional as F", "plot = F.relu(ts)",
                         ("y = F.relu(x)", ANSWER), ("grade('Square', Square)", TEST))
    assert _unneeded(notebook) == {1}


def test_a_locked_demo_cell_as_released_may_be_left_out():
    locked = {"nbgrader": {"grade_id": "cell-004", "grade": False, "solution": False,
                           "locked": True}}
    notebook = _notebook(("plot = 1", locked), ("class Square: pass", ANSWER),
                         ("grade('Square', Square)", TEST))
    assert _unneeded(notebook) == {0}
