"""autograder.torch_state: a learner's global torch settings never cost a correct answer."""

import pytest
import torch

from autograder.grading import self_check, verdict
from autograder.torch_state import known_state
from tools.solutions import solution
from tests.autograder.passing import passes


@pytest.fixture
def learner_state():
    """Grad mode off and float64 as the default dtype, as an answer cell may leave them; put
    back to torch's defaults after the test whatever happens."""
    torch.set_grad_enabled(False)
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)


def test_correct_sigmoid_passes_after_grad_off_and_float64(learner_state, capsys):
    """Does a correct MySigmoid pass self_check and grade after set_grad_enabled(False) and
    set_default_dtype(float64), and are both settings the learner's again afterwards?"""
    function = solution("MySigmoid")
    self_check("MySigmoid", function)
    assert verdict("MySigmoid", function) == (True, passes("MySigmoid"))
    assert not torch.is_grad_enabled()
    assert torch.get_default_dtype() == torch.float64


def test_inference_mode_anomaly_and_determinism_are_reset_and_restored():
    """Inside known_state: grad on, no inference mode, float32, CPU, no anomaly detection, no
    deterministic algorithms; after it, every setting as the caller left it."""
    torch.set_anomaly_enabled(True)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with torch.inference_mode(), known_state():
            assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
            assert torch.get_default_dtype() == torch.float32
            assert torch.zeros(1).device == torch.device("cpu")
            assert not torch.is_anomaly_enabled()
            assert not torch.are_deterministic_algorithms_enabled()
            assert torch.zeros(1, requires_grad=True).mul(2).requires_grad
        assert torch.is_anomaly_enabled()
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        torch.set_anomaly_enabled(False)
        torch.use_deterministic_algorithms(False)


def test_default_device_is_restored():
    """Does a default device set by the learner ('meta' here) come back after grading?"""
    torch.set_default_device("meta")
    try:
        assert verdict("Square", solution("Square"))[0]
        assert torch.zeros(1).device == torch.device("meta")
    finally:
        torch.set_default_device(None)
