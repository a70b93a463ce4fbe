"""Rule 1 of the Function contract at the arguments a shortcut fires on: forward returns a new
tensor whatever the arguments, so a shortcut that hands back an input, or a view of one, where
the arithmetic would leave it as it is (a factor of one, a term of zero:
``if (u == 1).all(): return v.unsqueeze(0)``) breaks it there and nowhere else.

Forward runs with every floating input all ones, then all zeros, on the typical shapes, and all
ones on those with dimensions cut to 1 (a single entry of one: ``u == [1.0]``); the calls'
watch (``autograder.untouched``) names an input or a view of one returned. Values this plain
may lie outside the domain (a division by a spread): a call that raises is left to the checks
that name errors."""

import torch

from .checks import run_forward
from .comparison import fresh_leaves
from .domain import Domain
from .errors import GradingError
from .narrowed import floating_inputs
from .size_one import size_one_cases
from .untouched import calls_described

FILLS = ((1.0, "ones"), (0.0, "zeros"))


def check_fresh_output(domain: Domain, function, device: torch.device) -> None:
    typical = domain.values(device)
    for values in [typical] + size_one_cases(domain, device):
        for fill, said in FILLS if values is typical else FILLS[:1]:
            plain = dict(values)
            for name in floating_inputs(values):
                plain[name] = torch.full_like(values[name], fill)
            try:
                with calls_described(f"every floating input all {said}"):
                    run_forward(function, domain.spec, fresh_leaves(plain))
            except (GradingError, RuntimeError, ValueError, TypeError, IndexError,
                    ZeroDivisionError):
                continue
