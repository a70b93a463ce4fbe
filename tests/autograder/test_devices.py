"""autograder.devices: which devices the hidden tests grade on, and AUTOGRADER_DEVICE."""

import pytest
import torch

from autograder.devices import DEVICE_VARIABLE, grading_devices
from autograder.exercise import Exercise
from autograder.grading import verdict
from tools.solutions import solution

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


def test_default_is_cpu_then_cuda(monkeypatch):
    """Without the variable, is it CPU, plus CUDA exactly when PyTorch sees one?"""
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    expected = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    assert grading_devices() == expected


@pytest.mark.parametrize("value", ["cpu", " CPU ", "Cpu"])
def test_force_cpu(monkeypatch, value):
    """Does AUTOGRADER_DEVICE=cpu (any case, any spaces) force CPU alone?"""
    monkeypatch.setenv(DEVICE_VARIABLE, value)
    assert grading_devices() == [torch.device("cpu")]


def test_empty_means_default(monkeypatch):
    """Is an empty AUTOGRADER_DEVICE the same as none?"""
    monkeypatch.setenv(DEVICE_VARIABLE, "")
    assert grading_devices()[0] == torch.device("cpu")


@NO_CUDA
def test_force_cuda_without_gpu(monkeypatch):
    """Does AUTOGRADER_DEVICE=cuda on a machine without CUDA fail loudly, saying why?"""
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda")
    with pytest.raises(RuntimeError, match=r"AUTOGRADER_DEVICE=cuda but PyTorch sees no CUDA "
                                           r"device \(torch .*, CUDA build: (True|False)\)"):
        grading_devices()


def test_force_cuda_with_gpu(monkeypatch, cuda):
    """Does AUTOGRADER_DEVICE=cuda force CUDA alone where there is one?"""
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda")
    assert grading_devices() == [torch.device("cuda")]


@pytest.mark.parametrize("value", ["gpu", "cuda:0", "mps", "cpu,cuda"])
def test_invalid_value(monkeypatch, value):
    """Is any other value refused with the two that are allowed?"""
    monkeypatch.setenv(DEVICE_VARIABLE, value)
    with pytest.raises(ValueError,
                       match=f"AUTOGRADER_DEVICE must be 'cpu' or 'cuda', not '{value}'"):
        grading_devices()


def test_run_uses_grading_devices(monkeypatch):
    """Does Exercise.run run the battery once per grading device, in order?"""
    seen = []
    exercise = Exercise("Square", "00_template",
                        battery=lambda submission, device: seen.append((submission, device)))
    monkeypatch.setattr("autograder.exercise.grading_devices",
                        lambda: [torch.device("cpu"), torch.device("meta")])
    square = solution("Square")
    assert exercise.run(square) == [torch.device("cpu"), torch.device("meta")]
    assert seen == [(square, torch.device("cpu")), (square, torch.device("meta"))]


@NO_CUDA
def test_misconfigured_device_fails_the_verdict(monkeypatch):
    """With AUTOGRADER_DEVICE=cuda and no GPU, does grading fail closed, saying why?"""
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda")
    passed, message = verdict("Square", solution("Square"))
    assert not passed and "AUTOGRADER_DEVICE=cuda but PyTorch sees no CUDA device" in message
