"""Rule 1, the default device: a tensor made without device= fails on a CPU-only run, as it
would on a GPU; tensors made with device=x.device, *_like or new_*, CPU scalars, indices and
buffers moved with .to(x.device) pass."""

import pytest
import torch

from autograder.default_device import check_default_device
from autograder.function_contract import rule_reference
from tests.autograder.rule_answers import CPU, SQUARE_DOMAIN, function

SAVE = "ctx.save_for_backward(x)\n"
READ = "x, = ctx.saved_tensors\n"


@pytest.mark.parametrize("forward, backward", [
    (SAVE + "return x * x", READ + "two = torch.full(x.shape, 2.0, dtype=x.dtype)\n"
     "return two * x * g"),
    (SAVE + "buffer = torch.zeros(x.shape[-1], dtype=x.dtype)\nreturn x * x + buffer",
     READ + "return 2 * x * g"),
])
def test_a_tensor_made_without_device_is_caught(raises_hint, forward, backward):
    with raises_hint("made a tensor on the default device (torch.") as info:
        check_default_device(SQUARE_DOMAIN, function("Square", forward, backward), CPU)
    first = str(info.value).splitlines()[0]
    assert first.endswith(rule_reference("values"))
    assert "tried forward and backward on CPU inputs with the default device another one" in first


def test_an_output_made_on_the_default_device_is_caught(raises_hint):
    answer = function("Square", SAVE + "return torch.tensor((x * x).tolist(), dtype=x.dtype)",
                      READ + "return 2 * x * g")
    with raises_hint("returned an output on the default device (torch.tensor without device=)"):
        check_default_device(SQUARE_DOMAIN, answer, CPU)


@pytest.mark.parametrize("forward, backward", [
    (SAVE + "return x * torch.ones_like(x) * x", READ + "return 2 * x * g"),
    (SAVE + "two = torch.full(x.shape, 2.0, dtype=x.dtype, device=x.device)\nreturn x * x",
     READ + "return torch.full(x.shape, 2.0, dtype=x.dtype, device=x.device) * x * g"),
    (SAVE + "return x * x", READ + "return torch.tensor(2.0, dtype=x.dtype) * x * g"),
    (SAVE + "return x * x",
     READ + "two = torch.tensor([2.0]).to(x.device, x.dtype)\nreturn two * x * g"),
    (SAVE + "return x * x", READ + "rows = torch.arange(x.shape[0])\n"
     "return (2 * x * g)[rows] + x.new_zeros(x.shape)"),
    (SAVE + "return x * x", READ + "n = torch.tensor(x.shape).prod().item()\n"
     "return 2 * x * g * (n / x.numel())"),
])
def test_tensors_on_the_inputs_device_pass(forward, backward):
    check_default_device(SQUARE_DOMAIN, function("Square", forward, backward), CPU)


def test_the_default_device_is_left_as_it_was():
    answer = function("Square", SAVE + "return x * x + torch.zeros(x.shape[-1])",
                      READ + "return 2 * x * g")
    with pytest.raises(AssertionError):
        check_default_device(SQUARE_DOMAIN, answer, CPU)
    assert torch.zeros(1).device.type == "cpu"
