"""Rule 1, the default device: a tensor made without device= fails on a CPU-only run, as it
would on a GPU, also inside a custom operator's body and as a 0-d tensor the inputs' values are
written into; tensors made with device=x.device, *_like or new_*, CPU scalars, indices and
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
    assert ("tried forward and backward on CPU inputs (typical inputs: x of shape (3, 4)) with "
            "the default device another one") in first


@pytest.mark.parametrize("branch, tried", [
    ("if x.numel() == 0:\n    return torch.empty(x.shape, dtype=x.dtype)\n",
     "(an empty batch: x of shape (0, 4))"),
    ("if x.dim() == 0:\n    return torch.tensor(x.item() ** 2, dtype=x.dtype)\n",
     "(0-d inputs: x of shape ())"),
    ("if x.shape[-1] == 1:\n    return torch.zeros(x.shape, dtype=x.dtype) + x * x\n",
     "(dimensions of size 1: x of shape (3, 1))"),
])
def test_a_branch_for_one_shape_is_caught_at_that_shape(raises_hint, branch, tried):
    """Rule 1 names every shape: a tensor made without device= in a branch for an empty, 0-d
    or size-1 input is seen at that shape (review 79's S10, S11 and O10)."""
    answer = function("Square", SAVE + branch + "return x * x", READ + "return 2 * x * g")
    with raises_hint("on the default device (torch.") as info:
        check_default_device(SQUARE_DOMAIN, answer, CPU)
    first = str(info.value).splitlines()[0]
    assert tried in first and first.endswith(rule_reference("values"))


def test_a_backward_branch_for_an_empty_batch_is_caught(raises_hint):
    answer = function("Square", SAVE + "return x * x", READ + "if x.numel() == 0:\n"
                      "    return torch.zeros(x.shape, dtype=x.dtype)\nreturn 2 * x * g")
    with raises_hint("made a tensor on the default device (torch.zeros without device=)") as info:
        check_default_device(SQUARE_DOMAIN, answer, CPU)
    assert "(an empty batch: x of shape (0, 4))" in str(info.value).splitlines()[0]


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


@pytest.mark.parametrize("forward, backward", [
    (SAVE + "total = torch.zeros((), dtype=x.dtype)\ntotal += (x * x).sum()\n"
     "return x * x + 0 * total", READ + "return 2 * x * g"),
    (SAVE + "return x * x", READ + "scale = torch.tensor(2.0, dtype=x.dtype)\n"
     "return scale.expand(x.shape) * x * g"),
])
def test_a_0d_tensor_made_without_device_is_caught_where_a_gpu_refuses_it(raises_hint, forward,
                                                                         backward):
    """A 0-d CPU tensor meets a CUDA tensor freely, but a GPU refuses the inputs' values written
    into it, and one grown to dimensions beside them."""
    with raises_hint("made a tensor on the default device (torch."):
        check_default_device(SQUARE_DOMAIN, function("Square", forward, backward), CPU)


@pytest.mark.parametrize("backward", [
    "return torch.where(x > 0, 2 * x * g, torch.tensor(0.0, dtype=x.dtype) + 2 * x * g)",
    "eps = torch.tensor(1e-30, dtype=x.dtype)\nreturn 2 * x * g + eps.sqrt() * 0",
    "out = 2 * x * g\nout[...] = out * torch.tensor(1.0, dtype=x.dtype)\nreturn out",
])
def test_a_0d_tensor_used_as_a_scalar_passes(backward):
    check_default_device(SQUARE_DOMAIN, function("Square", SAVE + "return x * x",
                                                 READ + backward), CPU)


@torch.library.custom_op("device_test::square_with_buffer", mutates_args=())
def _square_with_buffer(x: torch.Tensor) -> torch.Tensor:
    return x * x + torch.zeros(x.shape, dtype=x.dtype)


@torch.library.custom_op("device_test::square", mutates_args=())
def _square(x: torch.Tensor) -> torch.Tensor:
    return x * x


@_square.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("device_test::square_on_cpu", mutates_args=(), device_types="cpu")
def _square_on_cpu(x: torch.Tensor) -> torch.Tensor:
    return x * x


OPERATORS = "import torch\nops = torch.ops.device_test\n"


@pytest.mark.parametrize("operator, said", [
    ("square_with_buffer", "made a tensor on the default device (torch.zeros without device=)"),
    ("square_on_cpu", "calls device_test::square_on_cpu, registered for cpu only"),
])
def test_a_custom_operators_body_is_checked_too(raises_hint, operator, said):
    """The dispatcher runs an operator's body where no mode sees it: is a buffer made there
    without device= caught, and an operator registered for the CPU alone?"""
    answer = function("Square", SAVE + f"return ops.{operator}(x)", READ + "return 2 * x * g",
                      prelude=OPERATORS)
    with raises_hint(said):
        check_default_device(SQUARE_DOMAIN, answer, CPU)


def test_a_custom_operator_on_its_inputs_device_passes():
    answer = function("Square", SAVE + "return ops.square(x)", READ + "return 2 * x * g",
                      prelude=OPERATORS)
    check_default_device(SQUARE_DOMAIN, answer, CPU)


def test_an_index_made_without_device_is_caught_where_the_cpu_takes_it(raises_hint):
    """A CPU index_select takes a meta index without a word (a GPU refuses a CPU index there):
    is the answer refused all the same?"""
    answer = function("Square", SAVE + "return x * x", READ + "flipped = torch.arange("
                      "x.shape[-1] - 1, -1, -1)\nreturn (2 * x * g).index_select(-1, flipped)"
                      ".index_select(-1, flipped)")
    with raises_hint("made a tensor on the default device (torch.arange without device=)"):
        check_default_device(SQUARE_DOMAIN, answer, CPU)


@torch.library.custom_op("device_test::square_faked_on_cpu", mutates_args=())
def _square_faked_on_cpu(x: torch.Tensor) -> torch.Tensor:
    return x * x


@_square_faked_on_cpu.register_fake
def _(x):
    return torch.empty(x.shape, dtype=x.dtype)  # no device=: the default device


def test_a_fake_that_answers_on_the_default_device_is_caught(raises_hint):
    """A fake built without device= claims a CPU output for a CUDA call under torch.compile:
    is it refused, where the same operator with a fake on its input's device passes?"""
    answer = function("Square", SAVE + "return ops.square_faked_on_cpu(x)",
                      READ + "return 2 * x * g", prelude=OPERATORS)
    with raises_hint("the fake of device_test::square_faked_on_cpu (its register_fake) returned "
                     "its output on cpu"):
        check_default_device(SQUARE_DOMAIN, answer, CPU)
