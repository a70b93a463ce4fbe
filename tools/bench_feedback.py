"""`make bench`: `make feedback` on a small graded class, the way it ran before and the way it
runs now, side by side in one run.

Three lessons, two submissions each (the solution and one catalogued mistake, as
``tools.bench_class`` builds them), graded once. Then, each from no feedback at all:

- before: one nbgrader process per lesson, one lesson after another, nbconvert's own HTML
  exporter (its BeautifulSoup pass over each finished page);
- the exporter alone: the same, with ``grader.feedback.FeedbackHTMLExporter``;
- now: ``make feedback`` (that exporter, two lessons at a time);
and ``make feedback`` again with nothing changed (every page current), and after one learner's
comment changed by hand (that page only). Wall seconds per notebook, and the CPU seconds the
nbgrader processes used (what a loaded machine stretches, the wall time stretches more).
Run alone: ``python -m tools.bench feedback``; a few minutes on 2 idle cores (most of it
grading the class). Measured on 2 cores under a load of 22: before 103 s (16 s of CPU), now
49 s (12 s of CPU); nothing changed 0.0 s.
"""

import contextlib
import io
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from grader import batch
from grader.feedback_run import feedback
from grader.instructor import release
from grader.manual import give
from grader.nbgrader_cli import nbgrader
from tools.bench_class import make_class

LESSONS = ["00_template", "02_linear", "09_patterns"]
NBCONVERT_EXPORTER = "--GenerateFeedback.exporter_class=nbconvert.exporters.HTMLExporter"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(step) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the processes it started) of ``step()``."""
    cpu, began = _children_cpu(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        step()
    return time.perf_counter() - began, _children_cpu() - cpu


def _per_lesson(root: Path, *options: str) -> None:
    for lesson in LESSONS:
        nbgrader("generate_feedback", lesson, "--force", "--log-level=ERROR", *options,
                 root=root, capture=True)


def _fresh(root: Path) -> Path:
    shutil.rmtree(root / "feedback", ignore_errors=True)
    (root / ".autograder" / "feedback.json").unlink(missing_ok=True)
    return root


def run() -> str:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as scratch:
        root = Path(scratch)
        with contextlib.redirect_stdout(io.StringIO()):
            release(root, LESSONS)
        students = make_class(root, LESSONS)
        batch.autograde(root, LESSONS, workers=2, force=True, stream=io.StringIO())
        notebooks = len(list((root / "autograded").glob("*/*/*.ipynb")))
        rows = [
            ("before: a process per lesson, nbconvert's exporter, in turn", notebooks,
             _timed(lambda: _per_lesson(_fresh(root), NBCONVERT_EXPORTER))),
            ("the course's exporter, a process per lesson, in turn", notebooks,
             _timed(lambda: _per_lesson(_fresh(root)))),
            ("now: make feedback (WORKERS=2)", notebooks,
             _timed(lambda: feedback(_fresh(root), LESSONS, workers=2))),
            ("make feedback again, nothing changed", 0,
             _timed(lambda: feedback(root, LESSONS, workers=2))),
        ]
        learner = students[LESSONS[1]][0]
        with contextlib.redirect_stdout(io.StringIO()):
            give(root, LESSONS[1], learner, "MyLinearFunction", comment="see me")
        rows.append(("after one comment by hand", 1,
                     _timed(lambda: feedback(root, LESSONS, workers=2))))
    lines = [f"make feedback, {notebooks} graded notebooks in {len(LESSONS)} lessons "
             f"(load {load:.1f} on {os.cpu_count()} cores before):",
             f"  {'':<62} {'wall s':>7} {'per nb':>7} {'CPU s':>7}"]
    for what, written, (wall, cpu) in rows:
        each = f"{wall / written:7.2f}" if written else f"{'-':>7}"
        lines.append(f"  {what:<62} {wall:7.1f} {each} {cpu:7.1f}")
    before, now = rows[0][2][0], rows[2][2][0]
    lines.append(f"  now / before: {now / before:.2f} of the wall time")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
