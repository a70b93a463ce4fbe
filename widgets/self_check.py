"""When a visible self-check fails, show the gradient-check explorer on the learner's Function,
below the hint (in a notebook, once the cell has shown its error)."""

from IPython.display import HTML, display

from autograder.grading import SELF_CHECK_FAILURE_HOOKS

from .functions import is_function_class
from .gradcheck_explorer import explore_gradients


def offer_gradient_explorer(exercise, submission, error) -> None:
    """Analytic against numerical Jacobians at the exercise's example inputs, saying whether
    they show the failure the self-check found (``error``) or that it lies elsewhere."""
    if exercise.example is None or not is_function_class(submission):
        return
    display(HTML(f"<b>{exercise.name}'s Jacobian</b>, from your backward beside central "
                 "differences of your forward, for small inputs."))
    display(explore_gradients(submission, *exercise.example(), failure=failure_hint(error)))


def failure_hint(error) -> str:
    """The self-check's hint: the first line of its message."""
    return (str(error).splitlines() or [""])[0]


def install() -> None:
    """Register the explorer with ``autograder.self_check``, once."""
    if offer_gradient_explorer not in SELF_CHECK_FAILURE_HOOKS:
        SELF_CHECK_FAILURE_HOOKS.append(offer_gradient_explorer)
