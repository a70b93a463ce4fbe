"""Rule 1 of the Function contract on devices: every tensor a Function makes is on its inputs'
device. A buffer made without ``device=`` (``torch.zeros(n)``) lands on the default device,
which is the inputs' own on a CPU-only machine, so only a GPU run sees it (CUDA inputs, a CPU
buffer: a device mismatch). This check lets a CPU run see it too.

Forward and backward run on CPU inputs inside ``elsewhere()``, at the typical inputs and at
every shape rule 1 names that the domain has (size 1, empty, 0-d): a factory call without
``device=`` (``torch.zeros``, ``torch.tensor``, ``torch.arange``, ...) makes its tensor on the
``meta`` device, standing for a default device that is not the inputs'. Its values are kept on
the CPU beside it, so that what works on a GPU keeps working: moving it with ``.to(x.device)``
or ``.to(x)``, indexing an input with it, reading it with ``.item()`` or NumPy, computing with it
and other such tensors alone, and a 0-d one meeting an input's in an op (a CPU scalar tensor
meets a CUDA tensor freely). What a GPU refuses raises there, as it does on the GPU: a tensor of
the default device with dimensions meeting an input's in one op, an input's values written into
a 0-d one (``total += x.sum()`` on ``total = torch.zeros(())``), and a 0-d one returned. ``torch.zeros_like(x)``, ``x.new_zeros(n)`` and ``device=x.device`` make
their tensors on the inputs' device and never meet the ``meta`` one.

A custom operator's body runs below the dispatcher, where no mode sees its factory calls: the
mode runs the body of each operator called (the kernel a CUDA call reaches) once more itself,
inside the mode, before the call goes on as usual; and an operator registered for some devices
alone (``device_types="cpu"``) has no kernel a CUDA tensor reaches."""

import torch
from torch._library.custom_ops import _maybe_get_opdef
from torch._ops import OpOverload, OpOverloadPacket
from torch.autograd.graph import _engine_run_backward
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree
from torch.utils._device import _device_constructors

from .comparison import fresh_leaves
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .empty_and_scalar import empty_and_scalar_cases
from .narrowed import differentiable_outputs, floating_outputs, shapes_of
from .size_one import size_one_cases

ELSEWHERE = torch.device("meta")
_MOVES = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.type_as}
_INDEXING = {torch.Tensor.__getitem__, torch.Tensor.__setitem__}


class elsewhere(TorchFunctionMode):
    """Inside the block, the default device is another than the inputs' (see the module's
    docstring); ``made`` lists the factory calls that used it."""

    def __init__(self):
        super().__init__()
        self.made: list[str] = []
        self.operators: dict[str, object] = {}  # each custom operator called: qualname -> opdef
        self.on_meta: dict[str, tuple] = {}  # its first call's arguments, tensors on meta
        self.returned: list[str] = []  # operators whose body returned a default-device output
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
        """Outputs computed from the default device's tensors alone stay there; what is not a
        tensor is returned as it is."""
        return pytree.tree_map(lambda t: self._tag(t) if isinstance(t, torch.Tensor) else t,
                               output)

    def _shadow(self, func, args, kwargs) -> None:
        """Run a custom operator's body inside the mode (its own factory calls seen), once per
        operator; an operator that writes into its arguments is left to its one real call."""
        packet = func if isinstance(func, OpOverloadPacket) else func.overloadpacket
        qualname = packet._qualified_op_name
        opdef = _maybe_get_opdef(qualname)
        if opdef is None or qualname in self.operators:
            return
        self.operators[qualname] = opdef
        self.on_meta[qualname] = pytree.tree_map(
            lambda t: torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=ELSEWHERE)
            if isinstance(t, torch.Tensor) else t, (args, kwargs))
        body = opdef._backend_fns.get("cuda", opdef._backend_fns.get(None))
        if body is None or opdef._opoverload._schema.is_mutable:
            return
        with torch.no_grad(), self:
            output = body(*args, **kwargs)
        if any(isinstance(t, torch.Tensor) and self._is_tag(t)
               for t in pytree.tree_leaves(output)):
            self.returned.append(qualname)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if isinstance(func, (OpOverload, OpOverloadPacket)):
            self._shadow(func, args, kwargs)
        flat, _ = pytree.tree_flatten((args, kwargs))
        if (func in _CONSTRUCTORS and kwargs.get("device") is None  # (data that is a tensor
                and not any(isinstance(value, torch.Tensor) for value in flat)):  # keeps its own)
            made = func(*args, **kwargs)
            if not isinstance(made, torch.Tensor):
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
            value = args[2]
            if self._is_tag(value) and value.dim() == 0:  # a CPU scalar: taken as its value
                value = self._twin(value)
            return func(args[0], index, value)  # one with dimensions: raises
        real = [value for value in flat if isinstance(value, torch.Tensor)
                and not self._is_tag(value)]
        with_dims = any(self._is_tag(value) and value.dim() > 0 for value in flat)
        if with_dims and any(value.dim() > 0 for value in real):
            if func is torch.Tensor.copy_:  # a copy across devices: a GPU makes it too
                func(*twins[0], **twins[1])
                return args[0]
            met = func(*args, **kwargs)  # refused, as on a GPU, in torch's words; where the CPU
            if func in _SHAPES_ONLY or not any(  # lets it pass (a meta index), in these
                    isinstance(t, torch.Tensor) for t in pytree.tree_leaves(met)):
                return met
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but {_name(func)} met a tensor "
                f"of the default device ({ELSEWHERE.type}) with the inputs' "
                f"({real[0].device.type})")
        if real and _writes_into(func, args, kwargs, self._is_tag):
            raise RuntimeError(  # a CPU scalar on meta takes them: a GPU does not
                f"Expected all tensors to be on the same device, but {_name(func)} writes "
                f"the inputs' ({real[0].device.type}) values into a tensor of the default "
                f"device ({ELSEWHERE.type})")
        if real and not with_dims:  # only CPU scalars of the default device meet the inputs'
            return func(*twins[0], **twins[1])
        return self._tagged(func(*twins[0], **twins[1]))


def _name(func) -> str:
    return getattr(func, "__name__", None) or str(func)


def _writes_into(func, args, kwargs, is_tag) -> bool:
    """The op writes into a tensor of the default device (in place, ``out=``, item assignment),
    which a GPU refuses when an input's values are written there."""
    name = getattr(func, "__name__", "")
    in_place = (name.endswith("_") and not name.endswith("__")) or name.startswith("__i") \
        or func is torch.Tensor.__setitem__
    target = kwargs.get("out") if "out" in kwargs else args[0] if in_place and args else None
    return any(is_tag(t) for t in pytree.tree_leaves(target) if isinstance(t, torch.Tensor))


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata


_CONSTRUCTORS = _device_constructors()
# ops that read only another tensor's shape, which a GPU takes across devices
_SHAPES_ONLY = {torch.broadcast_tensors, torch.Tensor.expand_as, torch.Tensor.view_as,
                torch.Tensor.reshape_as}
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


def device_cases(domain: Domain, device: torch.device) -> list[tuple[str, dict]]:
    """(what the case is, its inputs): the typical inputs, then every shape rule 1 names that
    the domain has (dimensions of size 1, an empty batch, 0-d inputs; float64 alone, a device
    being the same in every dtype): a tensor made without ``device=`` in a branch for one of
    them (``torch.zeros(x.shape)`` for an empty x) is seen only there."""
    cases = [("typical inputs", domain.values(device))]
    cases += [("dimensions of size 1", values) for values in size_one_cases(domain, device)]
    cases += [(what, values) for what, values in empty_and_scalar_cases(domain, device)
              if what in ("an empty batch", "0-d inputs")]
    return cases


def check_default_device(domain: Domain, function, device: torch.device) -> None:
    """One call at each of ``device_cases`` on the CPU, forward then backward, inside
    ``elsewhere()``: it must not raise for a tensor of the default device, nor return one. The
    first line names the shapes tried."""
    if device.type != "cpu" or not domain.default_device or _cpu_only(domain):
        return  # on a GPU the default device is the CPU already: every check sees it there
    for what, values in device_cases(domain, device):
        _check_case(domain, function, device, values,
                    f"forward and backward on CPU inputs ({what}: {shapes_of(values)}) with the "
                    "default device another one, as on a GPU, where the inputs are on cuda and "
                    "the default device is the CPU")


def _check_case(domain: Domain, function, device: torch.device, values: dict, tried: str) -> None:
    inputs = fresh_leaves(values)
    name = domain.spec.name
    mode = elsewhere()
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
    _check_operators(name, mode, tried)
    wrong = found + [g for g in grads if isinstance(g, torch.Tensor) and g.device != device]
    if wrong:
        made = f" ({', '.join(dict.fromkeys(mode.made))} without device=)" if mode.made else ""
        raise GradingError(
            f"{name} returned {'a gradient' if not found else 'an output'} on the default "
            f"device{made}, not on its inputs' device (tried {tried}) {rule_reference('values')}",
            mistake=f"{name}/tensor-on-default-device")


def _check_operators(name: str, mode: elsewhere, tried: str) -> None:
    """Every custom operator the call reached has a kernel for every device, its fake answers on
    its inputs' device, and its body returned nothing on the default device."""
    for qualname, opdef in mode.operators.items():
        devices = sorted(str(device) for device in opdef._backend_fns if device is not None)
        if None not in opdef._backend_fns and "cuda" not in devices:
            raise GradingError(
                f"{name} calls {qualname}, registered for {' and '.join(devices)} only "
                f"(custom_op(..., device_types=...) registers its body for those devices "
                "alone): called on a CUDA tensor it finds no kernel and raises; leave "
                f"device_types out, so that one body serves every device "
                f"{rule_reference('values')}", mistake=f"{name}/registered-for-some-devices")
        _check_fake(name, qualname, opdef, *mode.on_meta[qualname])
    if mode.returned:
        made = f" ({', '.join(dict.fromkeys(mode.made))} without device=)" if mode.made else ""
        raise GradingError(
            f"{name}: the body of {', '.join(mode.returned)} returned its output on the default "
            f"device{made}, not on its inputs' device (tried {tried}) "
            f"{rule_reference('values')}", mistake=f"{name}/tensor-on-default-device")


def _check_fake(name: str, qualname: str, opdef, args, kwargs) -> None:
    """The operator's fake (``register_fake``), called on ``meta`` inputs, returns its outputs on
    ``meta``: under ``torch.compile`` it tells the compiler where the output lives."""
    try:
        output = opdef._opoverload(*args, **kwargs)
    except Exception:  # noqa: BLE001 - no fake, or one that refuses: the battery names it
        return
    strays = sorted({str(t.device) for t in pytree.tree_leaves(output)
                     if isinstance(t, torch.Tensor) and t.device != ELSEWHERE})
    if strays:
        raise GradingError(
            f"{name}: the fake of {qualname} (its register_fake) returned its output on "
            f"{', '.join(strays)} for inputs on {ELSEWHERE.type}: under torch.compile on a GPU it "
            "would tell the compiler a CUDA call gives a CPU tensor; a tensor the fake makes "
            "takes its device from an input (x.new_empty, torch.empty_like, device=x.device) "
            f"{rule_reference('values')}", mistake=f"{name}/fake-on-default-device")
