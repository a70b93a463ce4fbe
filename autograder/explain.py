"""What an exception raised in the learner's forward or backward means: the engine's own
messages (gradient count, shape, device, a gradient for a non-tensor, a saved tensor changed, a
gradient asked of a tensor autograd never recorded) turned into hints; anything else quoted."""

import linecache
import re

import torch

from .diagnose import shape_hint
from .errors import GradingError
from .function_contract import rule_reference
from .mistakes import CALLED_WITH
from .spec import Spec

_COUNT = re.compile(r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)")
_NOT_NONE = re.compile(r"gradient different than None at position (\d+)")
_BAD_SHAPE = re.compile(r"invalid gradient at index (\d+) - got \[([\d, ]*)\] "
                        r"but expected shape compatible with \[([\d, ]*)\]")
_BAD_DEVICE = re.compile(r"invalid gradient at index (\d+) - expected device (\S+) but got (\S+)")


def _describe(inputs: dict) -> str:
    """``x of shape (5, 3), scale=2.5, f=Sequential(Linear, Tanh)``: what a failing call was
    given, in one line (it goes into a hint's first line)."""
    return ", ".join(f"{name} of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
                     else f"{name}={_one_line(value)}" for name, value in inputs.items())


def called_with(error: BaseException, phase: str, inputs: dict) -> BaseException:
    """``error``, a learner's own (no GradingError), marked with the call that raised it:
    ``phase`` and its inputs, which a verdict's and a self-check's first line say
    (``mistakes.raised_words``). The first mark stays: the watched call itself
    (``untouched``), else the check that made it."""
    if not isinstance(error, GradingError) and not hasattr(error, CALLED_WITH):
        try:
            setattr(error, CALLED_WITH, (phase, _describe(inputs)))
        except Exception:  # noqa: BLE001 (no attributes taken, a repr that raises: unsaid)
            pass
    return error


def _one_line(value) -> str:
    """A non-tensor argument in one line: an nn.Module by its children's kinds (its repr spans
    a line per layer), any other repr of several lines by its type."""
    if isinstance(value, torch.nn.Module):
        parts = [type(child).__name__ for child in value.children()]
        return f"{type(value).__name__}({', '.join(parts)})" if parts else type(value).__name__
    text = repr(value)
    return text if "\n" not in text else type(value).__name__


def _explain_runtime_error(spec: Spec, phase: str, error: RuntimeError | ValueError,
                           inputs: dict | None = None, returned: tuple | None = None
                           ) -> GradingError:
    """``returned``: what backward returned, where known (its gradients, in forward's order)."""
    message = str(error)
    # the engine numbers the gradients of tensor inputs only
    tensor_names = ([n for n, v in inputs.items() if isinstance(v, torch.Tensor)]
                    if inputs is not None else list(spec.input_names))
    if match := _BAD_SHAPE.search(message):
        name = tensor_names[int(match[1])]
        got, expected = (tuple(int(d) for d in dims.split(",") if d.strip())
                         for dims in match.groups()[1:])
        return GradingError(shape_hint(name, got, expected), message,
                            mistake=f"{spec.name}/wrong-gradient-shape")
    if match := _BAD_DEVICE.search(message):
        name = tensor_names[int(match[1])]
        return GradingError(f"grad_{name} is on {match[3]} but {name} is on {match[2]}: "
                            "create new tensors on the input's device", message,
                            mistake=f"{spec.name}/gradient-on-wrong-device")
    if match := _COUNT.search(message):
        expected, got = int(match[1]), int(match[2])
        returned = (f"backward returned {got} gradient{'' if got == 1 else 's'} "
                    f"for {expected} input{'' if expected == 1 else 's'}")
        names = list(inputs) if inputs is not None else list(spec.input_names)
        if len(names) < expected <= len(spec.input_names):  # an argument left to its default
            names = list(spec.input_names)
        left_out = names[got:expected]
        if got < expected and inputs is not None and left_out and not any(
                isinstance(inputs.get(name), torch.Tensor) for name in left_out):
            return GradingError(
                f"{returned}: {' and '.join(left_out)} get{'s' if len(left_out) == 1 else ''} "
                "no gradient, yet each input still gets a value, in the order forward takes "
                "them: which value stands for no gradient?",
                mistake=f"{spec.name}/wrong-gradient-count")
        if got < expected:  # which ones are missing, the count cannot say
            return GradingError(f"{returned}: return one gradient or None per input, in "
                                f"forward's order ({', '.join(names)})",
                                mistake=f"{spec.name}/wrong-gradient-count")
        return GradingError(f"{returned}: return one gradient (or None) per input forward was "
                            "given; anything past the last (a default argument left out) must "
                            "be None", mistake=f"{spec.name}/wrong-gradient-count")
    if match := _NOT_NONE.search(message):
        position = int(match[1]) - 1
        name = spec.input_names[position]
        given = returned[position] if returned is not None and position < len(returned) else None
        if isinstance(given, torch.Tensor) and not bool(given.any()):
            return GradingError(
                f"backward returned a tensor of zeros for {name}, an input that is not a "
                f"tensor: a tensor of zeros is not None; return None for {name}",
                mistake=f"{spec.name}/gradient-for-non-tensor")
        return GradingError(
            f"backward returned a gradient for {name}, which is not a tensor: return None for {name}",
            mistake=f"{spec.name}/gradient-for-non-tensor")
    if "modified by an inplace operation" in message:
        return GradingError(
            f"a tensor {spec.name} saved was modified in place before backward: "
            "do not write into saved tensors or grad_output",
            message, mistake=f"{spec.name}/writes-saved-tensor")
    if "does not require grad and does not have a grad_fn" in message:
        return GradingError(
            f"{spec.name}.{phase} asked autograd for a gradient of a tensor autograd never "
            f"recorded: inside {phase} grad mode is off, so nothing computed there is recorded; "
            "derive the gradient by hand, or record on purpose under torch.enable_grad() "
            "(lesson 04)", message, mistake=f"{spec.name}/autograd-on-unrecorded")
    given = f" with {_describe(inputs)}" if inputs else ""
    if match := _ALLOCATION.search(message):
        return GradingError(
            f"{spec.name}.{phase} ran out of memory{given}: it asked for {int(match[1]):,} "
            f"bytes at once, where its inputs and outputs are a few tensors of their size: a "
            f"Jacobian built as a matrix? {rule_reference('by-hand')}", message,
            mistake=f"{spec.name}/builds-jacobian")
    return GradingError(f"{spec.name}.{phase} raised {type(error).__name__}{given}: "
                        f"{message.splitlines()[0]}", message)


_ALLOCATION = re.compile(r"tried to allocate (\d+) bytes")


_ARGUMENT_COUNT = re.compile(r"positional argument|takes \d+ |unexpected keyword argument|"
                             r"required keyword")


def _explain_type_error(spec: Spec, error: TypeError, inputs: dict) -> GradingError:
    """A signature hint for a genuine argument-count error only; a None where forward wanted a
    tensor (an optional argument such as bias=None) is named as such."""
    message = str(error)
    if "NoneType" in message:
        left_out = [n for n in spec.input_names if n not in inputs]
        nones = left_out or [n for n, v in inputs.items() if v is None] or ["an optional input"]
        return GradingError(
            f"{spec.name}.forward fails for {nones[0]}=None ({message.splitlines()[0]}): "
            f"handle the optional argument, e.g. `if {nones[0]} is not None:`", message)
    if _ARGUMENT_COUNT.search(message):
        signature = ", ".join(("ctx",) + spec.input_names)
        return GradingError(f"calling {spec.name}.apply raised TypeError: forward should take "
                            f"({signature})", message)
    return GradingError(f"{spec.name}.forward raised TypeError with {_describe(inputs)}: "
                        f"{message.splitlines()[0]}", message)


def _raising_line(error: BaseException) -> str:
    """The source line that raised ``error`` (where Python can find it), else ''."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    if traceback is None:
        return ""
    code = traceback.tb_frame.f_code
    return linecache.getline(code.co_filename, traceback.tb_lineno).strip()


def _explain_index_error(spec: Spec, error: IndexError, inputs: dict) -> GradingError:
    """Name ctx.needs_input_grad only when the line that raised indexes it past its end;
    otherwise quote the learner's own error."""
    message = str(error).splitlines()[0] if str(error) else "index out of range"
    if "needs_input_grad" in _raising_line(error) and "out of range" in message:
        left_out = [name for name in spec.input_names if name not in inputs]
        why = (f"; {' and '.join(left_out)} {'was' if len(left_out) == 1 else 'were'} left "
               "out, so it has no entry" if left_out else "")
        return GradingError(
            f"{spec.name}.backward raised IndexError with {_describe(inputs)}, reading past the "
            f"end of ctx.needs_input_grad: "
            f"ctx.needs_input_grad has one entry per argument actually passed to apply, "
            f"{len(inputs)} here ({', '.join(inputs)}){why}",
            str(error), mistake=f"{spec.name}/reads-past-needs-input-grad")
    return GradingError(f"{spec.name}.backward raised IndexError with {_describe(inputs)}: "
                        f"{message}", str(error))
