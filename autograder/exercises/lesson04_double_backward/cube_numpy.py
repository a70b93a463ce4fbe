"""CubeOnce's NumPy clause: the local derivative 3x^2 is computed in NumPy, and backward's torch
ops only convert, plus at most one product of grad_output and the converted 3x^2. The
torch-arithmetic detector NumpyTanh's grading uses (numpy_tanh.CONVERSIONS), with that one op
more allowed in backward. In forward, a saved tensor (other than x and the output) that torch arithmetic made
is 3x^2 (or x^2) computed with torch and handed to backward."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...exercise import sample
from .numpy_tanh import CONVERSIONS

PRODUCT = "mul"  # grad_output times the local derivative made in NumPy

CONVERT = ("backward's torch ops may only convert, plus one product of grad_output and the "
           "converted 3x^2: how does x get into NumPy, and 3x^2 back onto x's device?")


def _storages(value) -> set:
    return {t.untyped_storage().data_ptr() for t in tree_leaves(value)
            if isinstance(t, torch.Tensor) and t.device.type != "meta"}


class _Computed(TorchDispatchMode):
    """The storages of tensors torch arithmetic made, and of conversions of them."""

    def __init__(self):
        super().__init__()
        self.storages: set = set()
        self.alive: list = []  # held until the check ends: no later tensor reuses their memory

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name not in CONVERSIONS or _storages((args, kwargs)) & self.storages:
            self.storages |= _storages(out)
            self.alive.append(out)
        return out


def check_local_in_numpy(function, spec: Spec, device) -> None:
    """Backward computes with torch no more than the one product with grad_output, and forward
    saves nothing torch arithmetic made but the output."""
    values = {"x": sample((3, 4), device, seed=17)}
    inputs = make_inputs(values)
    with _Computed() as computed:
        forward = run_forward(function, spec, inputs)
    output = forward.output
    saved = getattr(output.grad_fn, "saved_tensors", ())
    kept = _storages(output) | _storages(inputs["x"])
    if any(_storages(t) & computed.storages and not _storages(t) & kept for t in saved):
        raise GradingError(
            f"{spec.name}.forward saves a tensor it computed with torch ops (not x, not the "
            "output), and backward uses it as 3x^2: the contract asks for 3x^2 computed in "
            f"NumPy, as the kernel it stands in for would; {CONVERT}",
            mistake=f"{spec.name}/torch-computes-local")
    grad_output = sample(values["x"].shape, device, seed=31)
    backward = run_backward(spec, output, inputs, grad_output)
    arithmetic = [op for op in backward.ops if op not in CONVERSIONS]
    if arithmetic.count(PRODUCT) > 1 or any(op != PRODUCT for op in arithmetic):
        raise GradingError(
            f"{spec.name}.backward computes with torch ops ({', '.join(arithmetic)}): the "
            "contract asks for 3x^2 computed in NumPy, as the kernel it stands in for would, "
            f"and a backward that works in torch alone never crosses into NumPy; {CONVERT}",
            f"torch arithmetic in backward: {arithmetic}", mistake=f"{spec.name}/torch-in-backward")
