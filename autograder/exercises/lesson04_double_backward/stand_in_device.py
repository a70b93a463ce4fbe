"""CubeOnce's "as a tensor on x's device" without a GPU: x on a stand-in device.

A CPU-only torch has no second device with data (a CUDA tensor cannot even be described there,
and a meta tensor holds no numbers), so the probe makes one: ``Elsewhere`` is a CPU tensor that
says it lives on the meta device, and a dispatch mode keeps the pretence up for every op of one
forward and backward. As on a GPU, ``.cpu()`` brings its numbers to the CPU, ``.to(x.device)``
(or ``device=x.device``, ``.to(grad_output)``, ``.cuda()``) takes a CPU tensor back, an op that
mixes it with a CPU tensor of one dim or more raises, and ``.numpy()`` refuses it. A 0-d x is not
tried: a 0-d CPU tensor mixes with a GPU tensor on a real GPU too.
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from ...checks import Spec
from ...errors import GradingError

STAND_IN = torch.device("meta")
_INHERITED = object()  # a method torch.Tensor does not define itself
_MOVES = {"meta", "cuda"}  # .cuda() on a stand-in x means "to x's device", as on a GPU


class Elsewhere(torch.Tensor):
    """A CPU tensor that says it is on the stand-in device (``is_cuda`` too, as on a GPU)."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor):
        made = torch.Tensor._make_wrapper_subclass(
            cls, inner.shape, strides=inner.stride(), dtype=inner.dtype, device=STAND_IN,
            requires_grad=inner.requires_grad)
        made.inner = inner
        return made

    is_cuda = property(lambda self: True)
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


def _wrap(value):
    return Elsewhere(value) if type(value) is torch.Tensor else value


def _run(func, args, kwargs):
    stand_in, cpu = [], []

    def unwrap(value):
        if isinstance(value, Elsewhere):
            stand_in.append(value)
            return value.inner
        if isinstance(value, torch.Tensor):
            cpu.append(value)
        return value

    args, kwargs = tree_map(unwrap, (args, kwargs))
    target = kwargs.get("device")
    target = None if target is None else torch.device(target).type
    if target in _MOVES:  # onto the stand-in device: made on the CPU, then wrapped
        return tree_map(_wrap, func(*args, **{**kwargs, "device": torch.device("cpu")}))
    if target == "cpu" or not stand_in:
        return func(*args, **kwargs)
    if any(t.dim() > 0 for t in cpu):
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {STAND_IN} and cpu! (in {func})")
    return tree_map(_wrap, func(*args, **kwargs))


class _StandIn(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


def _is_cuda(device) -> bool:
    return isinstance(device, (str, torch.device)) and str(device).split(":")[0] == "cuda"


def _gradient(function, x: Elsewhere, saved: list):
    """x's gradient through ``function``, every op under the stand-in's rules; ``.cuda()`` and
    ``.to("cuda")``, which start CUDA before they dispatch, go to the stand-in device meanwhile
    (an answer that tests ``x.is_cuda`` moves its result as it would on a GPU)."""
    cuda, to, numpy = torch.Tensor.cuda, torch.Tensor.to, torch.Tensor.numpy
    own = {name: vars(torch.Tensor).get(name, _INHERITED) for name in ("cuda", "to", "numpy")}

    def moved(self, *args, **kwargs):
        args = [STAND_IN if _is_cuda(arg) else arg for arg in args]
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = STAND_IN
        return to(self, *args, **kwargs)

    def to_numpy(self, *, force=False):
        # as on a GPU: force=True is detach().cpu().resolve_conj().resolve_neg().numpy()
        if isinstance(self, Elsewhere):
            if not force:
                raise TypeError(f"can't convert {STAND_IN} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return numpy(self.detach().inner.resolve_conj().resolve_neg())
        return numpy(self, force=force)

    torch.Tensor.cuda, torch.Tensor.to = lambda self, *_, **__: to(self, STAND_IN), moved
    torch.Tensor.numpy = to_numpy
    try:
        with _StandIn():
            output = function.apply(x)
            saved.extend(getattr(output.grad_fn, "saved_tensors", ()))
            return torch.autograd.grad(output.sum(), x)[0]
    finally:  # as it was: both are inherited from TensorBase (a sealed kernel checks)
        for name, value in own.items():
            if value is _INHERITED:
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, value)


def check_result_on_x_device(function, spec: Spec) -> None:
    """One forward and backward with x (shape (3, 4)) on the stand-in device: the gradient must
    come back there, and nothing on the way may mix the two devices."""
    inner = torch.linspace(-2, 2, 12, dtype=torch.float64).reshape(3, 4)
    x, saved = Elsewhere(inner).requires_grad_(), []
    try:
        grad = _gradient(function, x, saved)
    except AssertionError as error:  # torch starting CUDA for a device the answer named itself
        if "cuda" not in str(error).lower():
            raise
        raise GradingError(
            f"with x on another device than the CPU (as a GPU's), {spec.name} named a CUDA "
            f"device itself (\"{str(error).splitlines()[0]}\" on this machine) instead of "
            "taking x's: \"cuda\" means the current GPU, which need not be the one x is on "
            "(cuda:1); x.device names x's device wherever it is", str(error),
            mistake=f"{spec.name}/guesses-device") from error
    except (RuntimeError, TypeError) as error:
        _name_cpu_copy(spec, saved, inner)
        said = str(error).splitlines()[0]
        if "same device" in said:
            raise GradingError(
                f"with x on another device than the CPU (as a GPU's), {spec.name} mixed a "
                f"tensor on x's device with one left on the CPU (\"{said}\"): where does your "
                "NumPy result go back to torch, and to which device?", str(error),
                mistake=f"{spec.name}/result-left-on-cpu") from error
        if "numpy" in said.lower() and _numpy_converted(error):
            raise GradingError(
                f"with x on another device than the CPU (as a GPU's), NumPy was handed "
                f"{spec.name}'s tensor on x's device and converted it itself (\"{said}\"; on a "
                "GPU: \"can't convert cuda:0 device type tensor to numpy\"), as it does when a "
                "NumPy array meets a tensor in arithmetic (grad_output * array: convert the "
                "NumPy result back to a tensor on x's device first) or a tensor goes to an np "
                "function (bring it to the CPU first)", str(error),
                mistake=f"{spec.name}/numpy-result-unconverted") from error
        if "numpy" in said.lower():
            raise GradingError(
                f"with x on another device than the CPU (as a GPU's), {spec.name} called "
                f".numpy() on a tensor not in CPU memory (\"{said}\"): NumPy reads CPU memory "
                "only",
                str(error), mistake=f"{spec.name}/numpy-off-cpu") from error
        raise
    if not isinstance(grad, Elsewhere):
        raise GradingError(
            f"with x on another device than the CPU (as a GPU's), {spec.name}'s backward "
            f"returned its gradient on {grad.device}, not on x's device: the contract asks for "
            "it on x's device; where does your NumPy result go back to torch?",
            mistake=f"{spec.name}/result-left-on-cpu")
    _name_cpu_copy(spec, saved, inner)
    if not torch.allclose(grad.inner, 3 * inner ** 2):
        raise GradingError(f"with x on another device than the CPU, {spec.name}'s gradient is "
                           "wrong, though it is right with x on the CPU",
                           mistake=f"{spec.name}/wrong-on-another-device")


def _numpy_converted(error: BaseException) -> bool:
    """Whether the failing .numpy() ran inside Tensor.__array__: NumPy converting a tensor it
    was handed, not a .numpy() the answer wrote."""
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_name == "__array__":
            return True
        frame = frame.tb_next
    return False


def _name_cpu_copy(spec: Spec, saved: list, inner: torch.Tensor) -> None:
    """A CPU tensor among the saved ones holding x's or the output's numbers: a copy made with
    .cpu(), which a GPU run would keep in host memory beside x."""
    for tensor in saved:
        if type(tensor) is not torch.Tensor or tensor.shape != inner.shape:
            continue
        for what, kept in (("x", inner), ("the output", inner ** 3)):
            if torch.equal(tensor.to(inner.dtype), kept):
                raise GradingError(
                    f"with x on another device than the CPU (as a GPU's), {spec.name}'s forward "
                    f"saved a CPU copy of {what} (made with .cpu()): on a GPU that is a second "
                    "tensor of x's size, in host memory, which the contract's \"not a copy (a "
                    "CPU copy of a GPU x is one)\" rules out; what does the caller already hold?",
                    mistake=f"{spec.name}/saves-cpu-copy")
