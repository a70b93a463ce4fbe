"""Calling the learner's Function the way autograd expects, and naming its inputs."""

import inspect

import torch


def is_function_class(obj) -> bool:
    """True for a subclass of torch.autograd.Function (the class, not an instance)."""
    return isinstance(obj, type) and issubclass(obj, torch.autograd.Function)


def apply(function, *args):
    """``function.apply(*args)`` for a Function class, ``function(*args)`` for any callable."""
    if is_function_class(function):
        return function.apply(*args)
    if isinstance(function, torch.autograd.Function):
        raise TypeError(f"got an instance of {type(function).__name__}: pass the class itself, "
                        f"which is called as {type(function).__name__}.apply(...)")
    return function(*args)


def display_name(function) -> str:
    """The name a learner wrote: the class name, or the callable's name."""
    return getattr(function, "__name__", type(function).__name__)


def input_names(function, count: int) -> list[str]:
    """Names of the first ``count`` forward inputs, read from ``forward(ctx, ...)``'s signature."""
    target = function.forward if is_function_class(function) else function
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    if is_function_class(function):
        parameters = parameters[1:]  # ctx
    names = []
    for parameter in parameters:
        if parameter.kind == parameter.VAR_POSITIONAL:  # forward(ctx, run_fn, *args)
            names += [f"{parameter.name}[{i}]" for i in range(count - len(names))]
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            break
        names.append(parameter.name)
    names += [f"input{i}" for i in range(len(names), count)]
    return names[:count]


def error_summary(function, error: BaseException) -> str:
    """One line naming what the learner's code raised; for a stub, the method that is one
    (a demo subclass of the learner's ``Normalize`` names ``Normalize.forward``, not itself)."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, NotImplementedError):
        return f"{_raised_in(error) or display_name(function)} is not implemented yet (it " \
               "raised NotImplementedError)"
    return f"{display_name(function)} raised {type(error).__name__}: {first}".rstrip(": ")


def _raised_in(error: BaseException) -> str | None:
    """``Class.method`` whose code raised ``error`` (its innermost frame), where it is a method."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    parts = (traceback.tb_frame.f_code.co_qualname if traceback is not None else "").split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 and not parts[-2].startswith("<") else None
