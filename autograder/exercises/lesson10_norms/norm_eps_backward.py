"""Lesson 10's eps, for LayerNormFunction, RMSNormFunction and GroupNormFunction: a forward
that adds eps outside the square root or uses it as a floor under the variance, and a backward
that rebuilds rstd from a saved variance (or mean square) without eps, which gives the gradient
of the norm with eps = 0, and a forward that ignores eps; rows of variance below eps and above
it tell each apart."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError

EPS_OUTSIDE_ROOT = ("adds eps outside the square root (with eps=0.5 its output is the one for "
                    "rstd = 1 / (sqrt({statistic}) + eps)): compare where your eps enters with "
                    "the lesson's formula for r")


def eps_as_floor(statistic: str = "variance", unit: str = "rows") -> str:
    """The hint for eps used as a floor under ``statistic`` (the variance, or RMSNorm's mean
    square), found on rows (``unit``) whose statistic lies below eps and above it."""
    return (f"uses eps as a floor under the {statistic} (with eps=0.5 its output is the one for "
            f"rstd = 1 / sqrt(max({statistic}, eps))), which leaves {unit} of {statistic} above eps "
            "as if eps were 0: compare where your eps enters with the lesson's formula for r")


def check_eps_placement(function, spec: Spec, values: dict, outside_root, floor, *,
                        statistic: str = "variance", unit: str = "rows",
                        described: str = "") -> None:
    """``values`` has eps = 0.5 and rows (``unit``) of ``statistic`` far below it and above it:
    a forward whose output is the one for a fixed small eps, ``outside_root``
    (rstd = 1 / (sqrt(variance) + eps)) or ``floor`` (rstd = rsqrt(max(variance, eps))) is
    named; a right forward has its backward's eps checked next. Anything that raises, or
    another output, is left to the checks that follow."""
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the cases quote it
        return
    if not isinstance(output, torch.Tensor) or output.shape != values["x"].shape:
        return
    if torch.allclose(output, spec.reference(**values)):
        check_eps_in_backward(function, spec, values)  # forward right: backward's eps next
        return
    for fixed in (1e-5, 1e-6, 0.0):
        if torch.allclose(output, spec.reference(**{**values, "eps": fixed})):
            raise GradingError(f"{spec.name} ignores its eps argument (with eps=0.5 its output "
                               f"is the one for eps={fixed:g}): add the eps it is given",
                               case=described)
    for hint, mistake, wrong in (
            (EPS_OUTSIDE_ROOT.format(statistic=statistic), "eps-outside-root", outside_root),
            (eps_as_floor(statistic, unit), "eps-as-floor", floor)):
        if torch.allclose(output, wrong):
            raise GradingError(f"{spec.name} {hint}", case=described,
                               mistake=f"{spec.name}/{mistake}")


def _grad_x(apply, values: dict, grad_output) -> torch.Tensor:
    inputs = make_inputs(values, requires_grad={"x"})
    grad_x, = torch.autograd.grad(apply(inputs), inputs["x"], grad_output)
    return grad_x.double()


def check_eps_in_backward(function, spec: Spec, values: dict) -> None:
    """``values`` has eps = 0.5 and rows (groups) of variance far below it and above it: a
    grad_x that is the reference's for eps = 0, and not for eps = 0.5, is named (a forward that
    misplaces eps is check_eps_placement's to name, before this)."""
    generator = torch.Generator().manual_seed(7)
    x = values["x"]
    grad_output = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    try:
        got = _grad_x(lambda inputs: function.apply(*inputs.values()), values, grad_output)
    except Exception:  # the learner's code may raise anything: the cases quote it
        return
    if not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return

    def reference(eps: float) -> torch.Tensor:
        return _grad_x(lambda inputs: spec.reference(**{**inputs, "eps": eps}), values,
                       grad_output)

    def matches(expected) -> bool:
        return torch.allclose(got, expected, rtol=1e-4, atol=1e-6)

    if not matches(reference(values["eps"])) and matches(reference(0.0)):
        raise GradingError(f"{spec.name}'s backward rebuilds rstd without eps: with eps=0.5 "
                           "its grad_x is the one for eps=0 (rows whose variance lies below "
                           "eps show it); forward's r adds eps under the square root: does "
                           "backward's?", mistake=f"{spec.name}/eps-lost-in-backward")
