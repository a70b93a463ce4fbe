"""`make results`: the three commands the README's "What to rerun" table always lists after
`make autograde` or a regrade (feedback, grades, insight), one after the other, each given the
same LESSONS= (issue 68's instructor trial ran them by hand, every time)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_make_results_runs_feedback_grades_and_insight_in_turn():
    ran = subprocess.run(["make", "-n", "--no-print-directory", "results", "LESSONS=07 12",
                          "WORKERS=3"], cwd=ROOT, capture_output=True, text=True, check=True)
    commands = [line for line in ran.stdout.splitlines() if " -m grader " in line]
    assert commands == [".venv/bin/python -m grader feedback 07 12 --workers 3 ",
                        ".venv/bin/python -m grader grades 07 12",
                        ".venv/bin/python -m grader insight 07 12 "]


def test_the_readme_gives_it_in_the_term_steps_and_what_to_rerun():
    readme = (ROOT / "README.md").read_text()
    steps = readme[readme.index("1. `make install`"):readme.index("### The commands")]
    rerun = readme[readme.index("#### What to rerun"):]
    assert "`make results`" in steps and "`make results` runs the three" in rerun
