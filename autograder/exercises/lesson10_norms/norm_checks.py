"""Checks shared by lesson 10's LayerNormFunction and RMSNormFunction: inputs, the exact shapes
backward returns, counted work per needed gradient, and the gradient's terms (which one a wrong
backward left out); norm_saved checks what forward saved."""

import itertools
from typing import NamedTuple

import torch
from torch.utils._pytree import tree_flatten
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference
from ...exercise import sample
from .norm_dead_work import check_dead_work, check_frozen_x_work


def norm_values(leading: tuple, features: int, device, *, weight=True, bias=True, seed=0,
                dtype=torch.float64, eps=1e-5, shift=0.0, centred=True) -> dict:
    """Inputs in ``apply``'s order: x of shape (*leading, features), weight and bias of shape
    (features,) or None (bias only for LayerNorm, ``centred``), eps."""
    values = {"x": shift + sample((*leading, features), device, seed=seed, dtype=dtype)}
    values["weight"] = (1 + 0.5 * sample((features,), device, seed=seed + 1, dtype=dtype)
                        if weight else None)
    if centred:
        values["bias"] = sample((features,), device, seed=seed + 2, dtype=dtype) if bias else None
    values["eps"] = eps
    return values


def describe(values: dict) -> str:
    """``x of shape (2, 3), weight=None, bias a tensor, float32``."""
    parts = [f"x of shape {tuple(values['x'].shape)}"]
    parts += [f"{name}={'None' if values[name] is None else 'a tensor'}"
              for name in ("weight", "bias") if name in values]
    return ", ".join(parts + [str(values["x"].dtype).removeprefix("torch.")])


def row_statistics(x: torch.Tensor, eps: float, centred: bool):
    """(mean or None, rstd, x_hat) of every row, in float64: the truth the checks compare with."""
    wide = x.double()
    mean = wide.mean(-1, keepdim=True) if centred else None
    centred_x = wide - mean if centred else wide
    rstd = torch.rsqrt(centred_x.square().mean(-1, keepdim=True) + eps)
    return mean, rstd, centred_x * rstd


def gradient_terms(x, weight, grad_output, eps: float, centred: bool) -> dict:
    """The input gradient's terms, row by row, in float64 (g = grad_output * weight):
    direct ``rstd * g``, mean ``-rstd * mean(g)`` (LayerNorm only; zeros for RMSNorm) and
    projection ``-rstd * x_hat * mean(g * x_hat)``. Their sum is the gradient."""
    _, rstd, x_hat = row_statistics(x, eps, centred)
    g = grad_output.double() * (weight.double() if weight is not None else 1)
    mean_term = -rstd * g.mean(-1, keepdim=True) if centred else torch.zeros_like(g)
    return {"direct": rstd * g,
            "mean": mean_term.expand_as(g),
            "projection": -rstd * x_hat * (g * x_hat).mean(-1, keepdim=True)}


def eps_outside_root(values: dict, centred: bool, *, floor: bool = False) -> torch.Tensor:
    """The output of a forward that adds eps after the square root, rstd = 1 / (sqrt(var) + eps),
    or (``floor``) one that puts eps under the variance as a floor, rstd = rsqrt(max(var, eps))."""
    x, eps = values["x"], values["eps"]
    centred_x = x - x.mean(-1, keepdim=True) if centred else x
    variance = centred_x.square().mean(-1, keepdim=True)
    y = centred_x * (variance.clamp_min(eps).rsqrt() if floor else 1 / (variance.sqrt() + eps))
    if values["weight"] is not None:
        y = y * values["weight"]
    return y + values["bias"] if values.get("bias") is not None else y


# ------------------------------------------------------------------ what backward returned
def record_backward_returns(function: type) -> tuple[type, list]:
    """A subclass of ``function`` whose backward records the tuple it returns, before the
    engine checks and sums it (the engine quietly reduces a gradient of shape (3, D) for a
    (D,) input, which hides a missing sum from the values)."""
    calls: list[tuple] = []

    def backward(ctx, *grad_outputs):
        returned = function.backward(ctx, *grad_outputs)
        calls.append(returned if isinstance(returned, tuple) else (returned,))
        return returned

    return type(function.__name__, (function,), {"backward": staticmethod(backward)}), calls


def _broadcasts_to(shape, target) -> bool:
    """Does a tensor of ``shape`` broadcast to ``target`` (autograd then sums a gradient of
    ``target``'s shape down to ``shape``)?"""
    try:
        return torch.broadcast_shapes(shape, target) == target
    except RuntimeError:
        return False


def check_returned(spec: Spec, returned: tuple, inputs: dict) -> None:
    """One gradient per input, of its shape or of a shape it broadcasts to (autograd sums that
    one down: Function contract, rule 2), and None for every input that needs none."""
    for (name, value), grad in zip(inputs.items(), returned):
        wanted = isinstance(value, torch.Tensor) and value.requires_grad
        if not wanted and grad is not None:
            raise GradingError(f"{spec.name}.backward returned a gradient for {name}, which "
                               f"needs none: return None when ctx.needs_input_grad for {name} "
                               f"is False (and compute nothing of it) {rule_reference('gradients')}")
        if wanted and isinstance(grad, torch.Tensor) and \
                not _broadcasts_to(value.shape, grad.shape):
            raise GradingError(
                f"{spec.name}.backward returned grad_{name} of shape {tuple(grad.shape)} for "
                f"{name} of shape {tuple(value.shape)}, a shape {name} does not broadcast to: "
                f"over which dims does {name} act alike, and does your sum cover them all? "
                f"{rule_reference('gradients')}")


def scalar_weight_hint(spec: Spec, returned: list, values: dict) -> None:
    """A 1-D x whose weight gradient came back 0-d: ``sum(dim=())`` summed everything."""
    if values["x"].dim() != 1 or not returned:
        return
    for name, grad in zip(values, returned[-1]):
        if name in ("weight", "bias") and isinstance(grad, torch.Tensor) and grad.dim() == 0:
            raise GradingError(f"{spec.name}.backward returned a 0-d grad_{name} for a 1-D x: "
                               "with no leading dims there is nothing to sum (and sum(dim=()) "
                               "sums every dim in PyTorch): which one reduction covers any "
                               "number of leading dims, none included?")


def unbiased_variance_hint(function, spec: Spec, values: dict) -> None:
    """LayerNorm's output computed with the unbiased variance (divided by D - 1)."""
    x, features = values["x"], values["x"].shape[-1]
    if "bias" not in values or features < 2:
        return
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    variance, mean = torch.var_mean(x, -1, keepdim=True, correction=1)
    unbiased = (x - mean) * torch.rsqrt(variance + values["eps"])
    unbiased = unbiased * (values["weight"] if values["weight"] is not None else 1)
    unbiased = unbiased + (values["bias"] if values["bias"] is not None else 0)
    if isinstance(output, torch.Tensor) and output.shape == unbiased.shape and \
            torch.allclose(output, unbiased):
        raise GradingError(f"{spec.name} normalises with the unbiased variance (divided by D - 1, "
                           "correction=1): does LayerNorm divide the squared deviations by D or "
                           "by D - 1?", mistake=f"{spec.name}/unbiased-variance")


# ------------------------------------------------------------------------ counted work
BOOKKEEPING = ("detach", "alias")  # ops autograd adds when it unpacks saved tensors


class Op(NamedTuple):
    """One op backward ran, as ``_FromGradOutput`` logs it."""
    name: str
    derived: int  # numel of its largest input made from grad_output, 0 if none
    new: list  # numels of its new outputs
    written: list  # numels of the outputs it wrote: new ones, in-place and out= ones (no views)
    other: int  # numel of its largest input made from neither grad_output nor constants
    # (x, x_hat, rstd; not the ones of a row sum written as ones @ rows)
    weight: bool  # reads the weight (itself or a view of it)
    reads: frozenset = frozenset()  # storages of its tensor arguments (out= ones included)
    writes: frozenset = frozenset()  # storages of its outputs


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


class _FromGradOutput(TorchDispatchMode):
    """Each op backward runs, as an ``Op``: a tensor is made from grad_output when an op that
    read grad_output, or a tensor made from it, wrote it (in place included). Every such tensor
    is kept alive to the end, so that no other one can take its memory and its mark."""

    def __init__(self, grad_output: torch.Tensor, weight=None):
        super().__init__()
        self.kept = [grad_output]
        self.marked = {grad_output.untyped_storage().data_ptr()}
        self.constants: set = set()  # storages made from no tensor (new_ones, torch.ones)
        self.weight = (weight.untyped_storage().data_ptr()
                       if isinstance(weight, torch.Tensor) and weight.numel() else None)
        self.ops: list[Op] = []

    def _made_from(self, tensor) -> int:
        if not isinstance(tensor, torch.Tensor) or not tensor.numel():
            return 0
        return tensor.numel() if tensor.untyped_storage().data_ptr() in self.marked else 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        # new_ones, zeros_like and their kin read only a tensor's shape and dtype
        factory = name.startswith("new_") or name.endswith("_like")
        tensors = [] if factory else [t for t in tree_flatten((args, kwargs))[0]
                                      if isinstance(t, torch.Tensor) and t.numel()]
        derived = max(map(self._made_from, tensors), default=0)
        other = max((t.numel() for t in tensors if not self._made_from(t)
                     and _storage(t) not in self.constants), default=0)
        weight = any(t.untyped_storage().data_ptr() == self.weight for t in tensors)
        outputs = out if isinstance(out, (tuple, list)) else (out,)
        self.kept += [t for t in outputs if isinstance(t, torch.Tensor)]  # no storage reused
        if not tensors:
            self.constants |= {_storage(t) for t in outputs if isinstance(t, torch.Tensor)}
        new, written = [], []
        for returned, value in zip(func._schema.returns, outputs):
            if not isinstance(value, torch.Tensor):
                continue
            if derived and value.numel():
                self.kept.append(value)
                self.marked.add(value.untyped_storage().data_ptr())
            if returned.alias_info is None:
                new.append(value.numel())
            if returned.alias_info is None or returned.alias_info.is_write:
                written.append(value.numel())
        self.ops.append(Op(name, derived, new, written, other, weight,
                           frozenset(map(_storage, tensors)),
                           frozenset(_storage(t) for t in outputs if isinstance(t, torch.Tensor))))
        return out


def _work(function, spec: Spec, values: dict, wanted: set) -> tuple[int, tuple, list, set]:
    """(ops backward dispatched, what it returned, each op as ``_FromGradOutput`` logs it, the
    storages of the gradients returned, before and after the engine's checks) when only
    ``wanted`` require grad."""
    probe, returned = record_backward_returns(function)
    inputs = make_inputs(values, requires_grad=wanted)
    forward = run_forward(probe, spec, inputs)
    tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    grad_output = torch.ones_like(forward.output)
    with _FromGradOutput(grad_output, inputs.get("weight")) as log:
        backward = run_backward(spec, forward.output, tensors, grad_output)
    check_returned(spec, returned[-1], inputs)
    sinks = {_storage(g) for g in (*returned[-1], *backward.grads) if isinstance(g, torch.Tensor)}
    return sum(op not in BOOKKEEPING for op in backward.ops), returned[-1], log.ops, sinks


def check_needs_input_grad(function, spec: Spec, values: dict, *,
                           rows: int | None = None) -> None:
    """None for an input that needs no gradient, and strictly more work whenever one more
    gradient is needed; then, given ``rows``, read off the ops: with x frozen, no sum of a
    full-size tensor made from grad_output down to one number per row (``rows``: per group for
    GroupNorm), which only grad_x needs, and no full-size tensor from the weight; with only the
    bias wanted, no full-size tensor from x either (x_hat, shared by grad_weight and grad_x);
    whatever is wanted, no full-size tensor that no returned gradient reads (``norm_dead_work``).
    ``values`` must make ``rows`` differ from every other size a weight gradient passes
    through."""
    names = [n for n, v in values.items() if isinstance(v, torch.Tensor)]
    work, logs, sinks = {}, {}, {}
    for count in range(1, len(names) + 1):
        for wanted in itertools.combinations(names, count):
            key = frozenset(wanted)
            work[key], _, logs[key], sinks[key] = _work(function, spec, values, set(wanted))
    for wanted, ops in work.items():
        for extra in set(names) - wanted:
            if work[wanted | {extra}] <= ops:
                needed = " and ".join(sorted(wanted, key=names.index))
                raise GradingError(
                    f"{spec.name}.backward does as much work when only {needed} "
                    f"require{'s' if len(wanted) == 1 else ''} grad as when {extra} does too "
                    f"({ops} ops): does it compute grad_{extra} when ctx.needs_input_grad "
                    f"says {extra} needs none?")
    if rows is None:
        return
    full = values["x"].numel()
    assert rows not in (full, *(v.numel() for n, v in values.items()
                                if isinstance(v, torch.Tensor) and n != "x")), rows
    unit = "group" if "num_groups" in values else "row"
    for wanted, ops in logs.items():
        needed = " and ".join(sorted(wanted, key=names.index))
        requires = f"require{'s' if len(wanted) == 1 else ''}"
        if "x" in wanted:
            continue
        for op in ops:
            if op.derived == full and rows in op.new:
                raise GradingError(
                    f"{spec.name}.backward sums a full-size tensor made from grad_output to one "
                    f"number per {unit} ({op.name}) when only {needed} {requires} grad: those "
                    f"{unit} sums are grad_x's, and x needs no gradient here; where does your "
                    "backward read ctx.needs_input_grad[0], before or after them?",
                    mistake=f"{spec.name}/grad-x-work-for-frozen-x")
        check_frozen_x_work(spec, ops, full, needed, requires, wanted)
    for wanted, ops in logs.items():
        needed = " and ".join(sorted(wanted, key=names.index))
        check_dead_work(spec, ops, sinks[wanted], full, needed, wanted, names)
