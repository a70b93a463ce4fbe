"""Lesson 04's probe for a backward that tests the wrong ``ctx.needs_input_grad`` index."""

import contextlib

from ...checks import make_inputs
from ...errors import GradingError
from ...probes import record_returned_gradients


def swapped_flags(function, values: dict) -> bool:
    """Whether, for each input alone requiring grad (two inputs), backward returns None for it
    and a gradient for the other: the two ``ctx.needs_input_grad`` indices swapped."""
    probe, calls = record_returned_gradients(function)
    for alone, name in enumerate(values):
        inputs = make_inputs(values, requires_grad={name})
        try:
            probe.apply(*inputs.values()).sum().backward()
        except Exception:  # the learner's code may raise anything: then nothing is proved
            return False
        if [g is None for g in (calls[-1] if calls else ())] != [alone == 0, alone == 1]:
            return False
    return True


@contextlib.contextmanager
def swapped_flags_named(function, values: dict):
    """A 'backward returned None for' failure is told the indices are swapped, when the probe
    proves it."""
    try:
        yield
    except GradingError as error:
        if "backward returned None for" in error.hint and swapped_flags(function, values):
            first, second = values
            owner = getattr(function, "__name__", "your Function")
            raise GradingError(
                f"{owner}'s backward tests the other input's flag: with {first} alone requiring "
                f"grad it returned None for {first} and a gradient for {second}, and the reverse with "
                f"{second} alone; ctx.needs_input_grad[0] is {first}'s, [1] is {second}'s",
                str(error)) from error
        raise
