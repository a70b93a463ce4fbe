"""The learner's forward and backward against the float64 reference on one set of inputs:
their values and dtypes, what forward saved, and every gradient."""

import torch

from .checks import check_untouched, run_backward, run_forward
from .diagnose import diagnose_gradient, diagnose_values
from .domain import TOLERANCES, Domain, Tolerance
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator


def floating_outputs(output) -> list:
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return [o for o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point()]


def fresh_leaves(values: dict, layout: str | None = None, names=None) -> dict:
    """Inputs built from fresh leaves; with ``layout``, each chosen floating input is a view of
    its leaf with strides other than its shape's (its values kept, but for ``expanded``)."""
    inputs = {}
    for name, value in values.items():
        if not isinstance(value, torch.Tensor):
            inputs[name] = value
            continue
        floating = value.is_floating_point()
        chosen = layout and floating and (names is None or name in names)
        base, view = (_strided(value, layout) if chosen else (value, None))
        leaf = base.detach().clone().requires_grad_(floating)
        inputs[name] = view(leaf) if view is not None else leaf
    return inputs


def _strided(value: torch.Tensor, layout: str):
    """(base, view) with ``view(base)`` of ``value``'s shape and another layout, or
    (value, None) where the layout does not apply to this input."""
    shape = value.shape
    if layout == "transposed" and value.dim() >= 2:
        return value.mT.contiguous(), lambda base: base.mT
    if layout == "column slice" and value.dim() >= 1 and value.numel() > 0:
        width = shape[-1]
        base = value.new_zeros(*shape[:-1], 2 * width + 1)
        if value.dim() == 1:  # every other element: a stride of 2
            base[: 2 * width: 2] = value
            return base, lambda base: base[: 2 * width: 2]
        base[..., :width] = value
        return base, lambda base: base[..., :width]
    if layout == "expanded" and value.dim() >= 1 and shape[0] > 1:
        return value[:1].contiguous(), lambda base: base.expand(shape)
    return value, None


def reference_outputs(domain: Domain, inputs: dict) -> dict:
    """The float64 reference on the same values: (outputs, inputs it was given)."""
    fresh = {}
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor):
            wide = value.detach().to(torch.float64) if value.is_floating_point() else value.detach()
            fresh[name] = wide.clone().requires_grad_(value.requires_grad)
        else:
            fresh[name] = value
    return floating_outputs(domain.spec.reference(**fresh)), fresh


def on_cpu(values: dict) -> dict:
    """``values`` with each tensor copied to the CPU, as a leaf with the same requires_grad:
    where inputs may lie outside the contract (another call's constants), the reference runs
    there, where an out-of-range index raises an error instead of a CUDA device-side assert
    that leaves the process unable to run anything more on the GPU."""
    return {name: value.detach().cpu().requires_grad_(value.requires_grad)
            if isinstance(value, torch.Tensor) else value for name, value in values.items()}


def compare(domain: Domain, function, inputs: dict, tolerance: Tolerance | None = None, *,
            seed: int = 0, compute: torch.dtype | None = None):
    """Forward and every gradient of ``inputs`` against the float64 reference; what forward
    saved no narrower than ``compute``, and no input or output copied wider. Returns the
    forward trace."""
    spec = domain.spec
    dtype = next((v.dtype for v in inputs.values()
                  if isinstance(v, torch.Tensor) and v.is_floating_point()), torch.float64)
    tolerance = tolerance or domain.tolerances.get(dtype) or TOLERANCES[dtype]
    forward = run_forward(function, spec, inputs)
    outputs = floating_outputs(forward.output)
    expected, fresh = reference_outputs(domain, inputs)
    if len(outputs) != len(expected):
        raise GradingError(f"{spec.name} returned {len(outputs)} floating-point outputs where "
                           f"the contract has {len(expected)}",
                           mistake=f"{spec.name}/wrong-output-count")
    for i, (got, want) in enumerate(zip(outputs, expected)):
        what = f"{spec.name}'s output" + (f" {i}" if len(outputs) > 1 else "")
        if got.dtype != dtype:
            raise GradingError(f"{what} has dtype {got.dtype} for {dtype} inputs "
                               f"{rule_reference('values')}",
                               mistake=f"{spec.name}/wrong-output-dtype")
        diagnose_values(what, got.detach().to(torch.float64), want.detach(),
                        rtol=tolerance.rtol, atol=tolerance.atol, inputs=inputs, computed_in=dtype,
                        exercise_name=spec.name)
    compute = compute or domain.accumulates.get(dtype, dtype)
    check_saved_dtypes(domain, forward, dtype, compute, inputs)
    check_no_widened_copy_saved(domain, forward, inputs, compute)
    differentiable = [o for o in outputs if o.requires_grad]
    if not differentiable:
        return forward
    generator = grad_output_generator(seed)
    grad_outputs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o.device)
                    for o in differentiable]
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    truths = torch.autograd.grad([e for e, o in zip(expected, outputs) if o.requires_grad],
                                 [fresh[n] for n in wanted], grad_outputs, allow_unused=True)
    given = [g.to(o.dtype) for g, o in zip(grad_outputs, differentiable)]
    pristine = [(g.clone(), g._version) for g in given]
    grads = input_gradients(domain, forward.output, differentiable, inputs, given)
    for grad_output, (copy, version) in zip(given, pristine):
        check_untouched(spec, grad_output, copy, version)
    for name, truth in zip(wanted, truths):
        truth = truth if truth is not None else torch.zeros_like(fresh[name])
        got = grads[name]
        if isinstance(got, torch.Tensor) and got.dtype != inputs[name].dtype:
            raise GradingError(f"grad_{name} has dtype {got.dtype} but {name} has dtype "
                               f"{inputs[name].dtype}: keep the input's dtype "
                               f"{rule_reference('gradients')}",
                               mistake=f"{spec.name}/wrong-gradient-dtype")
        diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor) else got,
                          truth, rtol=tolerance.rtol, atol=tolerance.atol, inputs=inputs,
                          computed_in=inputs[name].dtype, exercise_name=spec.name,
                          grad_output=grad_outputs[0] if len(grad_outputs) == 1 else grad_outputs)
    return forward


def input_gradients(domain: Domain, output, differentiable: list, inputs: dict,
                    grad_outputs) -> dict:
    """The gradient of every input that requires grad, by name (learner's errors as hints)."""
    if len(differentiable) == 1 and not isinstance(output, (tuple, list)):
        grads = run_backward(domain.spec, output, inputs, grad_outputs[0]).grads
        return dict(zip(inputs, grads))
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        grads = torch.autograd.grad(differentiable, [inputs[n] for n in wanted], grad_outputs,
                                    allow_unused=True)
    except RuntimeError as error:
        raise GradingError(f"{domain.spec.name}.backward raised RuntimeError: "
                           f"{str(error).splitlines()[0]}", str(error)) from error
    return dict(zip(wanted, grads))


def _whole_numbers(tensor: torch.Tensor) -> bool:
    """Every value an integer its dtype holds exactly (a mask, a sign, a count, a constant
    such as -1000): nothing was rounded away, whatever the dtype."""
    exact = 2.0 / torch.finfo(tensor.dtype).eps  # 2^24 for float32: every integer up to it
    return bool(((tensor == tensor.round()) & (tensor.abs() <= exact)).all())


def check_saved_dtypes(domain: Domain, forward, dtype: torch.dtype, compute: torch.dtype,
                       inputs: dict | None = None) -> None:
    """A floating tensor forward computed and saved (not an input, not an output) keeps the
    digits the computation has: a float32 statistic saved for float64 inputs loses them; a
    mask, a sign or a constant such as 2 (whole numbers the dtype holds) has none to lose. One
    of ``inputs`` saved cast narrower (x.float()) is named as the copy it is."""
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits < torch.finfo(compute).bits
                and not _whole_numbers(saved.tensor)):
            name, value = _copied(saved, inputs or {})
            if name:
                raise GradingError(
                    f"{domain.spec.name} saved {name} as a "
                    f"{str(saved.dtype).removeprefix('torch.')} copy ({saved.nbytes} bytes) "
                    f"for {str(value.dtype).removeprefix('torch.')} inputs: the copy is memory "
                    f"{name} itself would not cost, and drops digits; save {name} as it is, "
                    "or nothing if backward does not read it",
                    mistake=f"{domain.spec.name}/saves-copy")
            raise GradingError(
                f"{domain.spec.name} saved a {str(saved.dtype).removeprefix('torch.')} tensor of "
                f"shape {saved.shape} for {str(dtype).removeprefix('torch.')} inputs: it keeps "
                f"fewer digits than the computation needs; save it in "
                f"{str(compute).removeprefix('torch.')}",
                mistake=f"{domain.spec.name}/saves-narrower-dtype")


def check_no_widened_copy_saved(domain: Domain, forward, inputs: dict,
                                compute: torch.dtype) -> None:
    """An input or output saved as a copy in a dtype wider than the computation's (x.double()
    for float32 x, "for accuracy") holds no digit the tensor lacks, and is new memory, twice
    its size: the tensor itself costs nothing (the caller holds an input, the graph an output),
    and backward can widen it."""
    floating = floating_outputs(forward.output)
    outputs = ({"the output": floating[0]} if len(floating) == 1
               else {f"output {i}": output for i, output in enumerate(floating)})
    for saved in forward.saved:
        if not (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits > torch.finfo(compute).bits):
            continue
        name, value = _copied(saved, {**inputs, **outputs})
        if name:
            raise GradingError(
                f"{domain.spec.name} saved {name} as a "
                f"{str(saved.dtype).removeprefix('torch.')} copy ({saved.nbytes} bytes) for "
                f"{str(value.dtype).removeprefix('torch.')} inputs: the copy holds no digit "
                f"{name} lacks and is new memory, where {name} itself costs nothing; save "
                "the tensor as it is (backward can widen it)",
                mistake=f"{domain.spec.name}/saves-widened-copy")


def _copied(saved, candidates: dict) -> tuple[str | None, torch.Tensor | None]:
    """The candidate (name, tensor) whose values ``saved`` holds in another dtype, if any."""
    for name, value in candidates.items():
        if (isinstance(value, torch.Tensor) and value.is_floating_point()
                and value.dtype != saved.dtype and value.numel() == saved.tensor.numel()
                and torch.equal(value.detach().to(saved.dtype).reshape(-1),
                                saved.tensor.reshape(-1))):
            return name, value
    return None, None
