"""What the newcomer instructor's trial (issue 68) saw on a feedback page: a learner's traceback
naming "Cell In[2]" on a page that numbers no cell; nbgrader's own unnamed "Test cell (Score
...)" list above the course's table of graded tests; and that table's headings run together
("PointsResult and hint")."""

from pathlib import Path

import nbgrader
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from traitlets.config import Config

from grader.course_config import configure
from grader.feedback import FeedbackHTMLExporter, FeedbackSummary, NumberlessTracebacks

TRACEBACK = ["\x1b[31mModuleNotFoundError\x1b[39m                       Traceback (most recent "
             "call last)",
             "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 1\x1b[39m"
             "\n\x1b[32m----> \x1b[39m\x1b[32m1\x1b[39m import torchviz\n",
             "Cell In[1], line 3, in helper()\n",
             "Cell In[7], line 2\n",
             "\x1b[31mModuleNotFoundError\x1b[39m: No module named 'torchviz'"]


def _notebook():
    helper = new_code_cell("def helper():\n    pass", execution_count=1)
    raised = new_code_cell("import torchviz", execution_count=2, outputs=[new_output(
        "error", ename="ModuleNotFoundError", evalue="No module named 'torchviz'",
        traceback=list(TRACEBACK))])
    test = new_code_cell("self_check('Square', square)", execution_count=3, metadata={
        "nbgrader": {"grade": True, "solution": False, "grade_id": "Square", "points": 1,
                     "score": 1}}, outputs=[new_output("stream", name="stdout",
                                                       text="✓ Square passes\n")])
    return new_notebook(cells=[new_markdown_cell("# Lesson"), helper, raised, test])


def test_a_learners_traceback_names_no_cell_by_ipythons_number():
    """Is "Cell In[2]" the cell that raised ("This cell"), "Cell In[1]" the cell that ran as
    number 1, by its first line, and a number no cell has "A cell"?"""
    notebook, _ = NumberlessTracebacks().preprocess(_notebook(), {})
    shown = "\n".join(notebook.cells[2].outputs[0].traceback)
    assert "In[" not in shown
    assert "This cell\x1b[39m\x1b[32m, line 1" in shown
    assert 'The cell "def helper():", line 3, in helper()' in shown
    assert "A cell, line 2" in shown


def test_the_feedback_page_leaves_out_nbgraders_list_and_pads_the_table():
    """Rendered as `make feedback` renders it (the course's configuration, then what nbgrader's
    GenerateFeedback sets where nothing else is), does the page hide nbgrader's unnamed "Test
    cell" list (the course's table names each test), keep its total score, and pad the table's
    cells so that its headings read apart?"""
    config = Config()
    configure(config)
    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    config.HTMLExporter.template_name = "feedback"  # GenerateFeedback's defaults
    config.HTMLExporter.extra_template_basedirs = [str(formgrader / "templates")]
    config.HTMLExporter.extra_template_paths = [
        str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    notebook, resources = FeedbackSummary().preprocess(_notebook(), {})
    page, _ = FeedbackHTMLExporter(config=config).from_notebook_node(
        notebook, resources={"nbgrader": {"notebook": "00_demo", "score": 1, "max_score": 1,
                                          "late_penalty": 0}})
    assert "00_demo (Score: 1.0 / 1.0)" in page
    assert "#toc li:not(.late-penalty) { display: none; }" in page
    assert ".rendered_html table th, .rendered_html table td { padding:" in page
    assert "<th>Points</th>" in page and "<th>Result and hint</th>" in page


def test_the_status_comes_right_under_the_table_as_the_readme_says():
    """The README: on the feedback page the status "comes right under the table of graded tests
    that opens the page". Is it so, after the feedback's own preprocessors?"""
    from grader.faults import Fault
    from grader.feedback import LearnerStatus, status_cell
    from grader.lessons import ROOT

    notebook = _notebook()
    notebook.cells.insert(0, status_cell([Fault("timeout", "a loop", "answer_Square")]))
    for step in (LearnerStatus(), FeedbackSummary()):
        notebook, _ = step.preprocess(notebook, {})
    assert notebook.cells[0].source.startswith("## Your graded tests")
    assert notebook.cells[1].source.startswith("**Grading status: `timeout`**")
    assert "it comes right under the table of graded tests that opens the page" in (
        ROOT / "README.md").read_text()
