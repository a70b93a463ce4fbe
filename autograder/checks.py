"""Checks shared by every exercise. Each raises GradingError with a hint, or returns."""

from contextlib import contextmanager

import torch
from torch.autograd.gradcheck import GradcheckError

from .diagnose import diagnose_gradient, diagnose_values
from .errors import GradingError
from .explain import (_explain_index_error, _explain_runtime_error, _explain_type_error,
                      called_with)
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .probes import BackwardTrace, ForwardTrace, trace_backward, trace_forward
from .saved_tuple import explain_saved_tuple
from .size_one_raises import raises_only_at_size_one
from .spec import Spec
from .tolerances import tolerance_of
from .twice import check_backward_twice


def check_is_function(obj, spec: Spec) -> type:
    """The submission must be a subclass of torch.autograd.Function."""
    if isinstance(obj, torch.autograd.Function):
        raise GradingError(
            f"{spec.name} is an instance: pass the class itself and call {spec.name}.apply(...)",
            mistake=f"{spec.name}/instance-not-class")
    if not (isinstance(obj, type) and issubclass(obj, torch.autograd.Function)):
        raise GradingError(
            f"{spec.name} must be a class deriving from torch.autograd.Function, "
            f"got {type(obj).__name__}", mistake=f"{spec.name}/not-a-function-class")
    return obj


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
                "(or None) there and keep numbers, flags and functions as plain ctx attributes "
                f"{rule_reference('ctx')}",
                str(error), mistake=f"{spec.name}/saves-non-tensor") from error
        raise _explain_type_error(spec, error, inputs) from error
    except (RuntimeError, ValueError) as error:  # torch.einsum through opt_einsum: ValueError
        raise _at_size_one(spec, "forward", error,
                           _explain_runtime_error(spec, "forward", error, inputs), function,
                           inputs) from error
    except Exception as error:  # the learner's own words with the call, unless it is the
        proof = raises_only_at_size_one(spec, "forward", error, function, inputs)  # size-1 case's
        if proof is None:
            raise called_with(error, "forward", inputs)
        raise proof from error



def _at_size_one(spec: Spec, phase: str, error: BaseException, explained: GradingError,
                 function, inputs: dict, grad_output=None) -> GradingError:
    """``explained``, or, where it proves no mistake of its own and the same call runs with
    each dimension of size 1 made 2, the size-1 case's hint (``size_one_raises``)."""
    if explained.mistake:
        return explained
    return raises_only_at_size_one(spec, phase, error, function, inputs,
                                   grad_output) or explained


def _layouts(grad_output) -> list:
    """(shape, strides, storage offset) of each tensor in ``grad_output`` (one, or a tuple)."""
    tensors = grad_output if isinstance(grad_output, (tuple, list)) else (grad_output,)
    return [(tuple(t.shape), t.stride(), t.storage_offset()) if isinstance(t, torch.Tensor)
            else None for t in tensors]


def _layout_ops(was: tuple, now: tuple) -> tuple[str, str]:
    """The in-place ops that change a tensor's layout from ``was`` to ``now`` (shape, strides,
    offset), and their out-of-place forms."""
    if len(now[0]) > len(was[0]):
        return "unsqueeze_", ".unsqueeze()"
    if len(now[0]) < len(was[0]):
        return "squeeze_", ".squeeze()"
    if sorted(now[0]) == sorted(was[0]) and now[0] != was[0]:
        return "t_ or transpose_", ".t(), .mT or .transpose()"
    return "as_strided_ or resize_", ".as_strided() or .reshape()"


def check_layout_untouched(spec: Spec, grad_output, before: list) -> None:
    """``grad_output``'s shape, strides and offset as ``before``: a backward that ran ``t_``,
    ``unsqueeze_`` or ``as_strided_`` on it changed the tensor the rest of the graph (and the
    grader's reference) reads, with no value written and no version bumped."""
    for was, now in zip(before, _layouts(grad_output)):
        if was != now:
            what, index = ("shape", 0) if was[0] != now[0] else ("strides", 1)
            ops, views = _layout_ops(was, now)
            raise GradingError(
                f"{spec.name}'s backward changed grad_output's {what} in place, from "
                f"{was[index]} to {now[index]} ({ops} does that): grad_output belongs to "
                f"autograd and may be read after your backward. Which out-of-place form "
                f"({views}) gives you the same view without changing it? "
                f"{rule_reference('unwritten')}",
                mistake=f"{spec.name}/writes-grad-output")


def _forward_class(output):
    """The Function whose backward node made ``output`` (of a tuple, its first tensor), to
    call again; None where there is none."""
    first = output[0] if isinstance(output, (tuple, list)) and output else output
    return getattr(getattr(first, "grad_fn", None), "_forward_cls", None)


def _returned_again(output, grad_output) -> tuple | None:
    """What the backward of the Function that made the tensor ``output`` returns for
    ``grad_output``, called again on its ctx (whose saved tensors a backward the engine then
    refused still holds); None where that cannot be done."""
    node, function = getattr(output, "grad_fn", None), _forward_class(output)
    if function is None or not isinstance(output, torch.Tensor):
        return None
    try:
        with torch.no_grad():
            grads = function.backward(node, grad_output)
    except Exception:  # the learner's backward may raise anything: the engine's error stands
        return None
    return grads if isinstance(grads, tuple) else (grads,)


def run_backward(spec: Spec, output, inputs: dict, grad_output, *,
                 count_flops: bool = False) -> BackwardTrace:
    """Backpropagate ``grad_output``, turning the learner's errors into hints (a grad_output
    whose layout backward changed in place is named first); ``count_flops`` as for
    ``trace_backward``."""
    before = _layouts(grad_output)
    try:
        trace = trace_backward(output, list(inputs.values()), grad_output,
                               count_flops=count_flops)
    except (NotImplementedError, GradingError):
        raise
    except (RuntimeError, ValueError) as error:  # torch.einsum through opt_einsum: ValueError
        check_layout_untouched(spec, grad_output, before)
        raise _at_size_one(spec, "backward", error,
                           _explain_runtime_error(spec, "backward", error, inputs,
                                                  _returned_again(output, grad_output)),
                           _forward_class(output), inputs, grad_output) from error
    except IndexError as error:
        check_layout_untouched(spec, grad_output, before)
        raise _at_size_one(spec, "backward", error, _explain_index_error(spec, error, inputs),
                           _forward_class(output), inputs, grad_output) from error
    except (TypeError, AttributeError) as error:  # named only where a saved tuple is proven
        if (explained := explain_saved_tuple(spec, error, _forward_class(output))) is None:
            raise called_with(error, "backward", inputs)
        raise explained from error
    except Exception as error:  # the learner's own words, with the call
        check_layout_untouched(spec, grad_output, before)
        proof = raises_only_at_size_one(spec, "backward", error, _forward_class(output), inputs,
                                        grad_output)
        if proof is None:
            raise called_with(error, "backward", inputs)
        raise proof from error
    check_layout_untouched(spec, grad_output, before)
    return trace


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


def check_values_and_gradients(function: type, spec: Spec, values: dict, *, rtol=None,
                               atol=None, seed: int = 0) -> tuple[ForwardTrace, BackwardTrace]:
    """Forward against the reference, every gradient against autograd's, grad_output and the
    inputs left untouched (within the inputs' dtype's tolerance unless told)."""
    tolerance = tolerance_of(values)
    rtol = tolerance.rtol if rtol is None else rtol
    atol = tolerance.atol if atol is None else atol
    inputs = make_inputs(values)
    before = {n: (v.detach().clone(), v._version) for n, v in inputs.items()
              if isinstance(v, torch.Tensor)}
    forward = run_forward(function, spec, inputs)
    check_inputs_untouched(spec, inputs, before, "forward")  # before values quote x
    expected = spec.reference(**make_inputs(values, requires_grad=False))
    diagnose_values(f"{spec.name}'s output", forward.output, expected, rtol=rtol, atol=atol,
                    inputs=values, computed_in=expected.dtype, exercise_name=spec.name)
    generator = grad_output_generator(seed)
    grad_output = torch.randn(expected.shape, generator=generator, dtype=expected.dtype)
    grad_output = grad_output.to(expected.device)
    pristine_grad_output = grad_output.clone()
    version = grad_output._version
    backward = run_backward(spec, forward.output, inputs, grad_output)
    check_untouched(spec, grad_output, pristine_grad_output, version)
    check_inputs_untouched(spec, inputs, before, "backward")
    truth = reference_gradients(spec, inputs, pristine_grad_output)
    for name, grad in zip(inputs, backward.grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name], rtol=rtol, atol=atol, inputs=values,
                              computed_in=inputs[name].dtype, exercise_name=spec.name,
                              grad_output=pristine_grad_output)
    return forward, backward


def check_inputs_untouched(spec: Spec, inputs: dict, before: dict, phase: str) -> None:
    """No input written in place by ``phase`` (its version and values as ``before``)."""
    for name, (value, old_version) in before.items():
        if inputs[name]._version != old_version or not torch.equal(inputs[name].detach(), value):
            raise GradingError(
                f"{spec.name}.{phase} modified its input {name} in place: inputs must stay "
                f"untouched {rule_reference('unwritten')}", mistake=f"{spec.name}/writes-input")


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
    except Exception as error:  # gradcheck runs backward many times on one graph:
        if not isinstance(error, GradingError):  # a second run's error (a saved tensor
            check_backward_twice(function, spec, values)  # written, state popped) is named
        raise


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
            f"can detect in-place changes and saved-tensor hooks see it{cycle} "
            f"{rule_reference('ctx')}",
            mistake=f"{spec.name}/tensor-on-ctx")


def check_backward_by_hand(spec: Spec, backward: BackwardTrace) -> None:
    """No re-entry into autograd and no built-in ``*_backward`` op inside backward."""
    if backward.reentered_autograd:
        raise GradingError(
            f"{spec.name}.backward calls {backward.reentered_autograd[0]}: "
            "write the gradient formula by hand instead of asking autograd "
            f"{rule_reference('by-hand')}",
            mistake=f"{spec.name}/asks-autograd")
    builtin = sorted({op for op in backward.ops if "backward" in op})
    if builtin:
        raise GradingError(
            f"{spec.name}.backward uses the built-in op {builtin[0]}: "
            f"write the gradient formula by hand {rule_reference('by-hand')}",
            mistake=f"{spec.name}/builtin-backward-op")


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
        f"ctx.save_for_backward(...) so autograd's version counter protects them "
        f"{rule_reference('ctx')}",
        mistake=f"{spec.name}/output-not-saved")


def backward_outputs(spec: Spec, outputs, x: torch.Tensor, grad_outputs):
    """The gradient for ``x`` when ``grad_outputs`` flow into a Function's several ``outputs``
    (a None there: that output is unused), turning the learner's errors into hints."""
    used = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
    try:
        grad, = torch.autograd.grad([o for o, _ in used], x, [g for _, g in used],
                                    allow_unused=True)
    except TypeError as error:
        if any(g is None for g in grad_outputs) and "NoneType" in str(error):
            raise GradingError(
                f"{spec.name}.backward raised TypeError on a None gradient: after "
                "ctx.set_materialize_grads(False) an unused output's gradient is None; test "
                "`if grad is None` before adding, concatenating or padding it",
                str(error), mistake=f"{spec.name}/none-gradient-not-handled") from error
        raise GradingError(f"{spec.name}.backward raised TypeError: "
                           f"{str(error).splitlines()[0]}", str(error)) from error
    except RuntimeError as error:
        raise _explain_runtime_error(spec, "backward", error, {"x": x}) from error
    return grad


def check_untouched(spec: Spec, grad_output, pristine, version: int | None = None) -> None:
    """``grad_output`` still equals the copy taken before backward (and, given the version it
    had then, was not written at all)."""
    if not torch.equal(grad_output, pristine) or version not in (None, grad_output._version):
        raise GradingError(f"{spec.name}'s backward modified grad_output in place: compute a new "
                           "tensor instead (an out-of-place op, or write into a fresh tensor) "
                           f"{rule_reference('unwritten')}",
                           mistake=f"{spec.name}/writes-grad-output")


def gradcheck_callable(spec: Spec, f, x: torch.Tensor) -> None:
    """gradcheck of ``f(x)`` for a fresh float64 leaf ``x`` (``f`` may pick or copy)."""
    try:
        torch.autograd.gradcheck(f, (x.detach().clone().requires_grad_(),), eps=1e-6, atol=1e-5)
    except GradcheckError as error:
        raise GradingError(f"gradcheck failed for {spec.name}: the analytic Jacobian differs "
                           "from the numerical one", str(error)) from error
