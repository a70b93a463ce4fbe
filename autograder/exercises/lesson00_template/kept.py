"""Lesson 00: whether backward can run twice on one graph (gradcheck runs it once per output
entry), and empty inputs, which 'any shape' includes. (Where backward finds what it needs,
ctx.saved_tensors and not a copy kept aside, is checked by shared/saved_reads.py.)"""

import inspect

import torch

from ...checks import (Spec, check_gradcheck, check_values_and_gradients, make_inputs,
                      run_forward)
from ...errors import GradingError
from ...function_contract import rule_reference
from ...mistakes import RAISED, mistake_of


def gradcheck_named(function, spec: Spec, values: dict) -> None:
    """check_gradcheck, last in a battery: an error the learner's code raises there, after every
    single backward passed, comes from gradcheck's repeated backward on one graph (once per
    output entry), or its inputs changed in place between calls: named so, not a bare KeyError."""
    try:
        check_gradcheck(function, spec, values)
    except (GradingError, NotImplementedError):
        raise
    except Exception as error:  # noqa: BLE001 - the learner's own error, named
        text = (str(error).strip().splitlines() or [""])[0]
        raise GradingError(
            f"{spec.name} raised {type(error).__name__} ({text}) inside gradcheck, after "
            "every other check passed: gradcheck calls backward again and again on one graph "
            "(once per output entry); does your backward use up something forward left (an "
            "entry popped from a dict, an attribute deleted)? ctx.saved_tensors can be read "
            "any number of times", str(error), mistake=f"{spec.name}/backward-runs-once"
        ) from error


def check_empty_shapes(function, spec: Spec, cases: list, what: str) -> None:
    """Values and gradients for each (values, description) of ``cases``, inputs with a size 0:
    an error the learner's code raises there comes after every non-empty shape passed, and is
    named so (a loop over the entries that joins them with torch.stack has nothing to join)."""
    for values, shapes in cases:
        try:
            check_values_and_gradients(function, spec, values)
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's error, named with its shape
            if isinstance(error, GradingError) and not mistake_of(error).startswith(RAISED):
                raise GradingError(error.hint, error.details, shapes,
                                   mistake=error.mistake) from error
            said = (error.hint if isinstance(error, GradingError) else
                    f"{spec.name} raised {type(error).__name__} with {shapes}: "
                    + (str(error).strip().splitlines() or [""])[0])
            raise GradingError(
                f"{said}. Every non-empty shape passed: the contract holds for {what} of any "
                "shape, an empty one (a size 0) included, whose gradient is an empty tensor; "
                "tensor operations (*, +, .sum) take an empty dimension, and a loop over one "
                "runs zero times, leaving nothing for torch.stack or torch.cat to join",
                getattr(error, "details", ""), mistake=f"{spec.name}/fails-on-empty-input"
            ) from error


def check_no_mutable_defaults(function, spec: Spec, values: dict) -> None:
    """A mutable default argument of forward (def forward(ctx, x, _last=[])) that one forward
    call changes is state every call shares, as a global is: named before backward reads it
    (under the grader's wrappers forward.__defaults__ is not the learner's, so reading it back
    raises a bare TypeError)."""
    own = inspect.unwrap(function.forward)
    defaults = [d for d in (own.__defaults__ or ()) + tuple((own.__kwdefaults__ or {}).values())
                if isinstance(d, (list, dict, set, bytearray))]
    if not defaults:
        return
    before = [repr(d) for d in defaults]
    try:
        run_forward(function, spec, make_inputs(values))
    except Exception:  # noqa: BLE001 - named by the checks that follow
        return
    if [repr(d) for d in defaults] != before:
        raise GradingError(
            f"{spec.name}.forward changed its own mutable default argument: a default such as "
            "[] or {} is made once, when the def runs, and every call shares it, as a global; "
            f"keep what backward needs on ctx, one per call {rule_reference('ctx')}",
            mistake=f"{spec.name}/state-in-default-argument")


def check_no_state_on_input_tensors(function, spec: Spec, values: dict) -> None:
    """An attribute forward hangs on an input tensor (x1._weights = ..., u.partner = v) is state
    every call on that tensor shares, and save_for_backward does not keep it: saved-tensor hooks
    (the grader runs under them) hand backward a tensor without it. Named before backward reads
    it, and named when backward never reads it (rule 4: nothing is kept on an input tensor)."""
    inputs = make_inputs(values)
    before = {name: set(vars(value)) for name, value in inputs.items()
              if isinstance(value, torch.Tensor)}
    run_forward(function, spec, inputs)
    for name, had in before.items():
        added = sorted(set(vars(inputs[name])) - had)
        if added:
            raise GradingError(
                f"{spec.name}.forward set {name}.{added[0]}, an attribute on its input {name}: "
                f"every call on {name} shares it (a second call made before the first one's "
                "backward overwrites it), and save_for_backward does not keep it (under "
                "saved-tensor hooks, as the grader runs, backward gets a tensor without it); "
                f"keep what backward needs on ctx, one per call {rule_reference('ctx')}",
                mistake=f"{spec.name}/state-on-input")
