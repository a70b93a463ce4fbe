"""Do the widget views render and respond in a real JupyterLab, driven by headless Chromium?

The widget demo (tests/data/widgets_demo.ipynb: every view of widgets/, on small Functions)
opens in JupyterLab on a stranger's kernel (what Colab ships and the course's wheel:
tests/stranger.py), runs all cells, failing on the first error; the test checks that the kernel
was the stranger's Python importing the course from its wheel, that every view rendered, and
operates one control of each kind in the first view of each widget function, checking that the
view changed; every view's screenshot lands in artifacts/screenshots/. Every lesson's formulas
are typeset in one page, failing on a MathJax error. The exhaustive tier (`make test-all`) runs
each solution notebook as it runs the demo, top to bottom (each lesson's own views, in its own
context); in every tier nbgrader grades each solution (tests/grader/test_course_config.py) and
the committed solutions hold no error output (tests/tools/test_notebooks.py). Notebooks the
tests build open on the course environment's kernel.
"""

import re
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from grader.lessons import lesson_names, source_notebook
from tests.jupyterlab import (REPO, STRANGER_KERNEL, VIEWPORT, close_notebooks, jupyter_command,
                              open_notebook, run_all)
from tests.kernels import WIDGETS_DEMO, executed_widgets_demo
from tests.stranger import colab_python
from tests.widget_views import (signature, track_kernel_traffic, unresponsive, views,
                                wait_rendered)
from tools.notebooks import COURSE, without_outputs
from widgets.view import SNAPSHOT_NOTE

# One worker runs every JupyterLab test: one server and one browser (tests/jupyterlab.py).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("jupyterlab")]

# The demo in every tier; each lesson, a run of about 30 s of kernel and Chromium, in the
# exhaustive one.
NOTEBOOKS = [pytest.param(WIDGETS_DEMO, id=WIDGETS_DEMO.stem)] + [
    pytest.param(solution, id=solution.stem, marks=pytest.mark.exhaustive)
    for solution in sorted((REPO / "solutions").glob("*.ipynb"))]
DEMO_VIEWS = 15  # every view of widgets/ the lessons show
COPIES = REPO / "artifacts" / "browser"  # git-ignored: autosave may write here freely
SCREENSHOTS = REPO / "artifacts" / "screenshots"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

def _math_errors(page) -> list[str]:
    """MathJax's complaint for each formula it could not typeset, once typesetting settles: no
    new formula for half a second, and at least one where a Markdown cell has a `$` (MathJax
    loads on first use)."""
    has_math = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .some(c => c.model.type === 'markdown' && c.model.sharedModel.getSource().includes('$'))""")
    deadline, previous, since = time.monotonic() + 60, -1, time.monotonic()
    while time.monotonic() < deadline:
        typeset = page.locator("mjx-container").count()
        if typeset != previous:
            previous, since = typeset, time.monotonic()
        elif time.monotonic() - since >= 0.5 and (typeset or not has_math):
            break
        time.sleep(0.1)
    return page.evaluate("""() => [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]
        .map(e => e.getAttribute('data-mjx-error') || e.textContent)""")


def _kernel_prints(page, code: str) -> str:
    """What ``code`` prints, run quietly in the open notebook's kernel (no cell, no history)."""
    return page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({code, silent: false, store_history: false});
        let printed = '';
        future.onIOPub = message => {
            if (message.header.msg_type === 'stream') { printed += message.content.text; }
        };
        await future.done;
        return printed;
    }""", code)


def _assert_strangers_kernel(page) -> None:
    """Is the kernel the solution ran on the stranger's Python, importing the course from its
    wheel, not from this checkout (test_notebooks leaves the solutions' runs to this file)?"""
    prefix, module = _kernel_prints(
        page, "import sys, autograder\nprint(sys.prefix, autograder.__file__)").split()
    (layer,) = Path(prefix).glob("lib/python*/site-packages/stranger_base.pth")
    (base,) = colab_python().parents[1].glob("lib/python*/site-packages")
    assert layer.read_text().strip() == str(base), "not a layer over the stranger's Python"
    assert not Path(module).is_relative_to(REPO), module


def test_a_broken_formula_is_caught(lab_page):
    """Would the formula check notice a formula MathJax cannot typeset?"""
    open_notebook(lab_page, "tests/data/math_errors.ipynb")
    errors = _math_errors(lab_page)
    assert len(errors) == 2, errors



def _screenshot(page, path: Path) -> None:
    """The whole notebook in one picture: make the window as tall as the notebook, let
    JupyterLab lay it out (on the next animation frame), then give the window its size back."""
    height = page.evaluate("""() => {
        const scroller = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')
                         || document.querySelector('.jp-NotebookPanel .jp-Notebook');
        scroller.scrollTop = 0;
        return scroller.scrollHeight;
    }""")
    page.set_viewport_size({"width": 1280, "height": min(int(height) + 200, 16000)})
    try:
        page.evaluate("""() => new Promise(laid_out => requestAnimationFrame(
            () => requestAnimationFrame(laid_out)))""")
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(VIEWPORT)


def _copy(notebook: Path, kernel: str | None = None) -> str:
    """A copy of ``notebook`` to open and run (JupyterLab may autosave it), as a path under REPO,
    alone in a folder of its own (what a run writes beside it stays there): without outputs, as
    a learner's copy opens (the run draws them; an executed notebook as a self-studier opens it
    has its own test), and set to open on ``kernel`` if given."""
    copy = COPIES / notebook.parent.name / notebook.stem / notebook.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    copy.parent.mkdir(parents=True, exist_ok=True)
    opened = without_outputs(nbformat.read(notebook, as_version=4))
    if kernel is not None:
        opened.metadata.kernelspec = {"name": kernel, "display_name": kernel,
                                      "language": "python"}
    nbformat.write(opened, copy)
    return copy.relative_to(REPO).as_posix()


def test_a_built_lesson_opens_unmodified(lab_page):
    """Does a lesson as the course builds it (the source that course/ and nbgrader's release
    are made from) open without showing as modified: JupyterLab writes the kernel's
    language_info and kernelspec into a notebook's metadata as its kernel starts, and a
    notebook that has them already is left as it is?"""
    built = source_notebook("00_template")
    copy = COPIES / "opened" / "00_template.ipynb"
    copy.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(built, copy)
    open_notebook(lab_page, copy.relative_to(REPO).as_posix())
    dirty, metadata = lab_page.evaluate("""async () => {
        const panel = window.jupyterapp.shell.currentWidget;
        const kernel = panel.sessionContext.session.kernel;
        await Promise.all([kernel.info, kernel.spec]);
        await new Promise(resolve => setTimeout(resolve, 500));  // what they set has landed
        return [panel.model.dirty, panel.model.metadata];
    }""")
    assert not dirty, f"opening changed its metadata from {built.metadata} to {metadata}"


def test_a_control_that_changes_nothing_is_caught(lab_page):
    """Would the control check notice a checkbox and a button that leave their view as it
    was, and wait for a view that answers two seconds late?"""
    open_notebook(lab_page, _copy(REPO / "tests/data/inert_controls.ipynb"))
    track_kernel_traffic(lab_page)
    run_all(lab_page)
    wait_rendered(lab_page, 2)
    assert unresponsive(lab_page, range(2)) == ["view 1: no checkbox changed it",
                                          "view 1: no button changed it"]


# What the widget manager of @jupyter-widgets/jupyterlab-manager 3.0 shows for an output whose
# model it has not got when it counts itself restored.
MODEL_NOT_FOUND = "Error displaying widget: model not found"


def _redraw_models_not_found(page) -> int:
    """Hand each output showing MODEL_NOT_FOUND its own data again, so that its renderer looks
    the model up anew; the number redrawn."""
    return page.evaluate(f"""() => {{
        let redrawn = 0;
        for (const cell of window.jupyterapp.shell.currentWidget.content.widgets) {{
            if (cell.model.type !== 'code') continue;
            const area = cell.outputArea;
            area.widgets.forEach((child, index) => {{
                if (child.node.textContent.includes({MODEL_NOT_FOUND!r})) {{
                    area.model.set(index, area.model.get(index).toJSON());
                    redrawn += 1;
                }}
            }});
        }}
        return redrawn;
    }}""")


def _open_trusted(page, relative: str, expected: int) -> None:
    """Open a trusted notebook with saved widget state and wait for its ``expected`` views.
    The widget manager restores models from the kernel and from the notebook in separate
    handlers and counts itself restored after either (jupyterlab-manager 3.0's
    `_handleKernelConnectionStatusChange`): an output drawn between the two shows
    MODEL_NOT_FOUND although the notebook holds its model, and a loaded machine loses that race
    on every open. An output that shows it is drawn again, as closing and reopening the
    notebook would draw it, for as long as the notebook's state may still be loading (30 s); a
    model the saved state lacks is never found and fails the test, as does any other error."""
    close_notebooks(page)
    open_notebook(page, relative)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            wait_rendered(page, expected)
            return
        except pytest.fail.Exception as failure:
            if MODEL_NOT_FOUND not in str(failure):
                raise
        time.sleep(1)
        _redraw_models_not_found(page)
    wait_rendered(page, expected)


def test_does_an_executed_notebook_show_its_views_before_anything_runs(lab, lab_page,
                                                                       tmp_path_factory):
    """What a learner sees on opening a built notebook: untrusted, each view's static HTML
    snapshot; trusted, the live widgets drawn from the saved widget state."""
    _, _, env = lab
    page = lab_page
    executed = COPIES / "executed" / WIDGETS_DEMO.name
    executed.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(executed_widgets_demo(tmp_path_factory), executed)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    relative = executed.relative_to(REPO).as_posix()
    open_notebook(page, relative)
    notebook = page.locator(".jp-Notebook")
    deadline = time.monotonic() + 30
    while (notebook.text_content().count(SNAPSHOT_NOTE) < DEMO_VIEWS
           and time.monotonic() < deadline):
        time.sleep(0.2)
    text = notebook.text_content()
    assert text.count(SNAPSHOT_NOTE) == DEMO_VIEWS, "untrusted: not every view shows its snapshot"
    assert "View(children=" not in text
    pictured = sum(output.get("data", {}).get("text/html", "").count('src="data:image/png')
                   for cell in nbformat.read(executed, as_version=4).cells
                   for output in cell.get("outputs", []))
    assert pictured > 5, "the demo's snapshots hold too few pictures to test"
    shown = page.locator('.jp-OutputArea-output img[src^="data:image/png"]').count()
    assert shown == pictured, "untrusted: a snapshot's picture is missing"
    _screenshot(page, SCREENSHOTS / "widgets_demo-executed-untrusted.png")

    subprocess.run([*jupyter_command("trust"), str(executed)], env=env, check=True,
                   capture_output=True)
    _open_trusted(page, relative, expected=DEMO_VIEWS)
    for i in range(DEMO_VIEWS):
        assert signature(views(page).nth(i)), f"trusted: view {i + 1} shows nothing"
    _screenshot(page, SCREENSHOTS / "widgets_demo-executed-trusted.png")


def _first_of_each_function(page) -> list[int]:
    """The views (0-based, in page order) whose controls are operated: the first of each widget
    function (jacobian_view is drawn ten times in lesson 09). Every view is still checked
    rendered and pictured; the others share that view's code, whose logic tests/widgets tests
    on every function offline, and operating each took seconds of Chromium and kernel time."""
    functions = page.evaluate(f"""() => window.jupyterapp.shell.currentWidget.content.widgets
        .filter(c => c.model.type === 'code')
        .flatMap(c => c.model.outputs.toJSON()
            .filter(o => o.data && o.data['{WIDGET_MIME}'])
            .map(() => c.model.sharedModel.getSource()))""")
    first = {}
    for index, source in enumerate(functions):
        calls = re.findall(r"^(?:widgets\.)?(\w+)\(", source, re.MULTILINE)
        first.setdefault(calls[-1] if calls else source, index)
    return sorted(first.values())


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_do_the_widgets_render_and_respond(lab_page, notebook):
    page = lab_page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    expected_views = None
    # The whole notebook in one picture only where something failed: rastering a lesson 16,000
    # pixels tall costs Chromium seconds of CPU, and the views have their own pictures.
    try:
        open_notebook(page, _copy(notebook, STRANGER_KERNEL))
        track_kernel_traffic(page)
        run_all(page)
        _assert_strangers_kernel(page)
        expected_views = page.evaluate(f"""() => window.jupyterapp.shell.currentWidget.content
            .widgets.filter(c => c.model.type === 'code')
            .flatMap(c => c.model.outputs.toJSON())
            .filter(o => o.data && o.data['{WIDGET_MIME}']).length""")
        wait_rendered(page, expected_views)
        math_errors = _math_errors(page)  # settled by now: typesetting began at opening
        assert not math_errors, f"{notebook.name}: MathJax could not typeset {math_errors}"
        for i in range(expected_views):  # as a learner first sees them
            views(page).nth(i).screenshot(
                path=str(SCREENSHOTS / f"{notebook.stem}-view{i + 1}.png"))
        unchanged = unresponsive(page, _first_of_each_function(page))
        wait_rendered(page, expected_views)
        assert not unchanged, "; ".join(unchanged)
    except BaseException:
        _screenshot(page, SCREENSHOTS / f"{notebook.stem}.png")
        raise
    assert expected_views, (f"{notebook.name} displays no widget view: every lesson shows at "
                            "least one (widgets.inspect_saved, widgets.backward_flow, ...)")


MATH = re.compile(r"\$|\\\(|\\\[|\\begin\{")  # what JupyterLab's Markdown renderer sends MathJax


def test_every_lessons_formulas_typeset(lab_page):
    """Does MathJax typeset every formula of every lesson: their Markdown cells that hold one,
    in course order, on one page (a lesson opens in seconds of Chromium; all of them at once,
    in one)?"""
    lessons = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    seen = set()
    for lesson in lesson_names():
        cells = [cell for cell in nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4).cells
                 if cell.cell_type == "markdown" and MATH.search(cell.source)
                 and cell.source not in seen]
        seen.update(cell.source for cell in cells)
        for index, cell in enumerate(cells):
            cell.id = f"{lesson}-{index}"  # lessons number their cells alike
        lessons.cells += [nbformat.v4.new_markdown_cell(f"# Lesson {lesson}")] + cells
    copy = COPIES / "formulas" / "every_lesson.ipynb"
    copy.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(lessons, copy)
    open_notebook(lab_page, copy.relative_to(REPO).as_posix())
    errors = _math_errors(lab_page)
    assert lab_page.locator("mjx-container").count() > 100, "the lessons' formulas never typeset"
    assert not errors, f"MathJax could not typeset {errors}"
