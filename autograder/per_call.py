"""Two calls of a Function in one graph, on different inputs and then on the same input
tensors: each call's state kept on its own ctx (not in a global, not under a key the input
gives), and no attribute of the Function's class changed by forward or backward, in place
included (a dict on the class with a key added)."""

import torch

from .checks import run_forward
from .comparison import compare, floating_outputs, fresh_leaves, on_cpu, reference_outputs
from .diagnose import diagnose_gradient, diagnose_values
from .domain import Domain
from .tolerances import TOLERANCES
from .errors import GradingError
from .function_contract import rule_reference
from .class_state import changed, check_class_state, class_state


def check_per_call(domain: Domain, function, device, _name) -> None:
    """Two pairs of calls, each pair in one graph, both forwards before any backward: first
    on different inputs with different constants (the optional inputs passed to the first
    call only), then on the same input tensors with different constants (``_same_input_calls``).
    Each call's gradients are its own, and no attribute of the Function class changes, nor
    what a container or a tensor on the class holds."""
    low, high = per_call_constants(domain)
    calls = [domain.values(device, seed=seed, **constants)
             for seed, constants in ((11, low), (12, high))]
    for name in domain.optional:
        del calls[1][name]
    inputs = tuple(fresh_leaves(values) for values in calls)
    _two_calls(domain, function, calls, inputs, low, high, same_inputs=False)
    _two_calls(domain, function, *_same_input_calls(domain, device, low, high), same_inputs=True)


def _same_input_calls(domain: Domain, device, low: dict, high: dict) -> tuple:
    """(values, inputs, constants, constants) of two calls on the same input tensors: state kept
    outside ctx under a key the input gives (``id(x)``, in a global or a class's dict) is
    shared by every call on that input, which different inputs never show. The second call
    takes the other constants and the first call's tensors (the same objects) wherever the
    domain gives both constants the same values; where every tensor depends on the constants
    (x sampled away from a kink at lam), and where there are none, the two calls are the same
    call twice: a key the input gives then finds the same values (harmless), and only state
    one call consumes or accumulates for the other (a dict popped, a counter) tells."""
    values = domain.values(device, seed=11, **low)
    first = fresh_leaves(values)
    other = domain.values(device, seed=11, **high)
    shared = [n for n, v in values.items() if n not in low and isinstance(v, torch.Tensor)
              and isinstance(other.get(n), torch.Tensor) and v.shape == other[n].shape
              and v.dtype == other[n].dtype and torch.equal(v, other[n])]
    if not shared or not low:
        return [values, values], (first, dict(first)), {}, {}
    second = fresh_leaves(other)
    second.update({n: first[n] for n in shared})
    return [values, {**other, **{n: values[n] for n in shared}}], (first, second), low, high


def _two_calls(domain: Domain, function, calls: list, inputs: tuple, low: dict, high: dict, *,
               same_inputs: bool) -> None:
    """Forward on each of ``inputs`` in turn, then their backward: one backward for both calls,
    or, on the same input tensors (whose gradients would add up), one per call, the first
    call's first."""
    first, second = inputs
    before = class_state(function)
    outputs, copies = [], []
    for values in (first, second):  # after each call: the second may set back what was there
        outputs.append(floating_outputs(run_forward(function, domain.spec, values).output))
        copies.append([o.detach().clone() for o in outputs[-1]])
        check_class_state(domain, function, before, "forward")
    _outputs_kept(domain, function, calls, (first, second), outputs, copies, same_inputs)
    generator = torch.Generator().manual_seed(7)
    per_call = [[(o, torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o))
                 for o in call if o.requires_grad] for call in outputs]
    pairs = [pair for call in per_call for pair in call]
    wanted = [[v for v in values.values() if isinstance(v, torch.Tensor) and v.requires_grad]
              for values in (first, second)]
    if not pairs or not any(wanted):
        return
    try:
        if same_inputs:
            grads = [g for call, leaves in zip(per_call, wanted)
                     for g in torch.autograd.grad([o for o, _ in call], leaves,
                                                  [g for _, g in call], allow_unused=True)]
        else:
            grads = torch.autograd.grad([o for o, _ in pairs], wanted[0] + wanted[1],
                                        [g for _, g in pairs], allow_unused=True)
    except GradingError:
        raise
    except Exception as error:  # noqa: BLE001 - the learner's own (a KeyError from a dict)
        text = (str(error).strip().splitlines() or [""])[0]
        failure = GradingError(f"{domain.spec.name}.backward raised {type(error).__name__} "
                               f"with {_pair(same_inputs)}: {text}", str(error))
        raise _shared_state(domain, function, calls, failure, same_inputs,
                            _grad_outputs(per_call)) from error
    check_class_state(domain, function, before, "backward")
    try:
        _each_call_own(domain, first, second, low, high, pairs, grads, same_inputs)
    except GradingError as error:
        _gradients_kept(domain, grads, len(wanted[0]), error)
        raise _shared_state(domain, function, calls, error, same_inputs,
                            _grad_outputs(per_call)) from error


def _grad_outputs(per_call: list) -> list:
    """Each call's grad_outputs in the pair, to run that call alone with."""
    return [[g for _, g in call] for call in per_call]


def _pair(same_inputs: bool) -> str:
    return ("two calls on the same input tensors in one graph" if same_inputs
            else "two calls in one graph")


def _remedy(same_inputs: bool) -> str:
    """Where to keep what backward needs, and where not."""
    return ("state kept in a global or on the class under a key the input gives (id(x)) is "
            "shared by every call on that input: where can each call keep what its backward "
            "needs, its own?"
            if same_inputs else
            "state kept on the class or in a global is shared by every call: where can each call "
            "keep what its backward needs, its own?")


def _outputs_kept(domain: Domain, function, calls: list, inputs: tuple, outputs: list,
                  copies: list, same_inputs: bool = False) -> None:
    """After both calls, each call's outputs are still what it returned, and right: an output
    a later call changed is a buffer kept between calls (named); a wrong one otherwise is
    blamed on shared state only when each call alone is right."""
    name = domain.spec.name
    for k, (call, copy) in enumerate(zip(outputs, copies)):
        for got, was in zip(call, copy):
            if changed(got.detach(), was):
                raise GradingError(
                    f"a later call changed an earlier call's output: each call must return "
                    f"fresh tensors ({name}'s output to the {'first' if k == 0 else 'second'} call "
                    "changed when the next call ran: a buffer kept between calls, and returned again, "
                    "or a view of it; allocate every output in the call that returns it) "
                    f"{rule_reference('ctx')}",
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
                where = (" in a global or on the class under a key the input gives (id(x))"
                         if same_inputs else " on the class or in a global")
                raise GradingError(
                    f"{name} is right for each call alone but not for {_pair(same_inputs)} "
                    f"(the {'first' if k == 0 else 'second'} call's {error.hint}): one call "
                    f"changed what the other computes with, kept{where}: where can each call keep "
                    f"what its backward needs so that no other call sees it? {rule_reference('ctx')}",
                    error.details,
                    mistake=f"{name}/state-shared-between-calls") from error


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
            f"in the backward that returns it {rule_reference('ctx')}", error.details,
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


def _each_call_own(domain: Domain, first, second, low, high, pairs, grads,
                   same_inputs: bool = False) -> None:
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
                    f"{domain.spec.name}'s backward used another call's {names_}: with "
                    f"{_pair(same_inputs)}, the {'first' if k == 0 else 'second'} call's "
                    f"grad_{name} is the one the other call's {names_} gives; "
                    f"{_remedy(same_inputs)} {rule_reference('ctx')}",
                    mistake=f"{domain.spec.name}/state-shared-between-calls")
            diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor)
                              else got, truth[name], inputs=inputs,
                              computed_in=inputs[name].dtype, exercise_name=domain.spec.name,
                              grad_output=grad_outputs[0] if len(grad_outputs) == 1
                              else grad_outputs)


def _shared_state(domain: Domain, function, calls: list, error: GradingError,
                  same_inputs: bool = False, grad_outputs: list | None = None) -> GradingError:
    """A failure with two calls in one graph, blamed on state the calls share only when each
    call alone, on the same inputs and with the same grad_outputs as in the pair, is right
    (whatever the failure itself proved: a None gradient, a wrong shape, are then what the
    shared state caused); a call wrong alone keeps the pair's failure, unblamed."""
    if str(error.mistake).endswith("/state-shared-between-calls"):
        return error
    try:
        for values in calls:
            compare(domain, function, fresh_leaves(values))
        for values, given in zip(calls, grad_outputs or []):
            _alone(domain, function, values, given)
    except GradingError:
        return error
    except Exception:  # noqa: BLE001 - the learner's backward failing alone: not shared state
        return error
    return GradingError(
        f"{domain.spec.name} is right for each call alone but not for {_pair(same_inputs)} "
        f"({error.hint}): one call's forward changed what the other's backward reads; "
        f"{_remedy(same_inputs)} {rule_reference('ctx')}",
        error.details, mistake=f"{domain.spec.name}/state-shared-between-calls")


def _alone(domain: Domain, function, values: dict, grad_outputs: list) -> None:
    """One call alone, backward with ``grad_outputs``: its gradients against the reference."""
    inputs = fresh_leaves(values)
    outputs = [o for o in floating_outputs(run_forward(function, domain.spec, inputs).output)
               if o.requires_grad]
    names = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    if not outputs or not names or len(outputs) != len(grad_outputs):
        return
    grads = torch.autograd.grad(outputs, [inputs[n] for n in names], grad_outputs,
                                allow_unused=True)
    truth = _reference_grads(domain, inputs, grad_outputs)
    for name, got in zip(names, grads):
        diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor) else got,
                          truth[name], inputs=inputs, computed_in=inputs[name].dtype,
                          exercise_name=domain.spec.name)


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
