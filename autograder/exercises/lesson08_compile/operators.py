"""Lesson 08: what the two custom-operator exercises (softplus and squared_norm) check alike:
the answer is the current definition of the operator the contract names and calls it, its fake
implementation runs, torch.library.opcheck passes, and the errors a missing registration raises
are named; with the dispatch recorder both use."""

import torch
from torch._library.custom_ops import CustomOpDef, _maybe_get_opdef
from torch._subclasses.fake_tensor import FakeTensorMode

from ...domain import Operator
from ...errors import GradingError
from ..shared.quiet import quiet as _quiet


class _Calls(torch.utils._python_dispatch.TorchDispatchMode):
    """Record which operators a call dispatched."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.__dict__.setdefault("names", []).append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


# (phrases of PyTorch's message, the mistake, the hint): a registration the operator lacks
REGISTRATION_ERRORS = (
    (("no fake impl", "fake kernel"), "no-fake",
     "{name} has no fake implementation: add @{name}.register_fake returning an empty tensor "
     "of the real output's shape, dtype and strides; torch.compile, opcheck and vmap's tracing "
     "need it"),
    (("no autograd formula", "does not require grad"), "no-register-autograd",
     "{name} has no autograd registration: call "
     "{name}.register_autograd(backward, setup_context=setup_context)"),
    (("incorrect number of gradients",), "gradient-count",
     "{name}'s backward returns the wrong number of gradients: return one per input of the "
     "operator, (grad_x, None), with None for {constant}"),
)


def registration_error(name: str, constant: str, error: Exception) -> GradingError | None:
    """The hint for an error that says the operator ``name`` lacks a registration, or None."""
    message = str(error)
    for phrases, mistake, hint in REGISTRATION_ERRORS:
        if any(phrase in message for phrase in phrases):
            return GradingError(hint.format(name=name, constant=constant), message,
                                mistake=f"{name}/{mistake}")
    return None


def raised_error(name: str, phase: str, error: Exception, where: str) -> GradingError:
    """The hint for any other error the operator raised: its type and first line."""
    message = str(error)
    first = message.splitlines()[0] if message else ""
    return GradingError(f"{name}'s {phase} raised {type(error).__name__} with {where}: {first}",
                        message)


def fake_and_real(function, x: torch.Tensor, constant, explain):
    """(the fake implementation's output, the operator's) at (x, constant); ``explain(error)``
    turns an error the fake raised into the operator's hint."""
    real = function(x, constant)
    try:
        with _quiet(), FakeTensorMode() as mode:
            fake = function(mode.from_tensor(x), constant)
    except Exception as error:
        raise explain(error) from error
    return fake, real


def check_custom_operator(function, name: str, probe: tuple) -> None:
    """``function`` (the answer called ``name``) is the current definition of the custom
    operator autograd_course::``name`` and calls it, on the arguments ``probe``."""
    operator = f"autograd_course::{name}"
    if isinstance(function, type):
        raise GradingError(f"{name} is a class: define it as the custom operator {operator} "
                           "with @torch.library.custom_op")
    if isinstance(function, CustomOpDef) and function._qualname != operator:
        raise GradingError(f"{name} is the custom operator {function._qualname}, where the "
                           f"contract names {operator}: which name did you give "
                           "@torch.library.custom_op?")
    if isinstance(function, CustomOpDef) and _maybe_get_opdef(operator) is not function:
        raise GradingError(f"{name} is an older definition: {operator} was defined again after "
                           "it, and an old handle must never be called: re-run the cell "
                           f"defining {name}")
    with _Calls() as calls:
        function(*probe)
    names = vars(calls).get("names", [])
    if f"autograd_course.{name}" not in names:
        raise GradingError(
            f"{name} never calls the custom operator {operator}: define it with "
            f'@torch.library.custom_op("{operator}", mutates_args=())',
            f"operators called: {', '.join(names) or 'none'}",
            mistake=f"{name}/not-a-custom-op")


def run_opcheck(name: str, x: torch.Tensor, constant, explain) -> None:
    """torch.library.opcheck on autograd_course::``name`` at (x, constant): schema, autograd
    registration, fake tensor, AOT dispatch; ``explain(error)`` turns a failure into the
    operator's hint."""
    try:
        with _quiet():
            torch.library.opcheck(getattr(torch.ops.autograd_course, name).default,
                                  (x.detach().clone().requires_grad_(x.is_floating_point()),
                                   constant))
    except Exception as error:
        raise explain(error.__cause__ or error) from error


def operator_of(check_operator):
    """A domain's ``prepare``: the answer, once ``check_operator`` accepts it, as an
    ``Operator``."""
    def prepare(function) -> Operator:
        check_operator(function)
        return Operator(function)
    return prepare
