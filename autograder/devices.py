"""Which devices the hidden tests run on: CPU always, CUDA too when present.

``AUTOGRADER_DEVICE=cpu`` or ``AUTOGRADER_DEVICE=cuda`` forces a single device.
"""

import os

import torch

DEVICE_VARIABLE = "AUTOGRADER_DEVICE"


def grading_devices() -> list[torch.device]:
    """The devices every exercise is graded on."""
    forced = os.environ.get(DEVICE_VARIABLE, "").strip().lower()
    if forced == "cpu":
        return [torch.device("cpu")]
    if forced == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"{DEVICE_VARIABLE}=cuda but PyTorch sees no CUDA device "
                f"(torch {torch.__version__}, CUDA build: {torch.version.cuda is not None})"
            )
        return [torch.device("cuda")]
    if forced:
        raise ValueError(f"{DEVICE_VARIABLE} must be 'cpu' or 'cuda', not {forced!r}")
    devices = [torch.device("cpu")]
    if torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    return devices


def interpret_triton_without_gpu() -> None:
    """Without a GPU, Triton kernels (lesson 13) run in Triton's interpreter. Triton reads
    TRITON_INTERPRET once, when it is first imported (torch._dynamo and torch.utils.flop_counter
    import it), so this runs before them; a value the learner set is kept."""
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
