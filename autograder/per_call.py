"""Two calls of a Function in one graph: each call's state kept on its own ctx, and no
attribute of the Function's class changed by forward or backward."""

import torch

from .checks import run_forward
from .comparison import compare, floating_outputs, fresh_leaves, on_cpu, reference_outputs
from .diagnose import diagnose_gradient, diagnose_values
from .domain import Domain
from .tolerances import TOLERANCES
from .errors import GradingError
from .probes import reachable


def check_per_call(domain: Domain, function, device, _name) -> None:
    """Two calls in one graph, with different constants and inputs (the optional ones passed
    to the first call only), then one backward: each call's gradients are its own, and no
    attribute of the Function class changes."""
    low, high = per_call_constants(domain)
    calls = [domain.values(device, seed=seed, **constants)
             for seed, constants in ((11, low), (12, high))]
    for name in domain.optional:
        del calls[1][name]
    first, second = (fresh_leaves(values) for values in calls)
    before = class_state(function)
    outputs, copies = [], []
    for inputs in (first, second):  # after each call: the second may set back what was there
        outputs.append(floating_outputs(run_forward(function, domain.spec, inputs).output))
        copies.append([o.detach().clone() for o in outputs[-1]])
        check_class_state(domain, function, before, "forward")
    _outputs_kept(domain, function, calls, (first, second), outputs, copies)
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
    check_class_state(domain, function, before, "backward")
    try:
        _each_call_own(domain, first, second, low, high, pairs, grads)
    except GradingError as error:
        _gradients_kept(domain, grads, sum(isinstance(v, torch.Tensor) and v.requires_grad
                                                for v in first.values()), error)
        raise _shared_state(domain, function, calls, error) from error


def _outputs_kept(domain: Domain, function, calls: list, inputs: tuple, outputs: list,
                  copies: list) -> None:
    """After both calls, each call's outputs are still what it returned, and right: an output
    a later call changed is a buffer kept between calls (named); a wrong one otherwise is
    blamed on shared state only when each call alone is right."""
    name = domain.spec.name
    for k, (call, copy) in enumerate(zip(outputs, copies)):
        for got, was in zip(call, copy):
            if _changed(got.detach(), was):
                raise GradingError(
                    f"a later call changed an earlier call's output: each call must return "
                    f"fresh tensors ({name}'s output to the {'first' if k == 0 else 'second'} call "
                    "changed when the next call ran: a buffer kept between calls, and returned again, "
                    "or a view of it; allocate every output in the call that returns it)",
                    mistake=f"{name}/output-changed-by-later-call")
    for k, (values, call) in enumerate(zip(inputs, outputs)):
        expected, _ = reference_outputs(domain, values)
        for got, want in zip(call, expected):
            tolerance = domain.tolerances.get(got.dtype) or TOLERANCES.get(got.dtype)
            if tolerance is None or got.shape != want.shape:
                continue
            try:
                diagnose_values(f"{name}'s output", got.detach().to(torch.float64),
                                want.detach(), rtol=tolerance.rtol, atol=tolerance.atol,
                                inputs=values, computed_in=got.dtype, exercise_name=name)
            except GradingError as error:
                try:
                    for one in calls:
                        compare(domain, function, fresh_leaves(one))
                except GradingError:
                    raise error from None
                raise GradingError(
                    f"{name} is right for each call alone but not for two calls in one graph "
                    f"(the {'first' if k == 0 else 'second'} call's {error.hint}): one call "
                    "changed what the other computes with; keep each call's state on ctx, not "
                    "on the class or in a global", error.details,
                    mistake=f"{name}/state-shared-between-calls") from error


def _changed(now: torch.Tensor, was: torch.Tensor) -> bool:
    """Whether a tensor's shape or values (nan for nan) differ from its copy's."""
    return (now.shape != was.shape or not torch.equal(now.isnan(), was.isnan())
            or not torch.equal(now.nan_to_num(), was.nan_to_num()))


def _gradients_kept(domain: Domain, grads, per_call: int, error: GradingError) -> None:
    """A wrong gradient with two calls in one graph, named when backward returned the same
    memory to both calls (a gradient buffer kept between calls: the later backward wrote
    over the earlier's gradients)."""
    def memory(grad):
        return (grad.untyped_storage().data_ptr() if isinstance(grad, torch.Tensor)
                and grad.numel() else None)
    first = {memory(g) for g in grads[:per_call]} - {None}
    if first & {memory(g) for g in grads[per_call:]}:
        raise GradingError(
            f"backward returned the same gradient buffers for two calls: the later backward "
            f"wrote over the earlier call's gradients ({error.hint}); allocate every gradient "
            f"in the backward that returns it", error.details,
            mistake=f"{domain.spec.name}/gradient-buffer-shared-between-calls") from error


def per_call_constants(domain: Domain) -> tuple[dict, dict]:
    """The two calls' constants: the domain's ``per_call_constants``, else both ends of each
    range (the high end, not the last of ``also``: dim -2 and an ``also`` 0 are one dim of
    2-D x)."""
    if domain.per_call_constants is not None:
        return domain.per_call_constants
    low = {n: c.points()[0] for n, c in domain.constants.items()}
    high = {n: int(c.high) if c.integer else c.high for n, c in domain.constants.items()}
    return low, high


# how many tolerances apart a call's gradients must be from those the other call's constants
# give, and from zero, for the per-call check to tell the calls apart
FAR = 1000.0


def per_call_separation(domain: Domain, device) -> float:
    """How far apart, in tolerances, the per-call check's two calls are: for each call, the
    largest gap between its expected gradients and those the other call's constants give,
    and its largest expected gradient (a gradient of almost 0, as a one-hot softmax has, is
    almost 0 whatever constant scales it); the smallest of those over both calls and both
    measures. inf without constants."""
    low, high = per_call_constants(domain)
    if not low:
        return float("inf")
    tolerance = domain.tolerances.get(torch.float64) or TOLERANCES[torch.float64]
    separation = float("inf")
    for seed, mine, other in ((11, low, high), (12, high, low)):
        inputs = fresh_leaves(domain.values(device, seed=seed, **mine))
        expected, _ = reference_outputs(domain, inputs)
        generator = torch.Generator().manual_seed(7)
        grad_outputs = [torch.randn(e.shape, generator=generator, dtype=torch.float64).to(e)
                        for e in expected if e.requires_grad]
        truth = _reference_grads(domain, inputs, grad_outputs)
        crossed = _crossed_grads(domain, inputs, other, grad_outputs)
        largest = max((t.abs().max().item() for t in truth.values() if t.numel()), default=0.0)
        gap = max(((crossed[n] - truth[n]).abs().max().item() for n in truth if n in crossed
                   and crossed[n].shape == truth[n].shape and truth[n].numel()), default=0.0)
        separation = min(separation, largest / tolerance.atol,
                         gap / (tolerance.atol + tolerance.rtol * largest))
    return separation


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
                              computed_in=inputs[name].dtype, exercise_name=domain.spec.name,
                              grad_output=grad_outputs[0] if len(grad_outputs) == 1
                              else grad_outputs)


def _shared_state(domain: Domain, function, calls: list, error: GradingError) -> GradingError:
    """A failure with two calls in one graph, blamed on state the calls share only when each
    call alone, on the same inputs, is right (whatever the failure itself proved: a None
    gradient, a wrong shape, are then what the shared state caused)."""
    if str(error.mistake).endswith("/state-shared-between-calls"):
        return error
    try:
        for values in calls:
            compare(domain, function, fresh_leaves(values))
    except GradingError:
        return error
    return GradingError(
        f"{domain.spec.name} is right for each call alone but not for two calls in one graph "
        f"({error.hint}): one call's forward changed what the other's backward reads; keep "
        "what backward needs on ctx, one per call, not on the class or in a global",
        error.details, mistake=f"{domain.spec.name}/state-shared-between-calls")


def with_constants(inputs: dict, constants: dict) -> dict:
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
    crossed = on_cpu(with_constants(inputs, other))
    grad_outputs = [g.cpu() for g in grad_outputs]
    try:
        expected, _ = reference_outputs(domain, crossed)
        if [e.shape for e in expected if e.requires_grad] != [g.shape for g in grad_outputs]:
            return {}
        device = next(v.device for v in inputs.values() if isinstance(v, torch.Tensor))
        return {n: g.to(device) for n, g in _reference_grads(domain, crossed,
                                                             grad_outputs).items()}
    except (RuntimeError, IndexError, ValueError):
        return {}


def _reference_grads(domain: Domain, inputs: dict, grad_outputs) -> dict:
    expected, fresh = reference_outputs(domain, inputs)
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    grads = torch.autograd.grad([e for e in expected if e.requires_grad],
                                [fresh[n] for n in wanted],
                                [g.to(torch.float64) for g in grad_outputs], allow_unused=True)
    return {n: g if g is not None else torch.zeros_like(fresh[n]) for n, g in zip(wanted, grads)}


def class_state(function) -> dict:
    """Every attribute of the learner's classes in ``function``'s hierarchy, by identity."""
    if not isinstance(function, type):
        return {}
    return {(cls.__name__, key): value for cls in function.__mro__
            if not cls.__module__.startswith("torch") and cls is not object
            for key, value in vars(cls).items()}


def check_class_state(domain: Domain, function, before: dict, phase: str) -> None:
    after = class_state(function)
    changed = [key for key in after if key not in before or after[key] is not before[key]]
    if changed:
        owner, attribute = changed[0]
        keep = ("save it with ctx.save_for_backward" if any(reachable(after[changed[0]], ""))
                else f"keep it on ctx (ctx.{attribute} = ...)")
        raise GradingError(
            f"{domain.spec.name}.{phase} sets {owner}.{attribute}: a class attribute is shared by "
            f"every call, so a second call in the same graph overwrites the first's; {keep}",
            mistake=f"{domain.spec.name}/state-on-class")
