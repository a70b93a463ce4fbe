"""Rule 5 of the Function contract however forward is called: the inputs come back as given when
none of them needs a gradient (a data tensor, a frozen feature, or any input under
``torch.no_grad()``: forward then sees ``needs_input_grad`` all False alike) and when they are not
leaves (an earlier op's outputs). A forward that works in x's memory only where nothing will
differentiate it (``x.clamp_`` when ``not x.requires_grad``) passes every call a battery makes
on leaves that need a gradient.

Each way is tried on the typical inputs and on the same inputs grown (a forward that writes
into x only past some size); a forward that returns the input it wrote into, marked dirty
(``mark_dirty``, lesson 07), keeps its in-place contract. A call that raises is left to the
checks that name errors."""

import torch

from .checks import run_forward
from .comparison import fresh_leaves
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .linear_memory import grown
from .narrowed import floating_inputs

# (the call in words, inputs requiring grad, leaves)
WAYS = (("no input needing a gradient (requires_grad=False: data, a frozen feature)", False, True),
        ("inputs that are not leaves (an earlier op's outputs, as in a network)", True, False))


def _inputs(values: dict, requires_grad: bool, leaf: bool) -> dict:
    inputs = fresh_leaves(values)
    for name in floating_inputs(values):
        inputs[name] = inputs[name].detach().requires_grad_(requires_grad)
        if not leaf:
            inputs[name] = inputs[name] * 1.0
    return inputs


def check_inputs_kept(domain: Domain, function, device: torch.device) -> None:
    typical = domain.values(device)
    cases = [("", typical)] + [(f"; {how}", values) for how, values in grown(domain, typical)[:1]]
    for way, requires_grad, leaf in WAYS:
        for how, values in cases:
            inputs = _inputs(values, requires_grad, leaf)
            before = {name: (t._version, t.detach().clone()) for name, t in inputs.items()
                      if isinstance(t, torch.Tensor)}
            try:
                output = run_forward(function, domain.spec, inputs).output
            except GradingError as error:  # named, unless it followed a write
                _check_kept(domain, inputs, before, (), f"{way}{how}", error)
                raise
            except Exception:  # noqa: BLE001 - the checks that name errors say why
                return
            returned = output if isinstance(output, tuple) else (output,)
            _check_kept(domain, inputs, before, returned, f"{way}{how}")


def _check_kept(domain: Domain, inputs: dict, before: dict, returned: tuple, called: str,
                cause: Exception | None = None) -> None:
    for name, (version, was) in before.items():
        tensor = inputs[name]
        if any(tensor is out for out in returned):
            continue  # in place and returned, marked dirty: autograd hands back x itself
        if tensor._version != version or not torch.equal(tensor.detach(), was):
            raise GradingError(
                f"{domain.spec.name}.forward modified its input {name} in place when called "
                f"with {called} ({name} of shape {tuple(tensor.shape)}): inputs come back as "
                "given on every call, whether anything will differentiate them or not "
                f"{rule_reference('unwritten')}", mistake=f"{domain.spec.name}/writes-input"
            ) from cause
