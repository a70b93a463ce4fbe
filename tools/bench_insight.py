"""`make bench`: class insight on a synthetic class, 300 learners over the 14 lessons, from
recorded verdicts (what ``make autograde`` leaves): reading and grouping, then the page, CSV and
figures, then the whole ``python -m grader insight`` command in a fresh process. Goal: under 10 s
on 2 cores."""

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from grader import verdict_store
from grader.insight import class_insight, layout
from grader.insight_report import write_reports
from grader.ledger import LEDGER
from grader.lessons import ROOT, lesson_names, source_notebook

STUDENTS, GOAL_SECONDS = 300, 10.0
CATEGORIES = ["not-implemented", "raised:RuntimeError", "raised:TypeError",
              "unproven:wrong-value", "unnamed:check", "timeout", "kernel-died"]


def _verdict(rng: random.Random, exercise: str) -> dict:
    """Full marks for most; else a named slip (a few are common) or a category."""
    if rng.random() < 0.55:
        return {"passed": True}
    if rng.random() < 0.65:
        slip = min(int(rng.expovariate(0.7)) + 1, 6)
        return {"passed": False, "score": None, "mistake": f"{exercise}/slip-{slip}",
                "hint": f"{exercise} makes slip {slip} (with x of shape (3, 4))"}
    category = rng.choice(CATEGORIES)
    return {"passed": False, "score": None, "mistake": category,
            "hint": f"{exercise}: {category} (the learner's own words)"}


def synthetic_class(root: Path, students: int, lessons: list[str], seed: int = 0) -> None:
    """A course root as ``make release`` and ``make autograde`` leave it, without grading:
    each lesson released (its notebook), and for every learner a ledger entry and a verdict
    record per lesson."""
    rng, ledger = random.Random(seed), {}
    for lesson in lessons:
        folder = root / "release" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(source_notebook(lesson), folder / f"{lesson}.ipynb")
        tests = layout(root, lesson).tests[lesson]
        for number in range(students):
            student = f"learner{number:03d}"
            digest = hashlib.sha256(f"{lesson}/{student}".encode()).hexdigest()
            verdict_store.write(root, student, lesson, digest,
                                {lesson: {test: _verdict(rng, test) for test in tests}})
            ledger[f"{lesson}/{student}"] = {
                "digest": digest, "status": "ok", "seconds": 5.0, "graded_at": "",
                "notebooks": {lesson: {"status": "ok", "reason": "", "faults": []}}}
    (root / LEDGER).write_text(json.dumps(ledger, indent=1, sort_keys=True))
    (root / "gradebook.db").touch()  # `python -m grader` wants one (insight never reads it)


def measure(root: Path, lessons: list[str]) -> dict[str, float]:
    """Seconds: reading and grouping, writing page + CSV + figures, the whole command."""
    began = time.perf_counter()
    found, skipped = class_insight(root, lessons)
    grouped = time.perf_counter()
    write_reports(found, skipped, root / "insight")
    written = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "insight"], cwd=ROOT, check=True,
                   env={**os.environ, "COURSE_ROOT": str(root)}, capture_output=True)
    return {"read and group": grouped - began, "page, CSV and figures": written - grouped,
            "python -m grader insight": time.perf_counter() - written}


def run() -> str:
    lessons = lesson_names()
    with tempfile.TemporaryDirectory(prefix="bench-insight-") as scratch:
        root = Path(scratch)
        synthetic_class(root, STUDENTS, lessons)
        seconds = measure(root, lessons)
    lines = [f"class insight, {STUDENTS} learners x {len(lessons)} lessons from recorded "
             f"verdicts (goal: the whole command under {GOAL_SECONDS:g} s on 2 cores):"]
    lines += [f"  {what:<26} {value:6.2f} s" for what, value in seconds.items()]
    total = seconds["python -m grader insight"]
    lines.append(f"  {'verdict':<26} {'met' if total < GOAL_SECONDS else 'MISSED'} "
                 f"({total:.2f} s of {GOAL_SECONDS:g})")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
