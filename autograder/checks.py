"""Checks shared by every exercise. Each raises GradingError with a hint, or returns."""

import linecache
import re
from contextlib import contextmanager
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.autograd.gradcheck import GradcheckError

from .diagnose import diagnose_gradient, diagnose_values, shape_hint
from .errors import GradingError
from .probes import BackwardTrace, ForwardTrace, trace_backward, trace_forward


@dataclass(frozen=True)
class Spec:
    """What an exercise is: its name, the forward's inputs, and a differentiable reference."""

    name: str
    input_names: tuple[str, ...]
    reference: Callable


def check_is_function(obj, spec: Spec) -> type:
    """The submission must be a subclass of torch.autograd.Function."""
    if isinstance(obj, torch.autograd.Function):
        raise GradingError(
            f"{spec.name} is an instance: pass the class itself and call {spec.name}.apply(...)"
        )
    if not (isinstance(obj, type) and issubclass(obj, torch.autograd.Function)):
        raise GradingError(
            f"{spec.name} must be a class deriving from torch.autograd.Function, "
            f"got {type(obj).__name__}"
        )
    return obj


_COUNT = re.compile(r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)")
_NOT_NONE = re.compile(r"gradient different than None at position (\d+)")
_BAD_SHAPE = re.compile(r"invalid gradient at index (\d+) - got \[([\d, ]*)\] "
                        r"but expected shape compatible with \[([\d, ]*)\]")
_BAD_DEVICE = re.compile(r"invalid gradient at index (\d+) - expected device (\S+) but got (\S+)")


def _describe(inputs: dict) -> str:
    """``x of shape (5, 3), scale=2.5``: what a failing call was given."""
    return ", ".join(f"{name} of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
                     else f"{name}={value!r}" for name, value in inputs.items())


def _explain_runtime_error(spec: Spec, phase: str, error: RuntimeError,
                           inputs: dict | None = None) -> GradingError:
    message = str(error)
    # the engine numbers the gradients of tensor inputs only
    tensor_names = ([n for n, v in inputs.items() if isinstance(v, torch.Tensor)]
                    if inputs is not None else list(spec.input_names))
    if match := _BAD_SHAPE.search(message):
        name = tensor_names[int(match[1])]
        got, expected = (tuple(int(d) for d in dims.split(",") if d.strip())
                         for dims in match.groups()[1:])
        return GradingError(shape_hint(name, got, expected), message)
    if match := _BAD_DEVICE.search(message):
        name = tensor_names[int(match[1])]
        return GradingError(f"grad_{name} is on {match[3]} but {name} is on {match[2]}: "
                            "create new tensors on the input's device", message)
    if match := _COUNT.search(message):
        expected, got = int(match[1]), int(match[2])
        returned = (f"backward returned {got} gradient{'' if got == 1 else 's'} "
                    f"for {expected} input{'' if expected == 1 else 's'}")
        names = list(inputs) if inputs is not None else list(spec.input_names)
        if got < expected and inputs is not None and not any(
                isinstance(inputs[name], torch.Tensor) for name in names[got:expected]):
            return GradingError(f"{returned}: return None for {' and '.join(names[got:expected])}",
                                mistake=f"{spec.name}/wrong-gradient-count")
        if got < expected:  # which ones are missing, the count cannot say
            return GradingError(f"{returned}: return one gradient or None per input, in "
                                f"forward's order ({', '.join(names)})",
                                mistake=f"{spec.name}/wrong-gradient-count")
        return GradingError(f"{returned}: return one gradient (or None) per input forward was "
                            "given; anything past the last (a default argument left out) must "
                            "be None", mistake=f"{spec.name}/wrong-gradient-count")
    if match := _NOT_NONE.search(message):
        name = spec.input_names[int(match[1]) - 1]
        return GradingError(
            f"backward returned a gradient for {name}, which is not a tensor: return None for {name}",
            mistake=f"{spec.name}/gradient-for-non-tensor")
    if "modified by an inplace operation" in message:
        return GradingError(
            f"a tensor {spec.name} saved was modified in place before backward: "
            "do not write into saved tensors or grad_output",
            message, mistake=f"{spec.name}/writes-saved-tensor")
    given = f" with {_describe(inputs)}" if inputs else ""
    return GradingError(f"{spec.name}.{phase} raised RuntimeError{given}: "
                        f"{message.splitlines()[0]}", message)


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


def run_forward(function: type, spec: Spec, inputs: dict) -> ForwardTrace:
    """Call forward under the recording hooks, turning its errors into hints."""
    try:
        return trace_forward(function, inputs)
    except (NotImplementedError, GradingError):
        raise
    except TypeError as error:
        if "save_for_backward can only save variables" in str(error):
            raise GradingError(
                f"{spec.name}.forward passed a non-tensor to ctx.save_for_backward: save tensors "
                "(or None) there and keep numbers, flags and functions as plain ctx attributes",
                str(error),
            ) from error
        raise _explain_type_error(spec, error, inputs) from error
    except RuntimeError as error:
        raise _explain_runtime_error(spec, "forward", error, inputs) from error


def run_backward(spec: Spec, output, inputs: dict, grad_output) -> BackwardTrace:
    """Backpropagate ``grad_output``, turning the learner's errors into hints."""
    try:
        return trace_backward(output, list(inputs.values()), grad_output)
    except (NotImplementedError, GradingError):
        raise
    except RuntimeError as error:
        raise _explain_runtime_error(spec, "backward", error, inputs) from error
    except IndexError as error:
        raise _explain_index_error(spec, error, inputs) from error


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
            str(error))
    return GradingError(f"{spec.name}.backward raised IndexError with {_describe(inputs)}: "
                        f"{message}", str(error))


@contextmanager
def case(description: str):
    """Name the inputs in any hint raised inside the block: '... (with scale=0.0)'."""
    try:
        yield
    except GradingError as error:
        raise GradingError(error.hint, error.details, description, mistake=error.mistake) from error


def make_inputs(values: dict, *, requires_grad=True) -> dict:
    """Fresh leaf copies of the tensors among ``values`` (which inputs need grad is chosen
    by ``requires_grad``: True, False, or a set of names)."""
    made = {}
    for name, value in values.items():
        if isinstance(value, torch.Tensor):
            wants = requires_grad if isinstance(requires_grad, bool) else name in requires_grad
            value = value.detach().clone().requires_grad_(wants and value.is_floating_point())
        made[name] = value
    return made


def reference_gradients(spec: Spec, inputs: dict, grad_output: torch.Tensor) -> dict:
    """The true gradients, by autograd through the reference's composed ops."""
    fresh = make_inputs(inputs, requires_grad={n for n, v in inputs.items()
                                               if isinstance(v, torch.Tensor) and v.requires_grad})
    output = spec.reference(**fresh)
    wanted = {n: v for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad}
    grads = torch.autograd.grad(output, list(wanted.values()), grad_output, allow_unused=True)
    return {n: (g if g is not None else torch.zeros_like(wanted[n]))
            for n, g in zip(wanted, grads)}


def check_values_and_gradients(function: type, spec: Spec, values: dict, *, rtol=1e-5,
                               atol=1e-7, seed: int = 0) -> tuple[ForwardTrace, BackwardTrace]:
    """Forward against the reference, every gradient against autograd's, grad_output and the
    inputs left untouched."""
    inputs = make_inputs(values)
    before = {n: (v.detach().clone(), v._version) for n, v in inputs.items()
              if isinstance(v, torch.Tensor)}
    forward = run_forward(function, spec, inputs)
    expected = spec.reference(**make_inputs(values, requires_grad=False))
    diagnose_values(f"{spec.name}'s output", forward.output, expected, rtol=rtol, atol=atol)
    generator = torch.Generator().manual_seed(seed)
    grad_output = torch.randn(expected.shape, generator=generator, dtype=expected.dtype)
    grad_output = grad_output.to(expected.device)
    pristine_grad_output = grad_output.clone()
    version = grad_output._version
    backward = run_backward(spec, forward.output, inputs, grad_output)
    check_untouched(spec, grad_output, pristine_grad_output, version)
    for name, (value, old_version) in before.items():
        if inputs[name]._version != old_version or not torch.equal(inputs[name].detach(), value):
            raise GradingError(
                f"{spec.name} modified its input {name} in place: inputs must stay untouched",
                mistake=f"{spec.name}/writes-input")
    truth = reference_gradients(spec, inputs, pristine_grad_output)
    for name, grad in zip(inputs, backward.grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name], rtol=rtol, atol=atol)
    return forward, backward


def check_gradcheck(function: type, spec: Spec, values: dict) -> None:
    """torch.autograd.gradcheck in float64 on every tensor input that can require grad."""
    inputs = make_inputs(values)
    names = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]

    def apply(*tensors):
        call = dict(inputs)
        call.update(zip(names, tensors))
        return function.apply(*call.values())

    try:
        torch.autograd.gradcheck(apply, tuple(inputs[n] for n in names), eps=1e-6, atol=1e-5)
    except GradcheckError as error:
        raise GradingError(
            f"gradcheck failed for {spec.name}: the analytic Jacobian differs from the numerical one",
            str(error),
        ) from error


def check_no_ctx_tensors(spec: Spec, forward: ForwardTrace) -> None:
    """Tensors go through save_for_backward, never onto ctx as attributes. Only a differentiable
    output kept there makes a reference cycle (its grad_fn is ctx); an input, an intermediate or
    an output marked non-differentiable (no grad_fn) does not."""
    if forward.ctx_tensor_attributes:
        where = ", ".join(forward.ctx_tensor_attributes)
        outputs = forward.output if isinstance(forward.output, tuple) else (forward.output,)
        kept = [f"ctx.{name}" for name, value in forward.ctx_attributes.items()
                if any(value is output and output.grad_fn is not None for output in outputs)]
        cycle = (f"; {kept[0]} is the output, whose grad_fn is ctx: a reference cycle that holds "
                 "its memory until Python's garbage collector runs" if kept else "")
        raise GradingError(
            f"{spec.name} stores a tensor as {where}: use ctx.save_for_backward so autograd "
            f"can detect in-place changes and saved-tensor hooks see it{cycle}",
            mistake=f"{spec.name}/tensor-on-ctx")


def check_backward_by_hand(spec: Spec, backward: BackwardTrace) -> None:
    """No re-entry into autograd and no built-in ``*_backward`` op inside backward."""
    if backward.reentered_autograd:
        raise GradingError(
            f"{spec.name}.backward calls {backward.reentered_autograd[0]}: "
            "write the gradient formula by hand instead of asking autograd",
            mistake=f"{spec.name}/asks-autograd")
    builtin = sorted({op for op in backward.ops if "backward" in op})
    if builtin:
        raise GradingError(
            f"{spec.name}.backward uses the built-in op {builtin[0]}: "
            "write the gradient formula by hand", mistake=f"{spec.name}/builtin-backward-op")


NOTICED_IN_PLACE = ("modified by an inplace operation",
                    "is a view and its base or another view of its base has been modified inplace")


def check_version_tracking(function: type, spec: Spec, values: dict) -> None:
    """Writing into the output before backward must make backward raise, which it does
    only when the output was saved with save_for_backward."""
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    with torch.no_grad():
        output.mul_(2)
    try:
        output.backward(torch.ones_like(output))
    except RuntimeError as error:
        # an output that is a view of forward's own tensor (a reshape back) is protected too
        if any(said in str(error) for said in NOTICED_IN_PLACE):
            return
        raise _explain_runtime_error(spec, "backward", error) from error
    raise GradingError(
        f"{spec.name} did not notice its saved output was changed in place: save tensors with "
        "ctx.save_for_backward(...) so autograd's version counter protects them",
        mistake=f"{spec.name}/output-not-saved")


def backward_outputs(spec: Spec, outputs, x: torch.Tensor, grad_outputs):
    """The gradient for ``x`` when ``grad_outputs`` flow into a Function's several ``outputs``
    (a None there: that output is unused), turning the learner's errors into hints."""
    used = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
    try:
        grad, = torch.autograd.grad([o for o, _ in used], x, [g for _, g in used],
                                    allow_unused=True)
    except TypeError as error:
        raise GradingError(
            f"{spec.name}.backward raised TypeError on a None gradient: after "
            "ctx.set_materialize_grads(False) an unused output's gradient is None; test "
            "`if grad is None` before adding, concatenating or padding it",
            str(error)) from error
    except RuntimeError as error:
        raise _explain_runtime_error(spec, "backward", error, {"x": x}) from error
    return grad


def check_untouched(spec: Spec, grad_output, pristine, version: int | None = None) -> None:
    """``grad_output`` still equals the copy taken before backward (and, given the version it
    had then, was not written at all)."""
    if not torch.equal(grad_output, pristine) or version not in (None, grad_output._version):
        raise GradingError(f"{spec.name}'s backward modified grad_output in place: compute a new "
                           "tensor instead (an out-of-place op such as *, or write into a fresh tensor)",
                           mistake=f"{spec.name}/writes-grad-output")


def gradcheck_callable(spec: Spec, f, x: torch.Tensor) -> None:
    """gradcheck of ``f(x)`` for a fresh float64 leaf ``x`` (``f`` may pick or copy)."""
    try:
        torch.autograd.gradcheck(f, (x.detach().clone().requires_grad_(),), eps=1e-6, atol=1e-5)
    except GradcheckError as error:
        raise GradingError(f"gradcheck failed for {spec.name}: the analytic Jacobian differs "
                           "from the numerical one", str(error)) from error
