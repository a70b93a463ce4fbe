"""Lesson 10: the RMSNorm module's half-precision ranges: rows at both ends of float16's range,
a bfloat16 weight float16 cannot hold, and half inputs to a float32 module (autocast's case),
each to one rounding of torch.nn.RMSNorm's output, in x's dtype."""

import torch

from ...errors import GradingError
from ...exercise import sample
from .norm_module_eps import (DEFAULT_EPS, DIM, HALF, HELD, NAME, _ignores_eps, _named,
                              called, exact_output, loaded_pair, rounded_once, rounded_per_step)


# (scale of x, eps, what float16 arithmetic does to the squares there): rows at both ends of
# float16's range, where a module that squares a half x in its own dtype leaves torch's output
RANGE_ENDS = ((300.0, DEFAULT_EPS, "squares overflow in float16 past 256 (65504 is float16's "
                                   "largest number), the mean square is inf and the output 0"),
              (1e-4, 0.0, "squares underflow in float16 below 6.1e-05 (float16's smallest "
                           "normal number) and lose their digits"))


def check_half_range(cls: type, device, dtype) -> None:
    """A ``dtype`` module (float16 or bfloat16) given rows of |x| near 300 (eps=1e-6) and near
    1e-4 (eps=0.0): torch.nn.RMSNorm computes them in float32 and casts back, so its output
    is right to the dtype's precision there; squares computed in float16 overflow past 256 and
    lose their digits near 1e-4 (bfloat16's range is float32's: the same probes, no slip)."""
    if _ignores_eps(cls, device):
        return  # a module that ignores the eps it is given is the domain's to name
    for scale, eps, slip in RANGE_ENDS:
        reference, mine = loaded_pair(cls, DIM, device, dtype, eps=eps, seed=17)
        x = (scale * sample((3, DIM), device, seed=18)).to(dtype)
        described = (f"{NAME}({DIM}, eps={eps!r}) moved to {_named(dtype)}, given a "
                     f"{_named(dtype)} x of |x| near {scale:g}")
        with torch.no_grad():
            expected = reference(x).double()
            output = called(mine, x, described)
        if not isinstance(output, torch.Tensor) or output.shape != expected.shape or \
                output.dtype != dtype:
            return  # check_half names these
        tolerance = HALF[dtype]
        if rounded_once(output.double(), expected, dtype, exact_output(reference, x)):
            continue
        off = (output.double() - expected).abs().max().nan_to_num(float("inf")).item()
        if torch.allclose(output.double(), expected, rtol=tolerance, atol=tolerance):
            rounded_per_step(described, output.double(), expected, dtype)
            continue
        if dtype == torch.float16:
            raise GradingError(f"{described} gives another output than torch.nn.RMSNorm (off "
                               f"by {off:.3g}): {slip}; in which dtype does torch compute a float16 "
                               "x before it casts the output back?",
                               mistake=f"{NAME}/half-computed-in-half")
        raise GradingError(f"{described} gives another output than torch.nn.RMSNorm (off by "
                           f"{off:.3g}, beyond {_named(dtype)}'s precision, {tolerance:g}): "
                           "torch computes a bfloat16 x in float32 and casts the output back")


# a bfloat16 weight float16 cannot hold: above its largest number (65504) and below its smallest
# (6e-08), where bfloat16 keeps float32's range
WIDE_WEIGHT = (1e5, 1e-8, 1.0, -2.0, 3e4, 0.5)


def check_bfloat16_weight_range(cls: type, device) -> None:
    """A bfloat16 module loaded with a weight of entries 1e5 and 1e-8 (``WIDE_WEIGHT``), given
    rows near 1: torch.nn.RMSNorm's output, entry by entry to bfloat16's precision; a weight
    passed through float16 on the way (``.half()`` where ``.float()`` was meant) gives inf and 0
    there."""
    if _ignores_eps(cls, device):
        return  # a module that ignores the eps it is given is the domain's to name
    weight = torch.tensor(WIDE_WEIGHT, dtype=torch.bfloat16, device=device)
    reference, mine = loaded_pair(cls, DIM, device, torch.bfloat16, weight=weight)
    x = sample((3, DIM), device, seed=19).to(torch.bfloat16)
    described = (f"{NAME}({DIM}) moved to bfloat16, its weight holding 1e5 and 1e-8, given a "
                 "bfloat16 x")
    with torch.no_grad():
        expected = reference(x).double()
        output = called(mine, x, described)
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape or \
            output.dtype != torch.bfloat16:
        return  # check_half names these
    tolerance = HALF[torch.bfloat16]
    got = output.double()
    if rounded_once(got, expected, torch.bfloat16, exact_output(reference, x)):
        return
    if ((got - expected).abs() <= tolerance * expected.abs()).all():
        return rounded_per_step(described, got, expected, torch.bfloat16)
    wide = x.double()
    through_half = (wide * torch.rsqrt(wide.square().mean(-1, keepdim=True) + DEFAULT_EPS)
                    * weight.half().double()).to(torch.bfloat16).double()
    if torch.equal(got.isfinite(), through_half.isfinite()) and \
            torch.equal(got == 0, through_half == 0) and not torch.equal(got == 0, expected == 0):
        raise GradingError(f"{described}, gives inf and 0 where torch.nn.RMSNorm gives "
                           "numbers: its weight passes through float16 on the way (a .half() "
                           "where .float() was meant?), whose range ends at 65504 and 6e-08; "
                           "bfloat16 holds float32's range, so compute a bfloat16 module in "
                           "float32", mistake=f"{NAME}/bfloat16-weight-through-float16")
    off = ((got - expected).abs() / expected.abs()).nan_to_num(float("inf")).max().item()
    raise GradingError(f"{described}, gives another output than torch.nn.RMSNorm (off by "
                       f"{off:.3g} of an entry, beyond bfloat16's precision, {tolerance:g})")


def _weight_rounded(described, got, want, reference, x, dtype, module_dtype) -> bool:
    """``got`` is, rounded once, the output of torch.nn.RMSNorm holding its ``module_dtype``
    weight first rounded to x's ``dtype``: named (held to the battery's end, as a rounding
    per step is), and True; False where it is not."""
    wide = x.double()
    exact = wide * torch.rsqrt(wide.square().mean(-1, keepdim=True) + reference.eps) * \
        reference.weight.detach().to(dtype).double()
    if not rounded_once(got, exact.to(dtype).double(), dtype, exact):
        return False
    error = GradingError(f"{described} is off torch.nn.RMSNorm's output on "
                         f"{int((got != want).sum())} of "
                         f"{got.numel()} entries, and is, rounded once, the output of a module "
                         f"whose {_named(module_dtype)} weight was first rounded to "
                         f"{_named(dtype)}: the weight lost its last digits before the product, "
                         f"where torch.nn.RMSNorm multiplies by it as the module holds it",
                         mistake=f"{NAME}/half-weight-rounded-to-x-dtype")
    held = HELD.get()
    if held is None:
        raise error
    held.append(error)
    return True


def _half_output(described, output, expected, reference, x, dtype, module_dtype) -> None:
    """``output`` (the learner's, for a ``dtype`` x given a ``module_dtype`` module) is
    torch.nn.RMSNorm's ``expected``: in x's dtype, rounded once."""
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape:
        return  # the float32 and float64 cases name these
    if output.dtype != dtype:
        raise GradingError(f"{described} returns {_named(output.dtype)}, where torch.nn.RMSNorm "
                           f"returns {_named(dtype)}: the output takes x's dtype, whatever the "
                           f"module's ({_named(module_dtype)} here)",
                           mistake=f"{NAME}/output-not-in-x-dtype")
    got, want = output.double(), expected.double()
    if rounded_once(got, want, dtype, exact_output(reference, x)):
        return
    tolerance = HALF[dtype]
    if torch.allclose(got, want, rtol=tolerance, atol=tolerance):
        if _weight_rounded(described, got, want, reference, x, dtype, module_dtype):
            return
        return rounded_per_step(described, got, want, dtype)
    off = (got - want).abs().max().nan_to_num(float("inf")).item()
    raise GradingError(f"{described} gives another output than torch.nn.RMSNorm (off by "
                       f"{off:.3g}, beyond {_named(dtype)}'s precision, {tolerance:g}): torch "
                       f"computes a {_named(dtype)} x in float32 and rounds the output once")


def check_half_x_in_float32_module(cls: type, device) -> None:
    """A float32 module given a bfloat16 or a float16 x, and under
    ``torch.autocast(dtype=torch.bfloat16)`` a bfloat16 Linear's output: torch.nn.RMSNorm
    computes x in float32 and returns x's dtype, whatever the module's, rounded once."""
    if _ignores_eps(cls, device):
        return  # a module that ignores the eps it is given is the domain's to name
    for dtype in HALF:
        reference, mine = loaded_pair(cls, DIM, device, torch.float32, seed=24)
        x = sample((3, DIM), device, seed=25).to(dtype)
        described = f"{NAME}({DIM}), float32, given a {_named(dtype)} x"
        with torch.no_grad():
            expected = reference(x)
            output = called(mine, x, described)
        _half_output(described, output, expected, reference, x, dtype, torch.float32)
    # under autocast: a float32 Linear's output is bfloat16, the norm after it float32; on the
    # CPU only, whose autocast leaves torch's norms alone (CUDA's list of ops it runs in float32
    # differs by device and version: torch.nn.RMSNorm's output dtype there is autocast's doing)
    if torch.device(device).type != "cpu":
        return
    reference, mine = loaded_pair(cls, DIM, device, torch.float32, seed=26)
    linear = torch.nn.Linear(DIM, DIM).to(device)
    with torch.no_grad():
        linear.weight.copy_(sample((DIM, DIM), device, seed=27, dtype=torch.float32))
        linear.bias.copy_(sample((DIM,), device, seed=28, dtype=torch.float32))
    described = (f"under torch.autocast(dtype=torch.bfloat16), a float32 nn.Linear's output "
                 f"(bfloat16) given to {NAME}({DIM}), float32")
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        h = linear(sample((3, DIM), device, seed=29, dtype=torch.float32))
        expected = reference(h)
        output = called(mine, h, described)
    _half_output(described, output, expected, reference, h, h.dtype, torch.float32)
