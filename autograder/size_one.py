"""Rule 1 of the Function contract on dimensions of size 1: a backward that ``.squeeze()``s a
gradient, or a forward that reduces with ``.sum()`` where a size-1 dimension must stay, is right
on every typical input and wrong, or raises, where a dimension has one entry.

The cases are the domain's own (``Domain.size_one``) and those derived from its typical inputs
(``autograder.narrowed``: every dimension of one size cut to 1), each compared with the float64
reference as the layout cases are."""

import torch

from .comparison import compare, fresh_leaves
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .narrowed import narrowed, shapes_of
from .returned_dtypes import dtypes_watched
from .size_one_raises import SIZE_ONE_MISTAKE


def size_one_cases(domain: Domain, device: torch.device,
                   dtype: torch.dtype = torch.float64) -> list[dict]:
    """The inputs the check tries: the domain's declared ones, then the derived ones."""
    declared = domain.size_one(device, dtype) if domain.size_one is not None else []
    cases = [declared] if isinstance(declared, dict) else list(declared)
    if domain.size_one_derived:
        cases += narrowed(domain, domain.values(device, dtype=dtype), to=1)
    return cases


def check_size_one(domain: Domain, function, device: torch.device) -> None:
    """Each case's outputs and gradients against the reference; a failure names the shapes
    tried and ends its first line with rule 1's reference."""
    for values in size_one_cases(domain, device):
        tried = f"dimensions of size 1: {shapes_of(values)}"
        with dtypes_watched(domain.spec.name, function, values) as watched:
            try:
                compare(domain, watched, fresh_leaves(values))
            except GradingError as error:
                if (error.mistake or "").endswith(SIZE_ONE_MISTAKE):  # names shapes and rule
                    raise
                raise GradingError(f"{error.hint} (tried {tried}) {rule_reference('values')}",
                                   error.details, mistake=error.mistake) from error
