"""Checks generated from an exercise's declared domain (``autograder.domain``), the same for
every exercise: two calls in one graph, each constant across its range, every dtype with what
was saved, inputs of every layout, and the exercise's large, tied, far-apart and accumulation
cases. Each runs forward and backward against the float64 reference and names its clause."""

import torch

from .checks import case, check_is_function, run_backward, run_forward
from .contract import covers
from .diagnose import diagnose_gradient, diagnose_values
from .domain import TOLERANCES, Domain, Tolerance
from .errors import GradingError
from .probes import reachable

def check_domain(domain: Domain, submission, device: torch.device) -> None:
    """Every property ``domain`` implies, on ``device``."""
    function = (domain.prepare(submission) if domain.prepare is not None
                else check_is_function(submission, domain.spec))
    clauses = domain.clauses()
    for name in domain.properties():
        with case(f"{_what(name)}; contract: {clauses[name]}"):
            _PROPERTIES[name.split(" ")[0]](domain, function, device, name)
        covers(f"domain: {name}")


_FIXED = {"per call": "two calls in one graph", "rows apart": "rows of far-apart magnitude",
          "ties": "values one ulp apart", "large": "a large input",
          "accumulation": "a case that a narrower accumulator fails"}


def _what(name: str) -> str:
    kind, _, rest = name.partition(" ")
    return f"{rest} inputs" if kind in ("layout", "dtype") else _FIXED.get(name, name)


# comparison ----------------------------------------------------------------------------------

def _floating_outputs(output) -> list:
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return [o for o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point()]


def _leaves(values: dict, layout: str | None = None, names=None) -> dict:
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


def _reference(domain: Domain, inputs: dict) -> dict:
    """The float64 reference on the same values: (outputs, inputs it was given)."""
    fresh = {}
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor):
            wide = value.detach().to(torch.float64) if value.is_floating_point() else value.detach()
            fresh[name] = wide.clone().requires_grad_(value.requires_grad)
        else:
            fresh[name] = value
    return _floating_outputs(domain.spec.reference(**fresh)), fresh


def compare(domain: Domain, function, inputs: dict, tolerance: Tolerance | None = None, *,
            seed: int = 0, compute: torch.dtype | None = None):
    """Forward and every gradient of ``inputs`` against the float64 reference; what forward
    saved no narrower than ``compute``. Returns the forward trace."""
    spec = domain.spec
    dtype = next((v.dtype for v in inputs.values()
                  if isinstance(v, torch.Tensor) and v.is_floating_point()), torch.float64)
    tolerance = tolerance or domain.tolerances.get(dtype) or TOLERANCES[dtype]
    forward = run_forward(function, spec, inputs)
    outputs = _floating_outputs(forward.output)
    expected, fresh = _reference(domain, inputs)
    if len(outputs) != len(expected):
        raise GradingError(f"{spec.name} returned {len(outputs)} floating-point outputs where "
                           f"the contract has {len(expected)}")
    for i, (got, want) in enumerate(zip(outputs, expected)):
        what = f"{spec.name}'s output" + (f" {i}" if len(outputs) > 1 else "")
        if got.dtype != dtype:
            raise GradingError(f"{what} has dtype {got.dtype} for {dtype} inputs: return the "
                               "input's dtype", mistake=f"{spec.name}/wrong-output-dtype")
        diagnose_values(what, got.detach().to(torch.float64), want.detach(),
                        rtol=tolerance.rtol, atol=tolerance.atol, inputs=inputs, computed_in=dtype)
    check_saved_dtypes(domain, forward, dtype, compute or domain.accumulates.get(dtype, dtype))
    differentiable = [o for o in outputs if o.requires_grad]
    if not differentiable:
        return forward
    generator = torch.Generator().manual_seed(seed)
    grad_outputs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o.device)
                    for o in differentiable]
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    truths = torch.autograd.grad([e for e, o in zip(expected, outputs) if o.requires_grad],
                                 [fresh[n] for n in wanted], grad_outputs, allow_unused=True)
    grads = _backward(domain, forward.output, differentiable, inputs,
                      [g.to(o.dtype) for g, o in zip(grad_outputs, differentiable)])
    for name, truth in zip(wanted, truths):
        truth = truth if truth is not None else torch.zeros_like(fresh[name])
        got = grads[name]
        if isinstance(got, torch.Tensor) and got.dtype != inputs[name].dtype:
            raise GradingError(f"grad_{name} has dtype {got.dtype} but {name} has dtype "
                               f"{inputs[name].dtype}: keep the input's dtype",
                               mistake=f"{spec.name}/wrong-gradient-dtype")
        diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor) else got,
                          truth, rtol=tolerance.rtol, atol=tolerance.atol, inputs=inputs,
                          computed_in=inputs[name].dtype)
    return forward


def _backward(domain: Domain, output, differentiable: list, inputs: dict, grad_outputs) -> dict:
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


def check_saved_dtypes(domain: Domain, forward, dtype: torch.dtype, compute: torch.dtype) -> None:
    """A floating tensor forward computed and saved (not an input, not an output) keeps the
    digits the computation has: a float32 statistic saved for float64 inputs loses them; a
    mask, a sign or a constant such as 2 (whole numbers the dtype holds) has none to lose."""
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits < torch.finfo(compute).bits
                and not _whole_numbers(saved.tensor)):
            raise GradingError(
                f"{domain.spec.name} saved a {str(saved.dtype).removeprefix('torch.')} tensor of "
                f"shape {saved.shape} for {str(dtype).removeprefix('torch.')} inputs: it keeps "
                f"fewer digits than the computation needs; save it in "
                f"{str(compute).removeprefix('torch.')}",
                mistake=f"{domain.spec.name}/saves-narrower-dtype")


# the properties ------------------------------------------------------------------------------

def _per_call(domain: Domain, function, device, _name) -> None:
    """Two calls in one graph, with different constants and inputs (the optional ones passed
    to the first call only), then one backward: each call's gradients are its own, and no
    attribute of the Function class changes."""
    low = {n: c.points()[0] for n, c in domain.constants.items()}
    # the other end (not the last of ``also``: dim -2 and an ``also`` 0 are one dim of 2-D x)
    high = {n: int(c.high) if c.integer else c.high for n, c in domain.constants.items()}
    calls = [domain.values(device, seed=seed, **constants)
             for seed, constants in ((11, low), (12, high))]
    for name in domain.optional:
        del calls[1][name]
    first, second = (_leaves(values) for values in calls)
    before = _class_state(function)
    outputs = []
    for inputs in (first, second):  # after each call: the second may set back what was there
        outputs.append(_floating_outputs(run_forward(function, domain.spec, inputs).output))
        _check_class_state(domain, function, before, "forward")
    generator = torch.Generator().manual_seed(7)
    pairs = [(o, torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o))
             for call in outputs for o in call if o.requires_grad]
    wanted = [v for inputs in (first, second) for v in inputs.values()
              if isinstance(v, torch.Tensor) and v.requires_grad]
    if not pairs or not wanted:
        return
    try:
        grads = torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                    allow_unused=True)
    except RuntimeError as error:
        failure = GradingError(f"{domain.spec.name}.backward raised RuntimeError with two calls "
                               f"in one graph: {str(error).splitlines()[0]}", str(error))
        raise _shared_state(domain, function, calls, failure) from error
    _check_class_state(domain, function, before, "backward")
    try:
        _each_call_own(domain, first, second, low, high, pairs, grads)
    except GradingError as error:
        raise _shared_state(domain, function, calls, error) from error


def _each_call_own(domain: Domain, first, second, low, high, pairs, grads) -> None:
    """Each call's gradients (``grads``, both calls' in order) are its own."""
    given = iter(grads)
    per_call = len(pairs) // 2
    for k, (inputs, other) in enumerate(((first, high), (second, low))):
        grad_outputs = [g for _, g in pairs[k * per_call:(k + 1) * per_call]]
        names = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
        mine = {n: next(given) for n in names}
        truth = _reference_grads(domain, inputs, grad_outputs)
        crossed = _crossed_grads(domain, inputs, other, grad_outputs) if other else {}
        for name in names:
            got = mine[name]
            if (name in crossed and isinstance(got, torch.Tensor)
                    and got.shape == truth[name].shape
                    and not torch.allclose(got.double(), truth[name])
                    and torch.allclose(got.double(), crossed[name])
                    and not torch.allclose(crossed[name], truth[name])):
                names_ = ", ".join(other)
                raise GradingError(
                    f"{domain.spec.name}'s backward used another call's {names_}: with two calls "
                    f"in one graph, the {'first' if k == 0 else 'second'} call's grad_{name} is "
                    f"the one the other call's {names_} gives; keep what backward needs on ctx, "
                    "one per call, not on the class or in a global",
                    mistake=f"{domain.spec.name}/state-shared-between-calls")
            diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor)
                              else got, truth[name], inputs=inputs,
                              computed_in=inputs[name].dtype)


def _shared_state(domain: Domain, function, calls: list, error: GradingError) -> GradingError:
    """A failure with two calls in one graph, blamed on state the calls share only when each
    call alone, on the same inputs, is right."""
    if error.mistake:
        return error
    try:
        for values in calls:
            compare(domain, function, _leaves(values))
    except GradingError:
        return error
    return GradingError(
        f"{domain.spec.name} is right for each call alone but not for two calls in one graph "
        f"({error.hint}): one call's forward changed what the other's backward reads; keep "
        "what backward needs on ctx, one per call, not on the class or in a global",
        error.details, mistake=f"{domain.spec.name}/state-shared-between-calls")


def _with(inputs: dict, constants: dict) -> dict:
    """``inputs`` with other constants, a 0-d tensor where the input is one."""
    changed = dict(inputs)
    for name, value in constants.items():
        old = inputs[name]
        changed[name] = (torch.tensor(value, dtype=old.dtype, device=old.device)
                         .requires_grad_(old.requires_grad)
                         if isinstance(old, torch.Tensor) else value)
    return changed


def _crossed_grads(domain: Domain, inputs: dict, other: dict, grad_outputs) -> dict:
    """The gradients one call's inputs would get with the other call's constants; none where
    those constants change the output's shape (a dim) or take the inputs outside the contract
    (targets equal to another call's ignore_index), so the two cannot be confused."""
    crossed = _with(inputs, other)
    try:
        expected, _ = _reference(domain, crossed)
        if [e.shape for e in expected if e.requires_grad] != [g.shape for g in grad_outputs]:
            return {}
        return _reference_grads(domain, crossed, grad_outputs)
    except (RuntimeError, IndexError, ValueError):
        return {}


def _reference_grads(domain: Domain, inputs: dict, grad_outputs) -> dict:
    expected, fresh = _reference(domain, inputs)
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    grads = torch.autograd.grad([e for e in expected if e.requires_grad],
                                [fresh[n] for n in wanted],
                                [g.to(torch.float64) for g in grad_outputs], allow_unused=True)
    return {n: g if g is not None else torch.zeros_like(fresh[n]) for n, g in zip(wanted, grads)}


def _class_state(function) -> dict:
    """Every attribute of the learner's classes in ``function``'s hierarchy, by identity."""
    if not isinstance(function, type):
        return {}
    return {(cls.__name__, key): value for cls in function.__mro__
            if not cls.__module__.startswith("torch") and cls is not object
            for key, value in vars(cls).items()}


def _check_class_state(domain: Domain, function, before: dict, phase: str) -> None:
    after = _class_state(function)
    changed = [key for key in after if key not in before or after[key] is not before[key]]
    if changed:
        owner, attribute = changed[0]
        keep = ("save it with ctx.save_for_backward" if any(reachable(after[changed[0]], ""))
                else f"keep it on ctx (ctx.{attribute} = ...)")
        raise GradingError(
            f"{domain.spec.name}.{phase} sets {owner}.{attribute}: a class attribute is shared by "
            f"every call, so a second call in the same graph overwrites the first's; {keep}",
            mistake=f"{domain.spec.name}/state-on-class")


def _constant(domain: Domain, function, device, name: str) -> None:
    constant = name.removeprefix("constant ")
    for point in domain.constants[constant].points():
        with case(f"{constant}={point!r}"):
            compare(domain, function, _leaves(domain.values(device, **{constant: point})))


def _dtype(domain: Domain, function, device, name: str) -> None:
    dtype = getattr(torch, name.removeprefix("dtype "))
    compare(domain, function, _leaves(domain.values(device, dtype=dtype)))


def _layout(domain: Domain, function, device, name: str) -> None:
    layout = name.removeprefix("layout ")
    values = domain.values(device)
    inputs = _leaves(values, layout, domain.layout_inputs)
    strided = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and not v.is_leaf]
    if not strided:
        raise ValueError(f"no input of {domain.spec.name}'s domain can be {layout}: declare "
                         "the layouts its contract allows")
    compare(domain, function, inputs)


def _case(domain: Domain, function, device, name: str) -> None:
    part = {"accumulation": domain.accumulation, "large": domain.large, "ties": domain.ties,
            "rows": domain.rows_apart}[name.split(" ")[0]]
    compare(domain, function, _leaves(part.values(device, part.dtype)), part.tolerance)


_PROPERTIES = {"per": _per_call, "constant": _constant, "dtype": _dtype, "layout": _layout,
               "accumulation": _case, "large": _case, "ties": _case, "rows": _case}
