"""Where a call keeps what backward needs: on its own ctx, in tensors autograd's version counter
guards, never on the Function class."""

import inspect

import torch

from ...checks import (Spec, case, make_inputs, reference_gradients, run_backward,
                      run_forward)
from ...domain import Domain
from ...errors import GradingError
from ...function_contract import rule_reference
from ...narrowed import shapes_of
from ...class_state import changed_attributes, check_class_state, class_state
from ...outside_ctx import _held, _refers_to

_CONTAINERS = (list, dict, set, bytearray)


def check_call_places(function, spec: Spec, values: dict) -> None:
    """First in a battery, one forward: an attribute it sets on an input tensor
    (weight.last_input = x) or a change to a mutable default argument of forward
    (def forward(ctx, x, weight, bias=None, _saved={})) is state every call shares, as a global
    is. Named here, before a backward under saved-tensor hooks (a tensor without the attribute)
    or the grader's wrappers (forward.__defaults__ not the learner's) raises a bare KeyError or
    TypeError; named also when backward never reads it (rule 4: nothing is kept on an input
    tensor)."""
    own = inspect.unwrap(function.forward)
    defaults = dict(zip(own.__code__.co_varnames[:own.__code__.co_argcount][
        own.__code__.co_argcount - len(own.__defaults__ or ()):], own.__defaults__ or ()))
    defaults.update(own.__kwdefaults__ or {})
    defaults = {n: d for n, d in defaults.items() if isinstance(d, _CONTAINERS)}
    inputs = make_inputs(values)
    had = {n: set(vars(v)) for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    # by value and by identity (a rerun on the same values stores an equal tensor, and a
    # dict keyed by id(ctx) may get a freed ctx's id back): then by this call's ctx
    before = {n: (repr(d), _held(d, None)[::2]) for n, d in defaults.items()}
    try:
        output = function.apply(*inputs.values())
    except Exception:  # noqa: BLE001 - the battery names the learner's own error
        return
    ctx = getattr(output, "grad_fn", None)
    for name, keys in had.items():
        added = sorted(set(vars(inputs[name])) - keys)
        if added:
            raise GradingError(
                f"{spec.name}.forward set {name}.{added[0]}, an attribute on its input {name}: "
                f"every call on {name} shares it (a second call made before the first one's "
                "backward overwrites it), and save_for_backward does not keep it (under "
                "saved-tensor hooks, as the grader runs, backward gets a tensor without it); "
                f"keep what backward needs on ctx, one per call {rule_reference('ctx')}",
                mistake=f"{spec.name}/state-on-input")
    for name, was in before.items():
        now = defaults[name]
        if (repr(now), _held(now, None)[::2]) != was or (
                ctx is not None and _refers_to(now, ctx)):
            raise GradingError(
                f"{spec.name}.forward changed its own mutable default argument {name}: a "
                "default such as {} or [] is made once, when the def runs, and every call "
                "shares it, as a global; keep what backward needs on ctx, one per call "
                + rule_reference("ctx"), mistake=f"{spec.name}/state-in-default-argument")


def _version_blind_alias(function, spec: Spec, values: dict, name: str) -> bool:
    """Did forward save a tensor that shares ``name``'s memory but not its version counter (what
    ``x.data`` gives)? Bump ``name``'s version and see which saved tensors follow."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    aliases = [saved.tensor for saved in forward.saved if saved.role == f"input {name}"]
    before = [alias._version for alias in aliases]
    with torch.no_grad():
        inputs[name].add_(0)
    return any(alias._version == version for alias, version in zip(aliases, before))


def check_input_version_tracking(function, spec: Spec, values: dict, name: str | None = None
                                 ) -> None:
    """Change an input in place between forward and backward: autograd must refuse, or every
    gradient must still be the one of the input forward saw. A backward that silently uses the
    new values read a tensor that autograd's version counter does not cover."""
    name = name or spec.input_names[0]
    inputs = make_inputs(values)
    # function.apply, not run_forward: saved-tensor hooks (which the probes use) turn autograd's
    # version check off
    output = function.apply(*inputs.values())
    grad_output = torch.ones_like(output)
    with torch.no_grad():
        inputs[name].mul_(2)
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        grads = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                    allow_unused=True)
    except RuntimeError as error:
        # what save_for_backward is for; for a view saved in forward, autograd's view check
        if any(words in str(error) for words in ("modified by an inplace operation",
                                                 "has been modified inplace")):
            return
        raise
    fresh = make_inputs(values, requires_grad=set(wanted))
    expected = torch.autograd.grad(spec.reference(**fresh), [fresh[n] for n in wanted],
                                   grad_output)
    if all(not isinstance(g, torch.Tensor) or g.shape != e.shape or torch.allclose(g, e)
           for g, e in zip(grads, expected)):
        return
    if _version_blind_alias(function, spec, values, name):
        raise GradingError(
            f"{spec.name} saved a tensor autograd cannot check for in-place changes: it shares "
            f"{name}'s memory but not its version counter (as {name}.data does), so backward "
            f"silently used {name}'s new values; save {name} itself with "
            f"ctx.save_for_backward({name}) {rule_reference('ctx')}",
            mistake=f"{spec.name}/saves-untracked-alias")
    raise GradingError(
        f"after {name} was changed in place, {spec.name}'s backward silently used the new "
        f"values: it read {name} from somewhere ctx.save_for_backward does not guard; save "
        f"{name} itself with ctx.save_for_backward({name}) {rule_reference('ctx')}",
        mistake=f"{spec.name}/reads-unguarded-input")


def check_one_ctx_per_call(function, spec: Spec, first: dict, second: dict) -> None:
    """Two calls in flight: forward on ``first``, forward on ``second``, then the first call's
    backward. ``ctx`` is one per call; state kept on the class or in a global belongs to
    whichever call ran last. Raises only when the first call's gradient is the one the second
    call's inputs give."""
    inputs, later = make_inputs(first), make_inputs(second)
    output = run_forward(function, spec, inputs).output
    run_forward(function, spec, later)
    grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                   generator=torch.Generator().manual_seed(5)).to(output.device)
    grads = run_backward(spec, output, inputs, grad_output).grads
    truth = reference_gradients(spec, inputs, grad_output)
    crossed = reference_gradients(spec, later, grad_output)
    for name, grad in zip(inputs, grads):
        if (name in truth and isinstance(grad, torch.Tensor) and grad.shape == truth[name].shape
                and not torch.allclose(grad, truth[name]) and torch.allclose(grad, crossed[name])):
            raise GradingError(
                f"{spec.name}'s backward used another call's inputs: called twice, the first "
                f"call got grad_{name} for the second call's inputs; keep what backward needs "
                "on ctx, which is one per call, not where calls share it (the class, a global) "
                f"{rule_reference('ctx')}",
                mistake=f"{spec.name}/state-shared-between-calls")


def check_class_untouched(function, domain: Domain, device) -> None:
    """One call, forward then backward: neither may set an attribute of the Function class
    (``MySigmoid.last_output = y``). Run first, it names the attribute before a check of what
    ctx saved can blame the missing save; a call that raises is left to the battery."""
    values = domain.values(device)
    inputs = make_inputs(values)
    before = class_state(function)
    try:
        forward = run_forward(function, domain.spec, inputs)
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    with case(_described(values)):
        _check_class_untouched(domain, function, before, "forward")
    try:
        run_backward(domain.spec, forward.output, inputs, torch.ones_like(forward.output))
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    with case(_described(values)):
        _check_class_untouched(domain, function, before, "backward")


def _described(values: dict) -> str:
    """'x of shape (3, 4), float64': the inputs a one-call check ran on."""
    dtypes = sorted({str(v.dtype).removeprefix("torch.") for v in values.values()
                     if isinstance(v, torch.Tensor) and v.is_floating_point()})
    return ", ".join([shapes_of(values), *dtypes])


def _holds_tensor(value) -> bool:
    if isinstance(value, (tuple, list, dict)):
        return any(map(_holds_tensor, value.values() if isinstance(value, dict) else value))
    return isinstance(value, torch.Tensor)


def _check_class_untouched(domain: Domain, function, before: dict, phase: str) -> None:
    """The per-call property's class check; where the attribute holds a tensor, the remedy is
    ctx.save_for_backward (a tensor as a ctx attribute fails check_no_ctx_tensors)."""
    try:
        check_class_state(domain, function, before, phase)
    except GradingError as error:
        after = class_state(function)
        owner, attribute = changed_attributes(before, after)[0]
        if not _holds_tensor(after[(owner, attribute)]):
            raise
        raise GradingError(
            f"{domain.spec.name}.{phase} sets {owner}.{attribute}: a class attribute is shared "
            "by every call, so what one call keeps there every other call sees and can change; "
            "save the tensors backward needs with ctx.save_for_backward, one set per call "
            f"{rule_reference('ctx')}",
            mistake=error.mistake) from error


def check_calls_of_two_sizes(function, spec: Spec, larger: dict, smaller: dict) -> None:
    """Two calls in flight on inputs of different sizes: forward on ``larger``, forward on
    ``smaller``, then the larger call's backward. A size, grid or block kept outside ctx (a
    global, the class, the module) then belongs to the smaller call, which two calls of one
    size never show. Raises only when the first call's gradients are wrong and the same call
    alone is right."""
    inputs, later = make_inputs(larger), make_inputs(smaller)
    output = function.apply(*inputs.values())
    function.apply(*later.values())
    grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                   generator=torch.Generator().manual_seed(5)).to(output.device)
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    grads = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                allow_unused=True)
    truth = reference_gradients(spec, inputs, grad_output)
    for name, grad in zip(wanted, grads):
        want = truth[name]
        if (isinstance(grad, torch.Tensor) and grad.shape == want.shape
                and torch.allclose(grad.double(), want.double(), rtol=1e-5, atol=1e-6)):
            continue
        alone = make_inputs(larger)
        again = torch.autograd.grad(function.apply(*alone.values()),
                                    [alone[n] for n in wanted], grad_output, allow_unused=True)
        if not all(isinstance(g, torch.Tensor) and g.shape == truth[n].shape
                   and torch.allclose(g.double(), truth[n].double(), rtol=1e-5, atol=1e-6)
                   for n, g in zip(wanted, again)):
            return  # wrong alone: the battery's own checks name it
        sizes = [tuple(next(v for v in call.values() if isinstance(v, torch.Tensor)).shape)
                 for call in (larger, smaller)]
        wrong = (~torch.isclose(grad.double(), want.double(), rtol=1e-5, atol=1e-6)).sum().item() \
            if isinstance(grad, torch.Tensor) and grad.shape == want.shape else want.numel()
        raise GradingError(
            f"{spec.name}'s backward used a later call's size: a call on {sizes[0]}, then one "
            f"on {sizes[1]}, then the first call's backward gives grad_{name} wrong in {wrong} "
            f"of {want.numel()} entries, while the same call alone is right; a size, grid or "
            "block kept where calls share it (a global, the class) belongs to whichever call "
            "ran last: compute it in backward from the tensors it gets, or keep it on ctx "
            f"{rule_reference('ctx')}",
            mistake=f"{spec.name}/size-shared-between-calls")


def check_requires_grad_per_call(function, spec: Spec, values: dict) -> None:
    """Two calls in flight on the same values: the first with every input requiring grad, the
    second with fewer (each proper subset, none first), then the first call's backward. Which
    inputs need a gradient is one per call (ctx.needs_input_grad); a flag kept where calls share
    it (a global, the class) belongs to whichever call ran last, so the first call's backward
    drops or changes a gradient it owes. Raises only when the same call alone is right."""
    names = [n for n, v in values.items()
             if isinstance(v, torch.Tensor) and v.is_floating_point()]
    subsets = [set()] + [set(names) - {n} for n in names if len(names) > 1]
    for subset in subsets:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        function.apply(*make_inputs(values, requires_grad=subset).values())
        grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype, generator=torch.Generator(
            ).manual_seed(6)).to(output.device)
        grads = torch.autograd.grad(output, [inputs[n] for n in names], grad_output,
                                    allow_unused=True)
        truth = reference_gradients(spec, inputs, grad_output)
        for name, grad in zip(names, grads):
            if (isinstance(grad, torch.Tensor) and grad.shape == truth[name].shape
                    and torch.allclose(grad.double(), truth[name].double())):
                continue
            alone = make_inputs(values)
            again = torch.autograd.grad(function.apply(*alone.values()),
                                        [alone[n] for n in names], grad_output, allow_unused=True)
            if not all(isinstance(g, torch.Tensor) and g.shape == truth[n].shape
                       and torch.allclose(g.double(), truth[n].double())
                       for n, g in zip(names, again)):
                return  # wrong alone: the battery's own checks name it
            later = " and ".join(sorted(subset)) + " requiring grad" if subset else \
                "no input requiring grad"
            raise GradingError(
                f"{spec.name}'s backward read which inputs need grad from another call: a call "
                f"with every input requiring grad, then a second call's forward (with {later}), "
                f"then the first call's backward gives grad_{name} "
                f"{'None' if grad is None else 'wrong'}, while the same call alone is right; a "
                "flag kept where calls share it (a global, the class) belongs to whichever call "
                "ran last: read ctx.needs_input_grad in backward, which is one per call "
                f"{rule_reference('ctx')}",
                mistake=f"{spec.name}/requires-grad-shared-between-calls")
