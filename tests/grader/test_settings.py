"""Grading settings: declared once, read from the environment once, used everywhere."""

from pathlib import Path

import pytest
from traitlets.config import Config

from grader.course_config import configure
from grader.execute import SealedExecute
from grader.settings import Settings, described

DOCS = "".join(path.read_text() for path in (
    Path(__file__).resolve().parents[2] / "README.md",
    *sorted((Path(__file__).resolve().parents[2] / "docs").glob("*.md"))))


def test_the_defaults():
    """Without variables, are the documented defaults used?"""
    settings = Settings.from_environment({})
    assert (settings.cell_timeout, settings.memory_limit_mb, settings.sandbox, settings.zygote) \
        == (120, 2048, "auto", True)
    assert settings.notebook_seconds == 480


def test_variables_override_the_defaults():
    """Does each variable change its setting, and an empty one leave the default?"""
    settings = Settings.from_environment({
        "AUTOGRADER_CELL_TIMEOUT": "30", "AUTOGRADER_NOTEBOOK_TIMEOUT": "100",
        "AUTOGRADER_MEMORY_LIMIT_MB": "0", "AUTOGRADER_SANDBOX": " Required ",
        "AUTOGRADER_ZYGOTE": "0"})
    assert settings == Settings(cell_timeout=30, notebook_timeout=100, memory_limit_mb=0,
                                sandbox="required", zygote=False)
    assert Settings.from_environment({"AUTOGRADER_CELL_TIMEOUT": ""}).cell_timeout == 120


@pytest.mark.parametrize("environment, phrase", [
    ({"AUTOGRADER_SANDBOX": "maybe"}, "AUTOGRADER_SANDBOX must be auto, required or off"),
    ({"AUTOGRADER_CELL_TIMEOUT": "2m"}, "AUTOGRADER_CELL_TIMEOUT must be a whole number"),
    ({"AUTOGRADER_CELL_TIMEOUT": "0"}, "AUTOGRADER_CELL_TIMEOUT must be at least 1"),
    ({"AUTOGRADER_MEMORY_LIMIT_MB": "-5"}, "AUTOGRADER_MEMORY_LIMIT_MB must be 0 or more")])
def test_a_bad_value_is_refused_with_its_variable_named(environment, phrase):
    """Does a typo in a variable stop grading with a message naming the variable?"""
    with pytest.raises(ValueError, match=phrase):
        Settings.from_environment(environment)


def test_settings_travel_as_plain_data():
    """Can a job carry its settings to a worker on another machine and back?"""
    settings = Settings(cell_timeout=7, zygote=False)
    assert Settings.from_dict(settings.to_dict()) == settings


def test_nbgrader_configuration_and_executor_read_the_same_settings(monkeypatch):
    """Do `nbgrader autograde` (course configuration) and the executor's defaults follow the
    environment, as `make autograde` does?"""
    monkeypatch.setenv("AUTOGRADER_CELL_TIMEOUT", "42")
    monkeypatch.setenv("AUTOGRADER_MEMORY_LIMIT_MB", "512")
    monkeypatch.setenv("AUTOGRADER_ZYGOTE", "0")
    config = Config()
    configure(config)
    assert config.Execute.timeout == 42
    executor = SealedExecute(config=config)
    assert (executor.timeout, executor.memory_limit_mb, executor.zygote) == (42, 512, False)
    assert executor.settings == Settings.from_environment()


@pytest.mark.parametrize("variable, default, meaning", described())
def test_every_variable_is_documented(variable, default, meaning):
    """Do the README and its docs name every variable an instructor can set?"""
    assert variable in DOCS
