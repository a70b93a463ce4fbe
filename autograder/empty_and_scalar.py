"""Rule 1 of the Function contract on the smallest shapes: an empty tensor and a 0-d one. A
forward that takes ``x.max()`` to choose a branch, or a backward that reshapes a gradient to a
row, is right on every typical input and raises on an empty ``x`` or a 0-d one, which torch's
own op takes.

The cases are derived from the domain's typical inputs: an empty batch (the leading dimension
cut to 0 where the inputs share it: what a filtered batch gives a model), and, where every
floating input has one shape (an elementwise op), each tensor input's first entry as a 0-d
tensor, in each dtype the exercise names: a 0-d input does not set the result's dtype against
a 0-d constant of another dtype (``torch.where(m, x, torch.tensor(0.0))`` turns a 0-d float16
x into float32), as it does against a tensor of any other shape. The float64 reference decides whether the op
takes a case (a reduction over nothing with no value, an index out of range: it raises or gives
nan, and the case is left out); each case is compared with it as the layouts are, and what
backward returns there keeps each input's dtype (rule 2: a guard such as
``torch.zeros(x.shape, device=x.device)`` on an empty batch returns float32 for float64)."""

import torch

from .comparison import compare, fresh_leaves, on_cpu, reference_outputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .narrowed import floating_inputs, shapes_of
from .returned_dtypes import dtypes_watched


def _takes(domain: Domain, values: dict) -> bool:
    """The reference gives finite floating outputs (empty ones included) on ``values``."""
    try:
        with torch.no_grad():
            outputs, _ = reference_outputs(domain, on_cpu(values))
    except Exception:  # noqa: BLE001 - the reference refuses the shape: not in the domain
        return False
    return bool(outputs) and all(bool(torch.isfinite(o).all()) for o in outputs)


def empty_batch(domain: Domain, values: dict) -> list[dict]:
    """``values`` with a batch of none: the leading dimension cut to 0 in every tensor input
    whose leading size is the first floating input's (a weight or a table keeps its rows),
    where the reference takes the result."""
    floating = [values[name] for name in floating_inputs(values) if values[name].dim() > 0]
    if not floating or floating[0].shape[0] == 0:
        return []
    batch = floating[0].shape[0]
    cut = {name: value[:0].clone() if isinstance(value, torch.Tensor) and value.dim() > 0
           and value.shape[0] == batch else value for name, value in values.items()}
    return [cut] if _takes(domain, cut) else []


def zero_dim(domain: Domain, values: dict) -> list[dict]:
    """``values`` with each tensor input's first entry as a 0-d tensor, where every floating
    input has one shape and the reference takes the result."""
    shapes = {tuple(values[name].shape) for name in floating_inputs(values)}
    if len(shapes) != 1 or not all(shapes) or 0 in next(iter(shapes)):
        return []
    scalar = {name: value.reshape(-1)[0].clone() if isinstance(value, torch.Tensor)
              and value.dim() > 0 else value for name, value in values.items()}
    return [scalar] if _takes(domain, scalar) else []


def empty_and_scalar_cases(domain: Domain, device: torch.device) -> list[tuple[str, dict]]:
    """(what the case is, its inputs): the empty batch, then the 0-d case, where the reference
    takes them."""
    values = domain.values(device)
    cases = []
    if domain.empty_batch:
        cases += [("an empty batch", cut) for cut in empty_batch(domain, values)]
    if domain.zero_dim and "dim" not in domain.constants:  # an op along a dim needs one
        cases += [("0-d inputs", scalar) for scalar in zero_dim(domain, values)]
        for dtype in domain.dtypes:  # a 0-d constant of another dtype promotes a 0-d input
            if dtype != torch.float64:
                kind = str(dtype).removeprefix("torch.")
                cases += [(f"0-d {kind} inputs", scalar) for scalar in
                          zero_dim(domain, domain.values(device, dtype=dtype))]
    return cases


def check_empty_and_scalar(domain: Domain, function, device: torch.device) -> None:
    """Each case's outputs and gradients against the reference; an error raised on a shape
    torch's op takes is named as a rule 1 failure with the shapes tried."""
    name = getattr(function, "__name__", domain.spec.name)
    for what, values in empty_and_scalar_cases(domain, device):
        tried = f"{what}: {shapes_of(values)}"
        with dtypes_watched(domain.spec.name, function, values) as watched:
            try:
                compare(domain, watched, fresh_leaves(values))
            except GradingError as error:
                raise GradingError(f"{error.hint} (tried {tried}) {rule_reference('values')}",
                                   error.details, mistake=error.mistake) from error
            except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
                message = (str(error).splitlines() or [""])[0]
                raise GradingError(
                    f"{name} raised {type(error).__name__} ({message}) on {tried}, which the op "
                    f"itself takes {rule_reference('values')}",
                    mistake=f"{domain.spec.name}/raises-on-"
                            f"{'empty' if 'empty' in what else '0-d'}") from error
