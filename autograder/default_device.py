"""Rule 1 of the Function contract on devices: every tensor a Function makes is on its inputs'
device. A buffer made without ``device=`` (``torch.zeros(n)``) lands on the default device,
which is the inputs' own on a CPU-only machine, so only a GPU run sees it (CUDA inputs, a CPU
buffer: a device mismatch). This check lets a CPU run see it too.

Forward and backward run on CPU inputs inside ``elsewhere()``: a factory call without
``device=`` (``torch.zeros``, ``torch.tensor``, ``torch.arange``, ...) makes its tensor on the
``meta`` device, standing for a default device that is not the inputs'. Its values are kept on
the CPU beside it, so that what works on a GPU keeps working: moving it with ``.to(x.device)``
or ``.to(x)``, indexing an input with it, reading it with ``.item()`` or NumPy, computing with it
and other such tensors alone, and 0-d results (a CPU scalar tensor meets a CUDA tensor freely).
What a GPU refuses, a tensor of the default device meeting an input's in one op, raises there,
as it does on the GPU. ``torch.zeros_like(x)``, ``x.new_zeros(n)`` and ``device=x.device`` make
their tensors on the inputs' device and never meet the ``meta`` one."""

import torch
from torch.autograd.graph import _engine_run_backward
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree
from torch.utils._device import _device_constructors

from .comparison import fresh_leaves
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .narrowed import differentiable_outputs, floating_outputs

ELSEWHERE = torch.device("meta")
_MOVES = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.type_as}
_INDEXING = {torch.Tensor.__getitem__, torch.Tensor.__setitem__}


class elsewhere(TorchFunctionMode):
    """Inside the block, the default device is another than the inputs' (see the module's
    docstring); ``made`` lists the factory calls that used it."""

    def __init__(self):
        super().__init__()
        self.made: list[str] = []
        # the storage of a meta tag (shared with an nn.Parameter made of it) -> (tag, the values
        # on the CPU), and id(values) -> tag
        self._twins: dict[int, tuple] = {}
        self._tags: dict[int, torch.Tensor] = {}

    def _tag(self, value: torch.Tensor) -> torch.Tensor:
        if id(value) in self._tags:
            return self._tags[id(value)]
        tag = torch.empty_like(value, device=ELSEWHERE)
        self._twins[_storage(tag)] = (tag, value)
        self._tags[id(value)] = tag
        return tag

    def _entry(self, value):
        if not isinstance(value, torch.Tensor) or value.device != ELSEWHERE:
            return None
        entry = self._twins.get(_storage(value))
        # a tag itself, or a tensor made of it alone (nn.Parameter(tag), as a module's __init__
        # makes its weight): the same shape on the same storage
        return entry if entry is not None and entry[0].shape == value.shape else None

    def _twin(self, value):
        entry = self._entry(value)
        return entry[1] if entry is not None else value

    def _is_tag(self, value) -> bool:
        return self._entry(value) is not None

    def _tagged(self, output):
        """Outputs computed from the default device's tensors stay there (0-d ones become CPU
        scalars, which meet any device); what is not a tensor is returned as it is."""
        return pytree.tree_map(lambda t: self._tag(t) if isinstance(t, torch.Tensor)
                               and t.dim() > 0 else t, output)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat, _ = pytree.tree_flatten((args, kwargs))
        if (func in _CONSTRUCTORS and kwargs.get("device") is None  # (data that is a tensor
                and not any(isinstance(value, torch.Tensor) for value in flat)):  # keeps its own)
            made = func(*args, **kwargs)
            if not isinstance(made, torch.Tensor) or made.dim() == 0:
                return made
            self.made.append(f"torch.{func.__name__}")
            return self._tag(made)
        if not any(self._is_tag(value) for value in flat):
            return func(*args, **kwargs)
        if func is _DEVICE:
            return ELSEWHERE
        twins = pytree.tree_map(self._twin, (args, kwargs))
        if func in _MOVES and self._is_tag(args[0]):
            target = (torch._C._nn._parse_to(*twins[0][1:], **twins[1])[0]
                      if func is torch.Tensor.to else None if func is torch.Tensor.cuda
                      else ELSEWHERE if self._is_tag(args[1]) else args[1].device)
            moved = func(*twins[0], **twins[1])
            stays = target == ELSEWHERE or (target is None and func is torch.Tensor.to)
            return self._tagged(moved) if stays else moved
        if func in _INDEXING and not self._is_tag(args[0]):  # a GPU tensor takes CPU indices
            index = pytree.tree_map(self._twin, args[1])
            if func is torch.Tensor.__getitem__:
                return func(args[0], index)
            return func(args[0], index, args[2])  # a value of the default device: raises
        real = [value for value in flat if isinstance(value, torch.Tensor)
                and not self._is_tag(value) and value.dim() > 0]
        if real:  # a tensor of the default device meets an input's: as a GPU run, refused
            return func(*args, **kwargs)
        return self._tagged(func(*twins[0], **twins[1]))


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata


_CONSTRUCTORS = _device_constructors()
_DEVICE = torch.Tensor.device.__get__


def _cpu_only(domain: Domain) -> bool:
    """The domain's inputs are CPU tensors whatever device they are asked for (NumPy's, by
    contract): the op's tensors are never on another device than the default one."""
    try:
        values = domain.values(ELSEWHERE)
    except Exception:  # noqa: BLE001 - a domain that cannot describe meta inputs honours devices
        return False
    tensors = [v for v in values.values() if isinstance(v, torch.Tensor)]
    return bool(tensors) and all(v.device.type == "cpu" for v in tensors)


def check_default_device(domain: Domain, function, device: torch.device) -> None:
    """One call at the domain's typical inputs on the CPU, forward then backward, inside
    ``elsewhere()``: it must not raise for a tensor of the default device, nor return one."""
    if device.type != "cpu" or not domain.default_device or _cpu_only(domain):
        return  # on a GPU the default device is the CPU already: every check sees it there
    values = domain.values(device)
    inputs = fresh_leaves(values)
    name = domain.spec.name
    mode = elsewhere()
    tried = ("forward and backward on CPU inputs with the default device another one, as on a "
             "GPU, where the inputs are on cuda and the default device is the CPU")
    try:
        with mode:
            output = function.apply(*inputs.values())
        outputs = differentiable_outputs(output)
        found = [o for o in floating_outputs(output) if o.device != device]
        grads = []
        if outputs and not found:
            generator = grad_output_generator(6)
            grad_outputs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o)
                            for o in outputs]
            wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor)
                      and v.requires_grad]
            with mode:  # the engine itself: torch.autograd.grad would run outside the mode
                grads = _engine_run_backward(tuple(outputs), tuple(grad_outputs), False, False,
                                             tuple(wanted), True, accumulate_grad=False)
    except Exception as error:  # noqa: BLE001 - judged only where the default device shows
        said = (str(error).splitlines() or [""])[0]
        if ELSEWHERE.type in said:
            made = f" ({', '.join(dict.fromkeys(mode.made))} without device=)" if mode.made else ""
            raise GradingError(
                f"{name} made a tensor on the default device{made} and used it with its inputs: "
                f"it raised {type(error).__name__}: {said} (tried {tried}) "
                f"{rule_reference('values')}", mistake=f"{name}/tensor-on-default-device"
            ) from error
        return  # another error: the battery names what raises
    wrong = found + [g for g in grads if isinstance(g, torch.Tensor) and g.device != device]
    if wrong:
        made = f" ({', '.join(dict.fromkeys(mode.made))} without device=)" if mode.made else ""
        raise GradingError(
            f"{name} returned {'a gradient' if not found else 'an output'} on the default "
            f"device{made}, not on its inputs' device (tried {tried}) {rule_reference('values')}",
            mistake=f"{name}/tensor-on-default-device")
