"""Lesson 00: whether backward can run twice on one graph (gradcheck runs it once per output
entry), and empty inputs, which 'any shape' includes. (Where backward finds what it needs,
ctx.saved_tensors and not a copy kept aside, is checked by shared/saved_reads.py.)"""

from ...checks import Spec, check_gradcheck, check_values_and_gradients
from ...errors import GradingError
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
