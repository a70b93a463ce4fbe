"""When a visible self-check fails, show the gradient-check explorer on the learner's Function,
below the hint (in a notebook, once the cell has shown its error): the whole panel where the
Jacobians or what backward returned show something, one note where they show nothing, and
nothing where the hint already says all they could (a named mistake, an error raised). Where
the exercise's gradient is by design not the derivative (a straight-through estimator: central
differences of forward are zero or spikes), the learner's Jacobian is shown beside the
reference's instead, and only where the two differ and the learner's Function can be
differentiated at the example inputs at all. The README's Learners section says exactly when
a view appears (tests/widgets/test_self_check.py keeps it in step)."""

import torch
from IPython.display import HTML, display

from autograder.errors import GradingError
from autograder.grading import SELF_CHECK_FAILURE_HOOKS
from autograder.mistakes import NOT_IMPLEMENTED, is_mistake_id, mistake_of

from .functions import is_function_class, input_names
from .gradcheck_explorer import compare_jacobians, explore_gradients, failure_html
from .gradcheck_probes import backward_notes
from .jacobian import jacobian_pairs, jacobian_view

# the self-check failures that are about gradients computed for inputs that need none: only
# under these does the explorer's note on unasked-for gradients belong
UNNEEDED_WORK = ("computes-unneeded-gradient", "computes-frozen-gradient", "gate-on-wrong-entry")


def offer_gradient_explorer(exercise, submission, error) -> None:
    """Analytic against numerical Jacobians at the exercise's example inputs, saying whether
    they show the failure the self-check found (``error``) or that it lies elsewhere; nothing
    under an unwritten stub, nor a note that they show nothing under a hint that names the
    mistake (a learner read it as noise, or as contradicting the hint)."""
    if (exercise.example is None or not is_function_class(submission)
            or mistake_of(error) == NOT_IMPLEMENTED):
        return
    inputs = exercise.example()
    reference = surrogate_reference(exercise, inputs)
    if reference is not None:
        offer_reference_view(submission, reference, inputs)
        return
    try:
        comparison = compare_jacobians(submission, *inputs)
    except Exception:  # the Function raised here too: the hint above already says so
        return
    notes = relevant_notes(backward_notes(submission, *inputs), error)
    if not notes and all(comparison.agrees(k) for k in range(len(comparison.names))):
        if not (is_mistake_id(mistake_of(error)) or raised_in_learners_code(error)):
            display(HTML(failure_html(comparison, [])))  # nothing to see in heatmaps: one line
        return
    display(explore_gradients(submission, *inputs, failure=failure_hint(error), notes=notes,
                              names=input_names(submission, len(inputs))))


def surrogate_reference(exercise, inputs: tuple):
    """The exercise's reference where its gradient at ``inputs`` is not the derivative of its
    forward (torch's gradcheck of the reference fails there), else None."""
    if exercise.domain is None:
        return None
    reference = exercise.domain.spec.reference
    leaves = [x.detach().requires_grad_() if isinstance(x, torch.Tensor)
              and x.is_floating_point() else x for x in inputs]
    try:
        derivative = torch.autograd.gradcheck(reference, leaves, raise_exception=False)
    except Exception:  # a reference that gradcheck cannot drive: keep central differences
        return None
    return None if derivative else reference


def offer_reference_view(submission, reference, inputs: tuple) -> None:
    """The learner's Jacobian beside the reference's, where some entry, shape or call differs:
    where they agree the failure lies in a case the hint above names. Nothing where the
    learner's Function cannot be differentiated at ``inputs`` at all (every input's Jacobian
    raised, as under a forward that returns an int64 one-hot): that is a follow-on of the
    failure the hint above names, and a view would only repeat an engine error beside a lone
    reference."""
    try:
        pairs = jacobian_pairs(submission, reference, *inputs)
    except Exception:  # the Function raised here too: the hint above already says so
        return
    if all(pair.error for pair in pairs):
        return
    if any(not pair.same_shape or pair.error or pair.mismatch.any() for pair in pairs):
        display(jacobian_view(submission, reference, *inputs))


def raised_in_learners_code(error) -> bool:
    """Did the failure come from an exception the learner's code raised (a second backward, a
    dtype it cannot take)? The hint quotes it; a note that Jacobians agree would only
    contradict it."""
    return not isinstance(error, GradingError) or error.__cause__ is not None


def relevant_notes(notes: list[str], error) -> list[str]:
    """``backward_notes`` without the one on gradients nobody asked for, unless the failure is
    about that work: most contracts allow it, and it would only distract."""
    mistake = getattr(error, "mistake", None) or ""
    mistakes = mistake.values() if isinstance(mistake, dict) else [mistake]
    if any(str(m).endswith(UNNEEDED_WORK) for m in mistakes):
        return notes
    return [note for note in notes if "nobody asked for" not in note]


def failure_hint(error) -> str:
    """The self-check's hint: the first line of its message."""
    return (str(error).splitlines() or [""])[0]


def install() -> None:
    """Register the explorer with ``autograder.self_check``, once."""
    if offer_gradient_explorer not in SELF_CHECK_FAILURE_HOOKS:
        SELF_CHECK_FAILURE_HOOKS.append(offer_gradient_explorer)
