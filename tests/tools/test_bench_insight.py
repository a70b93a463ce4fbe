"""Does the insight benchmark build a class insight can read, and time the whole command?"""

import pytest

from grader.insight import class_insight
from tools import bench_insight
from tools.bench import BENCHMARKS


def test_is_the_benchmark_registered_with_make_bench():
    assert ("insight (300 learners x 14 lessons)", "tools.bench_insight") in BENCHMARKS


def test_does_the_synthetic_class_count_every_learner_once(tmp_path):
    """Is every synthetic learner graded on every exercise, full marks or in one group?"""
    bench_insight.synthetic_class(tmp_path, 12, ["00_template"])
    (insight,), skipped = class_insight(tmp_path, ["00_template"])
    assert skipped == [] and len(insight.graded) == 12
    assert [exercise.name for exercise in insight.exercises] == ["Square", "WeightedSum", "Outer"]
    for exercise in insight.exercises:
        grouped = sum(len(group.students) for group in exercise.groups)
        assert len(exercise.passed) + grouped == 12


@pytest.mark.slow
def test_does_it_time_reading_writing_and_the_command(tmp_path):
    bench_insight.synthetic_class(tmp_path, 5, ["00_template"])
    seconds = bench_insight.measure(tmp_path, ["00_template"])
    assert list(seconds) == ["read and group", "page, CSV and figures",
                             "python -m grader insight"]
    assert all(value > 0 for value in seconds.values())
