"""The test runs' build-once helper: built once, and a failed build not tried again."""

import pytest

from tests.built_once import built_once


def test_a_fixture_is_built_once_and_a_failed_build_fails_fast(tmp_path_factory):
    builds = []

    def build(folder):
        builds.append(folder)
        (folder / "made").touch()

    first = built_once(tmp_path_factory, "helper-ok", build)
    assert built_once(tmp_path_factory, "helper-ok", build) == first
    assert len(builds) == 1 and (first / "made").exists()

    def broken(folder):
        builds.append(folder)
        raise ValueError("no disk")

    with pytest.raises(ValueError):
        built_once(tmp_path_factory, "helper-broken", broken)
    with pytest.raises(RuntimeError, match="helper-broken failed earlier in this run: "
                                           "ValueError: no disk"):
        built_once(tmp_path_factory, "helper-broken", broken)
    assert len(builds) == 2


class _Run:
    """A stand-in for pytest's tmp_path_factory whose base folder is ``base``."""

    def __init__(self, base):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self):
        return self.base


def test_workers_of_one_run_share_a_build_and_later_runs_do_not(tmp_path, monkeypatch):
    """Do xdist workers of a run share a build, while a run without workers builds its own?"""
    builds = []

    def build(folder):
        builds.append(folder)

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = built_once(_Run(tmp_path / "run-1" / "popen-gw0"), "shared", build)
    assert built_once(_Run(tmp_path / "run-1" / "popen-gw1"), "shared", build) == first
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    alone = built_once(_Run(tmp_path / "run-2"), "shared", build)
    again = built_once(_Run(tmp_path / "run-3"), "shared", build)
    assert len(builds) == 3 and len({first, alone, again}) == 3
