"""The pip and conda descriptions of the course environment stay in step."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*(?:-\s+)?([A-Za-z0-9_.\-]+)==([^\s#]+)")


def _pins(path: Path) -> dict[str, str]:
    return {m[1].lower(): m[2] for line in path.read_text().splitlines() if (m := PIN.match(line))}


def test_conda_environment_pins_what_requirements_pin():
    """Does environment.yml list exactly the packages and versions of requirements.txt?"""
    assert _pins(ROOT / "environment.yml") == _pins(ROOT / "requirements.txt")


def test_torch_is_pinned_to_the_course_version():
    """Is torch pinned to 2.13.0, the version the course is written for?"""
    assert _pins(ROOT / "requirements.txt")["torch"] == "2.13.0"


def test_install_pulled_no_cuda_wheels():
    """Did `make install` take the CPU torch wheel, with none of the multi-GB nvidia-* packages?"""
    from importlib.metadata import distributions

    import pytest
    import torch

    assert torch.__version__.split("+")[0] == "2.13.0"
    if torch.version.cuda is not None:
        pytest.skip("a CUDA build of torch was installed deliberately (README: Using a GPU)")
    assert not sorted(d.metadata["Name"] for d in distributions()
                      if d.metadata["Name"].lower().startswith("nvidia-"))


def test_the_notebooks_name_the_torch_they_were_checked_on():
    """Is the version the notebooks compare a learner's torch with the pinned one?"""
    from autograder.environment import CHECKED_TORCH, torch_note

    assert CHECKED_TORCH == _pins(ROOT / "requirements.txt")["torch"]
    assert torch_note(CHECKED_TORCH) is None and torch_note(f"{CHECKED_TORCH}+cpu") is None
    assert "2.9.0+cu126" in torch_note("2.9.0+cu126")
