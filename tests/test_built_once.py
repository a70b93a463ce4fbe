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
