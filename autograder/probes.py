"""Run a learner's Function once and record what it did: saved tensors, ctx attributes,
the ops and FLOPs of its backward, and any re-entry into autograd."""

import functools
import types
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import torch

from .devices import interpret_triton_without_gpu

interpret_triton_without_gpu()  # before flop_counter imports triton

from torch.autograd.graph import saved_tensors_hooks  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode, flop_registry  # noqa: E402

from .composite_ops import OpLog  # noqa: E402
from .reentry import watch_reentry as _watch_reentry  # noqa: E402

_OpLog = OpLog  # the name lessons 04 and 11 import


@dataclass
class SavedTensor:
    """One tensor that forward passed to ``ctx.save_for_backward``."""

    role: str  # "input <name>", "output" or "intermediate"
    shape: tuple
    dtype: torch.dtype
    nbytes: int
    tensor: torch.Tensor = field(repr=False)


@dataclass
class ForwardTrace:
    output: object
    saved: list[SavedTensor]
    ctx_tensor_attributes: list[str]
    ctx_attributes: dict

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved)


@dataclass
class BackwardTrace:
    grads: tuple
    ops: list[str]
    flops: int | None  # None where not counted (trace_backward's count_flops)
    reentered_autograd: list[str]


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` and ``b`` view the same memory the same way."""
    return (
        a.device == b.device
        and a.dtype == b.dtype
        and a.shape == b.shape
        and a.stride() == b.stride()
        and a.numel() > 0
        and a.data_ptr() == b.data_ptr()
    )


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` is ``b`` or a view of the same memory (e.g. ``x.reshape(-1, n)``)."""
    if same_tensor(a, b):
        return True
    try:
        return (a.device == b.device and a.numel() > 0 and b.numel() > 0
                and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
    except RuntimeError:  # tensors without storage
        return False


def _role(saved: torch.Tensor, inputs: dict, outputs: list) -> str:
    """A view of an input or output costs no memory of its own, so it counts as that tensor.
    An empty tensor has no memory to compare: it counts as the output, or the input, whose
    shape and dtype it has (it costs nothing whichever it is)."""
    if saved.numel() == 0:
        alike = lambda t: (isinstance(t, torch.Tensor) and t.shape == saved.shape  # noqa: E731
                           and t.dtype == saved.dtype)
        if any(alike(out) for out in outputs):
            return "output"
        return next((f"input {name}" for name, value in inputs.items() if alike(value)),
                    "intermediate")
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and _shares_memory(saved, value):
            return f"input {name}"
    if any(_shares_memory(saved, out) for out in outputs):
        return "output"
    return "intermediate"


def reachable(value, path: str, kind: type = torch.Tensor, *, inputs=None, _depth: int = 0,
              _seen=None):
    """(path, item) for every ``kind`` held in ``value`` or in its lists, tuples and dicts:
    what a ctx attribute keeps, however it is wrapped. Given ``inputs`` (the Function's
    arguments), also inside partials, closures, defaults, bound methods and plain objects
    (_held_by_call), a few levels deep, but never inside one of ``inputs``: a run_fn the caller
    passed may close over its own weights, and keeping it is no fault."""
    if isinstance(value, kind):
        yield path, value
        return
    _seen = {} if _seen is None else _seen  # id -> object, kept alive so no id is reused
    if _depth > 6 or id(value) in _seen:
        return
    _seen[id(value)] = value
    if isinstance(value, (list, tuple)):
        held = [(f"[{i}]", item) for i, item in enumerate(value)]
    elif isinstance(value, dict):
        held = [(f"[{key!r}]", item) for key, item in value.items()]
    else:
        try:
            held = (_held_by_call(value) if inputs is not None
                    and not any(value is given for given in inputs) else [])
        except ValueError:  # a closure cell not filled yet
            held = []
    for suffix, item in held:
        yield from reachable(item, path + suffix, kind, inputs=inputs, _depth=_depth + 1,
                             _seen=_seen)


def _held_by_call(value) -> list:
    """(path suffix, item) for what a functools.partial, a function (closure cells, defaults),
    a bound method or a plain object holds; not a class, a Python module, an nn.Module, nor an
    object of torch, NumPy or Triton."""
    if isinstance(value, functools.partial):
        return [(".func", value.func), (".args", value.args), (".keywords", value.keywords)]
    if isinstance(value, types.FunctionType):
        cells = zip(value.__code__.co_freevars, value.__closure__ or ())
        return [*((f"'s closure variable {name}", cell.cell_contents) for name, cell in cells),
                (".__defaults__", value.__defaults__), (".__kwdefaults__", value.__kwdefaults__)]
    if isinstance(value, types.MethodType):
        return [(".__self__", value.__self__)]
    plain = (hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType,
                                                                    torch.nn.Module))
             and type(value).__module__.split(".")[0] not in ("torch", "numpy", "triton"))
    return [(f".{key}", item) for key, item in vars(value).items()] if plain else []


def trace_forward(function: type, named_inputs: dict) -> ForwardTrace:
    """Call ``function.apply`` on the inputs, recording what forward saved."""
    packed = []

    def pack(tensor):
        packed.append(tensor)
        return tensor.detach()  # the tensor itself would make a saved output's graph a cycle

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        output = function.apply(*named_inputs.values())
    outputs = [o for o in (output if isinstance(output, tuple) else (output,))
               if isinstance(o, torch.Tensor)]
    saved = [
        SavedTensor(_role(t, named_inputs, outputs), tuple(t.shape), t.dtype,
                    t.numel() * t.element_size(), t)
        for t in packed
    ]
    ctx = next((o.grad_fn for o in outputs if o.grad_fn is not None), None)
    attributes = dict(vars(ctx)) if ctx is not None and hasattr(ctx, "__dict__") else {}
    tensor_attributes = [p for name, value in attributes.items()
                         for p, _ in reachable(value, f"ctx.{name}",
                                               inputs=list(named_inputs.values()))]
    return ForwardTrace(output, saved, tensor_attributes, attributes)


def trace_backward(output: torch.Tensor, inputs: list, grad_output: torch.Tensor, *,
                   count_flops: bool = False) -> BackwardTrace:
    """Backpropagate ``grad_output`` from ``output`` to the inputs that require grad, logging
    every op the backward dispatched (and the composite ``*_backward`` ops it called, which
    dispatch only what they decompose to); with ``count_flops``, counting its FLOPs too
    (FlopCounterMode costs more than the backward of a small test case: only asked for where a
    check reads them)."""
    wanted = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    calls: list[str] = []
    autograd_grad = torch.autograd.grad  # bound before the watch, so this call is not counted
    flops = FlopCounterMode(display=False) if count_flops else nullcontext()
    with flops, _OpLog() as log, _watch_reentry(calls):
        grads = autograd_grad(output, wanted, grad_output, allow_unused=True)
    by_input = iter(grads)
    aligned = tuple(next(by_input) if isinstance(t, torch.Tensor) and t.requires_grad else None
                    for t in inputs)
    return BackwardTrace(aligned, log.ops, flops.get_total_flops() if count_flops else None,
                         calls)


def record_grad_outputs(function: type) -> tuple[type, list]:
    """A subclass of ``function`` whose backward first records what the engine passed it (one
    gradient per output: a tensor, or None), then runs the original backward.

    Returns (subclass, calls): each call appends the tuple of gradients it received."""
    calls: list[tuple] = []

    def backward(ctx, *grad_outputs):
        calls.append(grad_outputs)
        return function.backward(ctx, *grad_outputs)

    return type(function.__name__, (function,), {"backward": staticmethod(backward)}), calls


def record_returned_gradients(function: type) -> tuple[type, list]:
    """A subclass of ``function`` whose backward records what the original backward returned,
    before the engine checks each gradient against its input (and sums one it can expand to
    the input's shape, hiding a forgotten broadcast sum).

    Returns (subclass, calls): each call appends the tuple of gradients backward returned."""
    calls: list[tuple] = []

    def backward(ctx, *grad_outputs):
        grads = function.backward(ctx, *grad_outputs)
        calls.append(grads if isinstance(grads, tuple) else (grads,))
        return grads

    return type(function.__name__, (function,), {"backward": staticmethod(backward)}), calls


class AllocationLog(TorchDispatchMode):
    """Bytes of new memory returned by the ops run inside the block (views and in-place
    results alias memory that already exists, so they do not count)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        for returned, value in zip(func._schema.returns, results):
            if isinstance(value, torch.Tensor) and returned.alias_info is None:
                self.bytes += value.numel() * value.element_size()
                self.ops.append(func.overloadpacket.__name__)
        return out


CTX_METHODS = ("mark_non_differentiable", "mark_dirty", "set_materialize_grads")


@contextmanager
def record_ctx_calls():
    """Inside the block, record each call to ``ctx.mark_non_differentiable``,
    ``ctx.mark_dirty`` and ``ctx.set_materialize_grads``: yields a list of (method, args)."""
    from torch.autograd.function import FunctionCtx

    calls: list[tuple[str, tuple]] = []
    originals = {name: getattr(FunctionCtx, name) for name in CTX_METHODS}

    def recording(name, original):
        def method(ctx, *args, **kwargs):
            calls.append((name, args))
            return original(ctx, *args, **kwargs)
        return method

    for name, original in originals.items():
        setattr(FunctionCtx, name, recording(name, original))
    try:
        yield calls
    finally:
        for name, original in originals.items():
            setattr(FunctionCtx, name, original)


class NoGradient(torch.autograd.Function):
    """Passes its input on and sends no gradient back, so the Function before it receives
    None for that output (after set_materialize_grads(False)) even though it was used."""

    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return None


def _vector_product_flops(name: str, args: tuple, output) -> int:
    """2 FLOPs per multiply-add of the products flop_counter has no formula for: ``mv``,
    ``addmv``, ``addr``, ``dot``, ``vdot``, ``addbmm``, and a broadcasting ``mul`` of two
    tensors (``torch.outer``, ``a[:, None] * b`` and einsum's outer products dispatch to it;
    a product by a number or by a tensor of one element is a scaling, not counted)."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if name in ("mv", "dot", "vdot"):
        return 2 * tensors[0].numel()
    if name == "addmv":  # self, matrix, vector
        return 2 * tensors[1].numel()
    if name == "addr":  # self, vec1, vec2
        return 2 * tensors[1].numel() * tensors[2].numel()
    if name == "addbmm":  # self, (b, n, m), (b, m, p)
        return 2 * tensors[1].numel() * tensors[2].shape[-1]
    if name == "mul" and isinstance(output, torch.Tensor) and len(tensors) == 2 and \
            min(t.numel() for t in tensors) > 1 and \
            any(t.numel() < output.numel() for t in tensors):
        return 2 * output.numel()
    return 0


class CountFlops(TorchDispatchMode):
    """FLOPs of the ops torch.utils.flop_counter has formulas for, in-place ones included
    (FlopCounterMode counts ``addmm`` but not ``grad_weight.addmm_(...)``, the natural way to
    add up a gradient chunk by chunk), and of the vector products it leaves out
    (``_vector_product_flops``: a gradient built row by row with ``mv`` and ``addr_`` costs
    what the matrix products cost)."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        output = func(*args, **kwargs)
        packet = func.overloadpacket
        if packet.__name__.endswith("_"):  # addmm_ -> addmm
            packet = getattr(torch.ops.aten, packet.__name__[:-1], packet)
        formula = flop_registry.get(packet)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=output)
        else:
            self.total += _vector_product_flops(packet.__name__, args, output)
        return output


def warm_up() -> None:
    """Import ``torch._dynamo`` now. Every dispatch mode (the probes above, FlopCounterMode)
    imports it on first use, a few seconds that the setup cell pays instead of a learner's first
    self-check. In the foreground: importing torch's packages from two threads at once can
    fail with a partially initialised module."""
    import torch._dynamo  # noqa: F401
