"""Lesson 10's RMSNorm module: how it is built (``build``) and which eps it uses, by
default, by position, per instance, and its output for float16 and bfloat16 inputs."""

import linecache
from contextvars import ContextVar
import warnings
from pathlib import Path

import torch
from torch import nn

from ...errors import GradingError
from ...exercise import sample
from .norm_graph import check_through_function

NAME = "RMSNorm"
DIM = 6
DEFAULT_EPS = 1e-6


def build(cls: type, dim: int, *args, **kwargs) -> nn.Module:
    """``cls(dim, ...)``, turning construction errors into hints."""
    try:
        return cls(dim, *args, **kwargs)
    except (NotImplementedError, GradingError):
        raise
    except AttributeError as error:
        if "Module.__init__() call" in str(error):
            raise GradingError(f"{NAME}.__init__ assigns a parameter before calling "
                               "super().__init__(): call it first", str(error)) from error
        raise GradingError(f"{NAME}({dim}) raised AttributeError: {error}") from error
    except TypeError as error:  # the learner's own error and line, quoted: no cause guessed
        called = ", ".join([repr(dim), *map(repr, args),
                            *(f"{key}={value!r}" for key, value in kwargs.items())])
        line = _raising_line(error)
        where = f" at `{line}`" if line else ""
        said = str(error).splitlines()[0] if str(error) else "no message"
        raise GradingError(f"{NAME}({called}) raised TypeError{where}: {said}",
                           str(error)) from error


_LIBRARIES = tuple(str(Path(module.__file__).resolve().parents[depth])
                   for module, depth in ((torch, 0), (warnings, 0)))
_GRADING = str(Path(__file__).resolve().parents[2])


def _raising_line(error: BaseException) -> str:
    """The innermost line of ``error``'s traceback outside torch, the standard library and
    the grading library: the line of the learner's code that raised it ('' when none)."""
    line, traceback = "", error.__traceback__
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        if not filename.startswith(_LIBRARIES + (_GRADING,)):
            line = linecache.getline(filename, traceback.tb_lineno).strip() or line
        traceback = traceback.tb_next
    return line


def called(module, x, described: str):
    """``module(x)``, the learner's own error quoted under ``described``; with grad on and x
    requiring it, so that an output made without RMSNormFunction.apply is named (returned
    detached)."""
    try:
        with torch.enable_grad():
            output = module(x.detach().requires_grad_())
    except (NotImplementedError, GradingError):
        raise
    except Exception as error:  # the learner's own error, quoted
        raise GradingError(f"{described} raised {type(error).__name__}: {error}",
                           str(error)) from error
    check_through_function(output, described)
    return output.detach() if isinstance(output, torch.Tensor) else output


def loaded_pair(cls: type, dim: int, device, dtype, *, eps=DEFAULT_EPS, seed=0, weight=None):
    """(torch.nn.RMSNorm with ``weight``, by default a random one, the learner's module loaded
    from its state_dict), both on ``device`` in ``dtype``."""
    reference = nn.RMSNorm(dim, eps=eps).to(device=device, dtype=dtype)
    if weight is None:
        weight = 1 + 0.5 * sample((dim,), device, seed=seed + 50, dtype=dtype)
    with torch.no_grad():
        reference.weight.copy_(weight)
    mine = build(cls, dim, eps=eps).to(device=device, dtype=dtype)
    try:
        mine.load_state_dict(reference.state_dict())
    except RuntimeError as error:
        raise GradingError(f"{NAME} cannot load torch.nn.RMSNorm's state_dict ("
                           f"{str(error).splitlines()[-1].strip()}): keep exactly one entry, "
                           "the parameter weight; store eps as a plain attribute",
                           str(error)) from error
    return reference, mine


def check_own_eps(cls: type, device, eps: float = 1e-4, other: float = 0.25) -> None:
    """A module that gives torch.nn.RMSNorm's output for its eps still does once a second
    module of another eps is built (a module that ignores eps is the domain's to name)."""
    x = 1e-2 * sample((3, DIM), device, seed=11)
    expected = nn.RMSNorm(DIM, eps=eps).to(device=device, dtype=torch.float64)(x)

    def matches(module) -> bool:
        output = module(x)
        return (isinstance(output, torch.Tensor) and output.shape == expected.shape
                and torch.allclose(output, expected, rtol=1e-5))

    first = build(cls, DIM, eps=eps).to(device=device, dtype=torch.float64)
    if matches(first):
        build(cls, DIM, eps=other)
        if not matches(first):
            raise GradingError(f"{NAME}({DIM}, eps={eps:g}) gives torch.nn.RMSNorm's output "
                               f"until another {NAME} is built with eps={other:g}, and then "
                               "another one: where does each module keep its eps, so that "
                               "building a second one leaves the first's alone?",
                               mistake=f"{NAME}/eps-not-per-instance")


def check_default_eps(cls: type, device) -> None:
    """``RMSNorm(dim)`` uses eps = 1e-6: on rows with a mean square near 1e-6 it shows."""
    mine = build(cls, DIM).to(device=device, dtype=torch.float64)
    x = 1e-3 * sample((3, DIM), device, seed=9)
    expected = nn.RMSNorm(DIM, eps=DEFAULT_EPS).to(device=device, dtype=torch.float64)(x)
    output = mine(x)
    if isinstance(output, torch.Tensor) and output.shape == expected.shape and \
            not torch.allclose(output, expected, rtol=1e-5):
        raise GradingError(f"{NAME}({DIM}) does not use eps=1e-6 by default (its output differs "
                           "from torch.nn.RMSNorm(dim, eps=1e-6)'s on rows whose mean square is "
                           "about 1e-6): take eps=1e-6 as the default and pass self.eps on")


def check_positional_eps(cls: type, device, eps: float = 1e-4) -> None:
    """``RMSNorm(dim, eps)``, eps passed by position as torch.nn.RMSNorm takes it: the output
    ``RMSNorm(dim, eps=eps)`` gives, torch.nn.RMSNorm(dim, eps)'s on rows whose mean square is
    near eps."""
    x = 1e-2 * sample((3, DIM), device, seed=10)
    expected = nn.RMSNorm(DIM, eps).to(device=device, dtype=torch.float64)(x)

    def matches(module) -> bool:
        output = module.to(device=device, dtype=torch.float64)(x)
        return (isinstance(output, torch.Tensor) and output.shape == expected.shape
                and torch.allclose(output, expected, rtol=1e-5))

    # a module that ignores eps however it is passed is the domain's to name
    if matches(build(cls, DIM, eps=eps)) and not matches(build(cls, DIM, eps)):
        raise GradingError(f"{NAME}({DIM}, {eps:g}) gives another output than "
                           f"torch.nn.RMSNorm({DIM}, {eps:g}): the second positional argument "
                           "of __init__ must be eps, as in torch.nn.RMSNorm(dim, eps)",
                           mistake=f"{NAME}/eps-not-second-argument")


def check_zero_eps(cls: type, device) -> None:
    """``RMSNorm(dim, eps=0.0)`` uses eps = 0, as torch.nn.RMSNorm(dim, eps=0.0) does: float32
    rows of mean square near float32's eps (none all zero), where treating 0.0 as None (``self.eps
    or torch.finfo(x.dtype).eps``) shows."""
    x = (3e-4 * sample((3, DIM), device, seed=14)).float()
    if _ignores_eps(cls, device):
        return  # the domain's to name
    expected = nn.RMSNorm(DIM, eps=0.0).to(device)(x)
    output = build(cls, DIM, eps=0.0).to(device)(x)
    if isinstance(output, torch.Tensor) and output.shape == expected.shape and \
            not torch.allclose(output, expected, rtol=1e-4):
        raise GradingError(f"{NAME}({DIM}, eps=0.0) gives another output than "
                           f"torch.nn.RMSNorm({DIM}, eps=0.0) on float32 rows of mean square "
                           "near float32's eps (1.2e-07): is eps=0.0 kept as given all the way "
                           "from __init__ to RMSNormFunction.apply, or taken for None on the "
                           "way (0.0 is falsy)?", mistake=f"{NAME}/zero-eps-taken-for-none")


def _ignores_eps(cls: type, device) -> bool:
    """Whether modules built with eps=1e-4 and eps=0.25 give the same output."""
    x = 1e-2 * sample((3, DIM), device, seed=13)
    outputs = [build(cls, DIM, eps=eps).to(device=device, dtype=torch.float64)(x)
               for eps in (1e-4, 0.25)]
    return all(isinstance(y, torch.Tensor) for y in outputs) and outputs[0].shape == \
        outputs[1].shape and torch.allclose(*outputs)


# a tolerance each, a few roundings: within it, but not within one, a step ran in the half dtype
HALF = {torch.bfloat16: 2e-2, torch.float16: 5e-3}


def _ulps(got: torch.Tensor, expected: torch.Tensor, dtype) -> int:
    """How many values of ``dtype`` apart ``got`` and ``expected`` are at most (both float64,
    finite, values of ``dtype``)."""
    def ordered(values):  # the 16 bits as an integer that counts the dtype's values in order
        bits = values.to(dtype).view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)
    return int((ordered(got) - ordered(expected)).abs().max().item()) if got.numel() else 0


def exact_output(reference: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """torch.nn.RMSNorm's output for ``x`` computed in float64, before any rounding: the value
    a half output rounded once is nearest to."""
    wide = x.double()
    return wide * torch.rsqrt(wide.square().mean(-1, keepdim=True) + reference.eps) * \
        reference.weight.detach().double()


# how near a tie (in units of the gap between two neighbours) a one-unit difference is excused:
# float32 arithmetic moves a value by far less, one more rounding in the half dtype by far more
NEAR_TIE = 2.0 ** -6


def rounded_once(got: torch.Tensor, expected: torch.Tensor, dtype, exact: torch.Tensor) -> bool:
    """``got`` is ``expected`` (both float64, values of ``dtype``) entry by entry, except where
    the two are neighbours in ``dtype`` and ``exact`` (the unrounded value) lies within
    ``NEAR_TIE`` of their midpoint: torch computes a half row in float32 and rounds once, at the
    end, so an answer that does the same lands on its value, or next to it only at a near-tie
    where float32's last bits decide; one more rounding in the half dtype is off by a unit on
    about a quarter of the entries, far from any tie."""
    if not (got.isfinite().all() and expected.isfinite().all()):
        return torch.equal(got, expected)
    differ = got != expected
    if not differ.any():
        return True
    got, expected, exact = got[differ], expected[differ], exact.to(got)[differ]
    gap = (got - expected).abs()
    near_tie = (exact - (got + expected) / 2).abs() <= NEAR_TIE * gap
    return _ulps(got, expected, dtype) <= 1 and bool(near_tie.all())


def rounded_per_step(described: str, got: torch.Tensor, expected: torch.Tensor, dtype) -> None:
    """An output within a few roundings of torch's, not within one: held (``HELD``) to the end
    of the battery, where a float16 overflow, a wrong eps, are named first."""
    off, ulps = int((got != expected).sum()), _ulps(got, expected, dtype)
    error = GradingError(f"{described} is off torch.nn.RMSNorm's output on {off} of "
                         f"{got.numel()} entries (by up to {ulps} unit{'s' * (ulps > 1)} "
                         f"in {_named(dtype)}'s last place), where torch's output is rounded "
                         "once and lands off it only at a near-tie: some step of yours "
                         f"ran in {_named(dtype)} and rounded there; in which dtype does torch "
                         f"compute a {_named(dtype)} row?", mistake=f"{NAME}/half-rounded-per-step")
    held = HELD.get()
    if held is None:
        raise error
    held.append(error)


# the half outputs rounded per step that the battery has seen, raised at its end (None: at once)
HELD: ContextVar[list | None] = ContextVar("half_rounded_per_step", default=None)


def _named(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def check_half(cls: type, device, dtype) -> None:
    """A module moved to ``dtype`` (bfloat16 or float16), loaded from torch.nn.RMSNorm's state,
    given an x in that dtype: torch.nn.RMSNorm's output, in that dtype, to its precision."""
    if _ignores_eps(cls, device):
        return  # a module that ignores the eps it is given is the domain's to name
    reference, mine = loaded_pair(cls, DIM, device, dtype, eps=DEFAULT_EPS, seed=16)
    x = sample((3, DIM), device, seed=16).to(dtype)
    described = f"{NAME}({DIM}) moved to {_named(dtype)}, given a {_named(dtype)} x"
    with torch.no_grad():
        expected = reference(x)
        output = called(mine, x, described)
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape:
        return  # the float32 and float64 cases name these
    if output.dtype != dtype:
        raise GradingError(f"{described} returns {_named(output.dtype)}, where "
                           f"torch.nn.RMSNorm returns {_named(dtype)}: keep the input's dtype",
                           mistake=f"{NAME}/half-output-dtype")
    tolerance = HALF[dtype]
    if rounded_once(output.double(), expected.double(), dtype, exact_output(reference, x)):
        return
    off = (output.double() - expected.double()).abs().max().item()
    if torch.allclose(output.double(), expected.double(), rtol=tolerance, atol=tolerance):
        return rounded_per_step(described, output.double(), expected.double(), dtype)
    raise GradingError(f"{described} gives another output than torch.nn.RMSNorm({DIM}) (off by "
                       f"{off:.3g}, beyond {_named(dtype)}'s precision, {tolerance:g})")
