"""Lesson 10's RMSNorm module: how it is built (``build``) and which eps it uses, by
default, by position, per instance, and for ``eps=None`` (torch.finfo of each input's dtype,
at call time, as torch.nn.RMSNorm)."""

import linecache
import warnings
from pathlib import Path

import torch
from torch import nn

from ...errors import GradingError
from ...exercise import sample

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


def check_none_eps(cls: type, device) -> None:
    """``RMSNorm(dim, eps=None)`` uses torch.finfo(x.dtype).eps of each input, at call time:
    a float32 module given float64 rows of mean square near 1e-16, and float32 rows near
    1e-8, where float32's eps and float64's each show."""
    if _ignores_eps(cls, device):
        return  # a module that ignores the eps it is given is the domain's to name
    with warnings.catch_warnings():  # a float64 x and a float32 weight: torch says it unfused
        warnings.filterwarnings("ignore", "Mismatch dtype between input and weight")
        for dtype, scale in ((torch.float64, 1e-8), (torch.float32, 1e-4)):
            _check_none_eps(cls, device, dtype, scale)


def _ignores_eps(cls: type, device) -> bool:
    """Whether modules built with eps=1e-4 and eps=0.25 give the same output."""
    x = 1e-2 * sample((3, DIM), device, seed=13)
    outputs = [build(cls, DIM, eps=eps).to(device=device, dtype=torch.float64)(x)
               for eps in (1e-4, 0.25)]
    return all(isinstance(y, torch.Tensor) for y in outputs) and outputs[0].shape == \
        outputs[1].shape and torch.allclose(*outputs)


def _check_none_eps(cls: type, device, dtype, scale: float) -> None:
    x = (scale * sample((3, DIM), device, seed=12)).to(dtype)
    expected = nn.RMSNorm(DIM, eps=None).to(device)(x)
    described = f"{NAME}({DIM}, eps=None), float32, given a {str(dtype)[6:]} x"
    try:
        output = build(cls, DIM, eps=None).to(device)(x)
    except (NotImplementedError, GradingError):
        raise
    except Exception as error:  # the learner's own error, quoted
        raise GradingError(f"{described} raised {type(error).__name__}: {error}: "
                           "torch.nn.RMSNorm takes eps=None too; what eps does it use "
                           "then?", str(error), mistake=f"{NAME}/none-eps-raises") from error
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape or \
            torch.allclose(output, expected, rtol=1e-4):
        return
    raise GradingError(f"{described} gives another output than torch.nn.RMSNorm({DIM}, "
                       f"eps=None) on rows of mean square near {scale ** 2:g}: which "
                       "dtype's torch.finfo(...).eps does torch.nn.RMSNorm use, and when "
                       "does it decide?", mistake=f"{NAME}/none-eps-not-per-call")
