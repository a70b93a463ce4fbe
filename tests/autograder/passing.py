"""What a passing verdict says on this machine: its devices are part of the promise."""

from autograder.devices import grading_devices
from autograder.exercise import passed_message


def passes(name: str) -> str:
    """``<name> passes every check grading runs on CPU`` (``on CUDA and CPU`` with a GPU)."""
    return passed_message(name, grading_devices())
