"""The one way the lesson-special tests run an exercise's checks."""

import torch

from autograder.exercises import EXERCISES


def run(name: str, submission, device="cpu"):
    """Run the battery of one exercise (what self_check and grade both run) on ``device``."""
    EXERCISES[name].battery(submission, torch.device(device))
