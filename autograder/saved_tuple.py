"""A backward that binds ``ctx.saved_tensors`` to one name (``x = ctx.saved_tensors``) and
computes with it as if it were a tensor: the name holds the tuple of every tensor forward saved,
and arithmetic on it raises a TypeError or AttributeError whose words say nothing of the tuple
(``grad_output * 2 * x`` reads "only integer tensors of a single element can be converted to an
index"). Named only where both are seen: such an error raised by backward, and such a binding
in backward's own source."""

import ast
import inspect
import textwrap

from .errors import GradingError
from .spec import Spec

# what Python and torch say when a tuple meets arithmetic or a tensor method
_TUPLE_ERRORS = ("only integer tensors of a single element can be converted to an index",
                 "can't multiply sequence by non-int", "unsupported operand type(s)",
                 "'tuple' object has no attribute", "can only concatenate tuple",
                 "bad operand type for unary -: 'tuple'")


def tuple_bound_names(function) -> list[str]:
    """The names ``function.backward``'s source binds to ``ctx.saved_tensors`` itself, one name
    on the left of ``=``; [] where the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function.backward)))
    except (OSError, TypeError, SyntaxError, AttributeError):
        return []
    return [node.targets[0].id for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "saved_tensors"]


def explain_saved_tuple(spec: Spec, error: BaseException, function) -> GradingError | None:
    """The hint for ``error``, raised by ``function``'s backward, where it comes from a name
    bound to the tuple ``ctx.saved_tensors``; None where that is not what was seen."""
    message = str(error)
    if not isinstance(error, (TypeError, AttributeError)) or function is None or not any(
            words in message for words in _TUPLE_ERRORS):
        return None
    names = tuple_bound_names(function)
    if not names:
        return None
    first_line = message.strip().splitlines()[0] if message.strip() else ""
    return GradingError(
        f"{spec.name}.backward raised {type(error).__name__} ({first_line}) after "
        f"`{names[0]} = ctx.saved_tensors`: ctx.saved_tensors is a tuple, one entry per tensor "
        f"forward saved, so {names[0]} is that tuple, not a tensor",
        message, mistake=f"{spec.name}/saved-tensors-not-unpacked")
