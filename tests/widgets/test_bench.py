"""Does the benchmark time every interactive view?"""

from widgets.bench import measure_updates, report


def test_does_it_time_every_view():
    results = measure_updates(repeats=1, tiny=True)
    assert len(results) == 7
    assert all(ms > 0 for ms in results.values())
    assert report(results).count(" ms ") == 7
