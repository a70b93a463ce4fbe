"""Rule 6 of the Function contract: after forward, and after backward, the caller's world is as
the op itself leaves it.

- grad mode and the default dtype as they were (grad mode also from off, for a plain function);
- the random number generators (the CPU one, and CUDA's where the inputs are on a GPU) where the
  reference leaves them from the same start: an op that draws random numbers (a dropout inside
  a checkpointed block) advances them as the reference does, and one that replays them to
  recompute puts them back;
- every ``nn.Module`` and parameter the inputs reach (a module, a list of layers, a function's
  closure over one), and every tensor input, with its ``requires_grad`` and ``training`` as
  given. So that a call that unfreezes every layer, or puts every module in training mode,
  shows, every other parameter is frozen and every other module put in eval mode before the
  call (and all are put back after)."""

import functools
import types
from contextlib import contextmanager

import torch
from torch import nn

from .checks import run_forward
from .comparison import fresh_leaves, input_gradients, reference_outputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .narrowed import differentiable_outputs

SEED = 20260117  # the generators' start, the same for the reference's call and the learner's


def reachable_state(values: dict) -> tuple[dict, dict]:
    """({path: module}, {path: parameter}) of every nn.Module the inputs reach, in lists,
    tuples, dicts, partials, closures, defaults and bound methods, and their submodules and
    parameters; each object once, under the first path that reaches it."""
    modules, parameters, seen = {}, {}, set()

    def visit(value, path, depth):
        if id(value) in seen or depth > 6:
            return
        seen.add(id(value))
        if isinstance(value, nn.Module):
            for name, module in value.named_modules(prefix=path):
                modules.setdefault(name, module)
            for name, parameter in value.named_parameters(prefix=path):
                if all(parameter is not p for p in parameters.values()):
                    parameters[name] = parameter
            return
        if isinstance(value, torch.Tensor):
            return
        if isinstance(value, (list, tuple)):
            held = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        elif isinstance(value, dict):
            held = [(f"{path}[{key!r}]", item) for key, item in value.items()]
        elif isinstance(value, functools.partial):
            held = [(f"{path}.func", value.func), *((f"{path}.args[{i}]", a)
                                                    for i, a in enumerate(value.args))]
        elif isinstance(value, types.FunctionType):
            cells = zip(value.__code__.co_freevars, value.__closure__ or ())
            held = []
            for name, cell in cells:
                try:
                    held.append((f"{path}'s closure variable {name}", cell.cell_contents))
                except ValueError:  # a cell not filled yet
                    pass
            held += [(f"{path}.__defaults__", value.__defaults__ or ())]
        elif isinstance(value, types.MethodType):
            held = [(f"{path}.__self__", value.__self__)]
        else:
            held = []
        for where, item in held:
            visit(item, where, depth + 1)

    for name, value in values.items():
        visit(value, name, 0)
    return modules, parameters


@contextmanager
def varied(modules: dict, parameters: dict):
    """Every other parameter frozen and every other module in eval mode (each module's own
    flag, not its children's) inside the block; every flag as it was after it."""
    before = ({p: m.training for p, m in modules.items()},
              {p: t.requires_grad for p, t in parameters.items()})
    try:
        for i, module in enumerate(modules.values()):
            module.training = module.training if i % 2 == 0 else not module.training
        for i, parameter in enumerate(parameters.values()):
            if i % 2 == 1 and parameter.is_leaf:
                parameter.requires_grad_(not parameter.requires_grad)
        yield
    finally:
        for path, module in modules.items():
            module.training = before[0][path]
        for path, parameter in parameters.items():
            if parameter.is_leaf:
                parameter.requires_grad_(before[1][path])


@contextmanager
def restored():
    """Grad mode and the default dtype put back after the block, whatever the learner did."""
    grad_mode, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    try:
        yield
    finally:
        torch.set_grad_enabled(grad_mode)
        torch.set_default_dtype(dtype)


def _cuda(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.is_available()


def _generators(device: torch.device) -> dict:
    state = {"the CPU random number generator": torch.get_rng_state()}
    if _cuda(device):
        state["the CUDA random number generator"] = torch.cuda.get_rng_state(device)
    return state


def _seed(device: torch.device) -> None:
    torch.manual_seed(SEED)
    if _cuda(device):
        torch.cuda.manual_seed_all(SEED)


def _state(inputs: dict, modules: dict, parameters: dict) -> dict:
    """What the caller can see, by what it is called in a hint."""
    state = {"grad mode (torch.is_grad_enabled())": torch.is_grad_enabled(),
             "default dtype (torch.get_default_dtype())": torch.get_default_dtype()}
    state.update({f"{name}.requires_grad": value.requires_grad for name, value in inputs.items()
                  if isinstance(value, torch.Tensor) and value.is_leaf})
    state.update({f"{path}.training": module.training for path, module in modules.items()})
    state.update({f"{path}.requires_grad": p.requires_grad for path, p in parameters.items()})
    return state


def _changed(before: dict, after: dict) -> str:
    """What changed, the first three named ('' where nothing did)."""
    changed = [f"{what} from {before[what]} to {after[what]}" for what in before
               if not _same(before[what], after[what])]
    more = f" (and {len(changed) - 3} more)" if len(changed) > 3 else ""
    return "; ".join(changed[:3]) + more


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    return a == b


def check_caller_state(domain: Domain, function, device: torch.device) -> None:
    """One call at the domain's typical inputs, forward then backward (see the module's
    docstring), then one at each dtype the domain names (a default dtype set to the inputs'
    shows only at a dtype other than the default); a failure names what changed and when."""
    values = domain.values(device)
    modules, parameters = reachable_state(values)
    cuda = [device] if _cuda(device) else []
    name = domain.spec.name
    tried = ("one call at the typical inputs" + (
        ", every other parameter frozen and every other module in eval mode"
        if modules or parameters else ""))
    with varied(modules, parameters), torch.random.fork_rng(devices=cuda), restored():
        inputs = fresh_leaves(values)
        _seed(device)
        expected = _reference_generators(domain, inputs, device)
        _seed(device)
        _left_as_given(domain, function, fresh_leaves(values), modules, parameters, tried)
        got = _generators(device)
    for dtype in domain.dtypes:  # a default dtype switched to the inputs' shows at another
        typed = domain.values(device, dtype)
        modules, parameters = reachable_state(typed)
        with varied(modules, parameters), torch.random.fork_rng(devices=cuda), restored():
            _left_as_given(domain, function, fresh_leaves(typed), modules, parameters,
                           f"one call at {str(dtype).removeprefix('torch.')} inputs")
    if getattr(function, "plain", None) is not None:
        _grad_mode_left_off(name, function.plain, values, cuda)
    moved = [what for what in expected if not _same(expected[what], got[what])]
    if moved:
        raise GradingError(
            f"after {name}'s forward and backward, {moved[0]} is not where the op leaves it "
            f"(tried {tried}, the generators seeded alike before the op's call and before "
            f"yours): it draws random numbers the op does not draw, or does not put back a "
            f"state it replayed {rule_reference('caller')}",
            mistake=f"{name}/moves-random-state")


def _grad_mode_left_off(name: str, plain, values: dict, cuda: list) -> None:
    """One call of a plain function under torch.no_grad(): grad mode still off after it. The
    calls above run under enable_grad, where a call that switches it on changes nothing, and a
    Function's apply puts it back itself."""
    with torch.random.fork_rng(devices=cuda), restored(), torch.no_grad():
        try:
            plain(*fresh_leaves(values).values())
        except Exception:  # noqa: BLE001 - this call looks at grad mode only
            return
        left_on = torch.is_grad_enabled()
    if left_on:
        raise GradingError(
            f"{name}, called under torch.no_grad(), returned with grad mode on "
            f"(torch.is_grad_enabled() True after it): it switched grad mode on for its caller "
            f"and did not put it back, so the caller's next ops record a graph "
            f"{rule_reference('caller')}", mistake=f"{name}/changes-caller-state")


def _left_as_given(domain: Domain, function, inputs: dict, modules: dict, parameters: dict,
                   tried: str) -> None:
    """Forward, then backward: after each, the caller's state as it was before the call."""
    name = domain.spec.name
    before = _state(inputs, modules, parameters)
    forward = run_forward(function, domain.spec, inputs)
    changed = _changed(before, _state(inputs, modules, parameters))
    if changed:
        raise GradingError(
            f"{name}'s forward changed the caller's {changed} (tried {tried}) "
            f"{rule_reference('caller')}", mistake=f"{name}/changes-caller-state")
    outputs = differentiable_outputs(forward.output)
    if outputs:
        generator = grad_output_generator(5)
        grad_outputs = [torch.randn(o.shape, generator=generator,
                                    dtype=torch.float64).to(o) for o in outputs]
        input_gradients(domain, forward.output, outputs, inputs, grad_outputs)
    changed = _changed(before, _state(inputs, modules, parameters))
    if changed:
        raise GradingError(
            f"{name}'s backward changed the caller's {changed} (tried {tried}) "
            f"{rule_reference('caller')}", mistake=f"{name}/changes-caller-state")


def _reference_generators(domain: Domain, inputs: dict, device: torch.device) -> dict:
    """Where the reference's forward and backward leave the generators, from the seeded start."""
    expected, fresh = reference_outputs(domain, inputs)
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    differentiable = [e for e in expected if e.requires_grad]
    if wanted and differentiable:
        generator = grad_output_generator(5)
        torch.autograd.grad(differentiable, [fresh[n] for n in wanted],
                            [torch.randn(e.shape, generator=generator, dtype=torch.float64).to(e)
                             for e in differentiable], allow_unused=True)
    return _generators(device)
