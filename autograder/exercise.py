"""An exercise: one battery of checks, which the visible self-check and grading both run."""

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch

from .class_state import state_placed
from .devices import grading_devices
from .precision import precision_findings_last
from .domain import Domain
from .nesting import stopping_endless_backward
from .outside_ctx import state_watched
from .output_dtypes import check_output_dtypes
from .properties import check_domain
from .untouched import calls_watched, shares_memory


@dataclass(frozen=True)
class Exercise:
    name: str
    lesson: str
    battery: Callable[[object, torch.device], None]  # raises GradingError at the first failure
    example: Callable[[], tuple] | None = None  # small inputs for views of the learner's Function
    # the edge cases of the syllabus contract that the battery marks with contract.covers(...),
    # besides contract.EACH_INPUT_ALONE, which every battery runs
    contract: tuple[str, ...] = ()
    # what the contract lets the inputs be; the checks it implies run after the battery
    domain: Domain | None = None
    # what the battery and the domain's checks run within (lesson 13: Triton's interpreter
    # patching its language once per launch)
    within: Callable[[], AbstractContextManager] = nullcontext
    # probes run after the state watch, on each device: a rule broken only by answers every
    # other check passes, whose probe would otherwise pre-empt the cause another check names
    last: Callable[[object, torch.device], None] | None = None

    def run(self, submission) -> list[torch.device]:
        """The battery, then the checks its domain implies, on every device this machine grades
        on; returns those devices. A backward that starts itself without end fails the battery
        instead of hanging it; one that writes into grad_output or an input on any call fails it,
        and so does one whose globals or classes hold more after all the calls than before."""
        devices = grading_devices()
        with (stopping_endless_backward(), precision_findings_last(self.name),
              calls_watched(self.name, submission,
                            may_return_input=op_returns_input(self.domain)),
              state_placed(submission), state_watched(submission, self.name), self.within()):
            for device in devices:
                if self.domain is not None:  # rule 1's dtype, before any backward runs
                    check_output_dtypes(self.domain, submission, device)
                self.battery(submission, device)
                if self.domain is not None:
                    check_domain(self.domain, submission, device)
        if self.last is not None:
            with stopping_endless_backward(), self.within():
                for device in devices:
                    self.last(submission, device)
        return devices

    def passed_message(self, devices) -> str:
        """The green line, and what the contract promises on CUDA where no GPU ran it."""
        untried = (self.domain is not None and self.domain.cuda
                   and all(device.type != "cuda" for device in devices))
        message = passed_message(self.name, devices)
        return f"{message}; not exercised without a GPU: {self.domain.cuda}" if untried else message


def op_returns_input(domain: Domain | None) -> bool:
    """The op's reference returns one of its inputs as it is, or a view of one (an identity
    forward: GradientReversal's x), on the domain's own values."""
    if domain is None:
        return False
    values = domain.values(torch.device("cpu"))
    with torch.no_grad():
        outputs = domain.spec.reference(**values)
    return any(isinstance(output, torch.Tensor) and isinstance(value, torch.Tensor)
               and shares_memory(output, value)
               for output in (outputs if isinstance(outputs, tuple) else (outputs,))
               for value in values.values())


def passed_message(name: str, devices) -> str:
    """What a green self-check promises, in one line."""
    where = " and ".join(sorted({device.type.upper() for device in devices}, key=len, reverse=True))
    return f"{name} passes every check grading runs on {where}"


def sample(shape, device, *, seed=0, dtype=torch.float64, away_from_zero=0.0) -> torch.Tensor:
    """Seeded standard-normal values, optionally pushed at least ``away_from_zero`` off 0."""
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    if away_from_zero:
        values = values + away_from_zero * torch.where(values >= 0, 1.0, -1.0).to(dtype)
    return values.to(device)
