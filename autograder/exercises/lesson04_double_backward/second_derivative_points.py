"""Second derivatives through SwishFunction's backward that go wrong only at particular points,
each named from what a probe of backward's ops saw: nan or inf where an op overflows (or divides
0 by 0) though its value is brought back to a finite one, a branch at beta = 0, and an op with a
kink at x = 0. The comparison itself is second_derivatives.check_differentiable_backward."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ...checks import Spec, make_inputs
from ...errors import GradingError
from ...probes import _OpLog
from .second_derivatives import check_differentiable_backward


class _Overflows(TorchDispatchMode):
    """Each op that returns a tensor holding inf or nan from finite tensor arguments, by name, in
    order: where a value first leaves the finite numbers (an exp or cosh that overflows, a 0 / 0)."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        outs = [t for t in (result if isinstance(result, (tuple, list)) else (result,))
                if isinstance(t, torch.Tensor) and t.is_floating_point()]
        if outs and not all(bool(torch.isfinite(t).all()) for t in outs):
            ins = [t for t in tree_flatten((args, kwargs or {}))[0]
                   if isinstance(t, torch.Tensor) and t.is_floating_point()]
            if all(bool(torch.isfinite(t).all()) for t in ins):
                self.ops.append(func.overloadpacket.__name__)
        return result


_OVERFLOW_ADVICE = ("exp and cosh pass float64's largest number once their argument passes "
                    "about 710, float32's past 89")


def name_nan_second_derivative(function, spec: Spec, values: dict, error: GradingError) -> None:
    """A second derivative in x that is nan or inf where the first derivatives are finite (the
    composed reference's are finite at every point ``values`` holds): an op in backward whose
    value is finite there but whose derivative is not. Named with the points where it appears,
    beta x there, and, from backward's ops, whether a torch.where is involved and which op first
    returned inf (an exp, a cosh, a pow): what the probe saw, never a guessed formula. A kink (abs,
    relu) gives a finite wrong number, so it never reaches this message."""
    inputs = make_inputs(values)
    x, beta = inputs["x"], inputs["beta"]
    try:
        output = function.apply(*inputs.values())
        with _OpLog() as log, _Overflows() as overflows:  # backward's ops only
            first, = torch.autograd.grad(output, x, torch.ones_like(output), create_graph=True)
        if not first.requires_grad or not torch.isfinite(first).all():
            return
        second, = torch.autograd.grad(first.sum(), x, allow_unused=True)
    except RuntimeError:
        return
    if second is None or torch.isfinite(second).all():
        return
    bad = ~torch.isfinite(second)
    xs = sorted(set(x.detach()[bad].tolist()))
    points = " and ".join(f"{p:g}" for p in xs)
    at_zero = all(p == 0 for p in xs)
    dtype = str(x.dtype).removeprefix("torch.")
    zs = " and ".join(dict.fromkeys(f"{beta.item() * p:.4g}" for p in xs))
    where = f"at x = {points}" if at_zero else f"at x = {points}, where beta x = {zs} ({dtype})"
    overflowed = list(dict.fromkeys(overflows.ops))
    seen = (f"your backward's {' and '.join(overflowed)} returned inf there from finite "
            "arguments" if overflowed else
            "an op in your backward overflows to inf there (an exp, cosh or pow of a large "
            "argument)")
    if "where" in log.ops:
        cause = ("backward builds s with a torch.where whose dropped branch is inf or nan "
                 "there (" + ("a division by x: 0 / 0" if at_zero else seen)
                 + "): autograd differentiates both branches, sends the dropped one a zero "
                 "gradient, and 0 times inf or nan is nan")
        fix = ("which op gives s with no branch to overflow, and a derivative autograd "
               "computes without one?" if "sigmoid" not in log.ops else "keep every branch "
               "finite everywhere, or use an op without branches")
    elif at_zero:
        cause = ("an op in backward is finite there but its derivative is not (a division by "
                 "x), so the first derivative is right and the second nan")
        fix = "what can backward recompute s from that never divides by x?"
    else:
        cause = (f"{seen}; a later op brought the value back to a finite one (1 / inf is 0), so "
                 "the first derivative is right, but differentiating again meets that inf (0 "
                 "times inf, or inf / inf, is nan)")
        fix = (f"{_OVERFLOW_ADVICE}: which step of your backward can you write so that none of "
               "its values is ever inf?" + (" (which op gives s without one?)"
                                            if "sigmoid" not in log.ops else ""))
    raise GradingError(
        f"the second derivative through {spec.name}'s backward with respect to x is "
        f"{'nan' if torch.isnan(second).any() else 'inf'} {where}, while the first derivatives "
        f"there are finite: {cause}; {fix}", str(error),
        mistake=f"{spec.name}/nan-second-derivative") from error


def check_second_at_beta_zero(function, spec: Spec, values: dict) -> None:
    """Second derivatives at beta = 0, once they are right at beta = 1.3 and -0.7: a wrong one
    here is backward treating 0 apart (a branch on beta's value whose formula has no beta in it,
    or beta.abs() or sign, whose derivative jumps at 0), named from backward's op log."""
    try:
        check_differentiable_backward(function, spec, values, ["x", "beta"])
    except GradingError as error:
        if "largest error in the second derivative" not in str(error.details):
            raise
        inputs = make_inputs(values, requires_grad={"x", "beta"})
        try:
            output = function.apply(*inputs.values())
            with _OpLog() as log:  # backward's ops only
                torch.autograd.grad(output, list(inputs.values()), torch.ones_like(output),
                                    create_graph=True, allow_unused=True)
            ops = log.ops
        except RuntimeError:
            ops = []
        how = ("a branch on beta's value (.item(), float(beta), beta == 0) whose formula has no "
               "beta in it, so autograd sees a constant there" if "_local_scalar_dense" in ops
               else "a torch.where, abs or sign on beta, whose derivative in beta at 0 is not "
               "the composed ops'"
               if {"abs", "sign", "sgn", "where"} & set(ops) else
               "a formula for beta = 0 that differs from the one for other values")
        raise GradingError(
            f"{spec.name}'s second derivatives are right at beta = 1.3 and -0.7 but wrong at "
            f"beta = 0: backward treats beta = 0 apart ({how}); the contract asks for the "
            "derivatives of the composed ops at every beta, 0 included: what does the "
            "formula you use for other betas give at beta = 0?",
            str(error.details), mistake=f"{spec.name}/beta-zero-special-case") from error


_KINKS = ("abs", "relu", "sign", "sgn", "clamp", "clamp_min", "clamp_max", "maximum", "minimum",
          "threshold", "hardtanh")


def zero_cause(function, values: dict) -> str:
    """What backward's op log shows of a second derivative wrong only at x = 0: an op with a
    kink at 0 (abs, relu, ...) where one ran, else a torch.where (a value patched in at 0), else
    no named op."""
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        with _OpLog() as log:  # backward's ops only
            torch.autograd.grad(output, list(inputs.values()), torch.ones_like(output),
                                create_graph=True, allow_unused=True)
    except RuntimeError:
        return "an op in its backward whose derivative at 0 is not the composed ops'"
    if kinks := [op for op in dict.fromkeys(log.ops) if op in _KINKS]:
        return (f"its backward uses {' and '.join(kinks)}, with a kink at 0, whose derivative "
                "autograd takes as 0 there, so double backward misses part of the second "
                "derivative")
    if "where" in log.ops:
        return ("its backward picks a value with torch.where at x = 0 (a patch over a 0 / 0, "
                "say): autograd differentiates only the branch picked there, and a fixed value's "
                "derivative is 0, so double backward misses part of the second derivative")
    return "an op in its backward whose derivative at 0 is not the composed ops'"
