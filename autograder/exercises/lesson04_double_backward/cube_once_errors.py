"""CubeOnce's failures in the course's words: a backward that fails only under create_graph=True
(the scratch cell and the Jacobian view run a plain .backward()), and a NumPy array returned
where the engine wants a tensor."""

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError
from ...exercise import sample
from ...explain import _explain_runtime_error


def _create_graph_error(marked: bool, spec: Spec, error: RuntimeError, inputs) -> GradingError:
    """A backward that passed a plain .backward() but raised under create_graph=True: say so
    first, since the scratch cell and the Jacobian view ran it without create_graph."""
    explained = _explain_runtime_error(spec, "backward", error, inputs)
    first = str(error).splitlines()[0]
    when = (f"{spec.name}.backward raised RuntimeError only when run with create_graph=True "
            "(the first backward of a second-order check), never in a plain .backward(): with "
            "create_graph=True grad mode is on inside backward (a plain .backward() turns it "
            "off), so what it computes from the saved x records a graph")
    if not marked and ("once_differentiable" in first or "differentiat" in first.lower()):
        return GradingError(
            f"{spec.name}.backward is not marked @once_differentiable: it raised its own error "
            f"under create_graph=True (\"{first}\"), and raising an error yourself is not the "
            "mark; the mark lets the first derivative come out and raises only when that "
            "derivative is differentiated: where does "
            "the decorator go, on a backward that already carries @staticmethod?",
            str(error), mistake=f"{spec.name}/not-once-differentiable")
    if "numpy() on Tensor that requires grad" in first:
        return GradingError(
            f"{when}, and x.numpy() refuses it (\"{first}\")"
            + ("" if marked else ": your backward is not marked @once_differentiable")
            + "; what does the mark change about grad mode inside backward?",
            str(error), mistake=f"{spec.name}/numpy-under-create-graph")
    return GradingError(f"{when}: {explained.hint}", explained.details,
                        mistake=explained.mistake)


_NUMPY_SAID = "expected Variable or None (got numpy.ndarray)"


def _numpy_returned(error: GradingError) -> GradingError:
    """The engine's "expected Variable or None (got numpy.ndarray)" in the course's words."""
    said = _NUMPY_SAID
    return GradingError(
        "CubeOnce.backward returned a NumPy array where autograd needs a tensor (or None) for "
        f"each input: PyTorch's words for it are \"{said}\"; which line of your backward "
        "hands back NumPy's result as it is?", error.details, error.case,
        mistake="CubeOnce/returns-numpy-array")


def numpy_return_named(checks) -> None:
    """Run ``checks``, naming the engine's NumPy-array complaint in the course's words."""
    try:
        checks()
    except GradingError as error:
        if _NUMPY_SAID not in str(error) or "returned a NumPy array" in error.hint:
            raise
        raise _numpy_returned(error) from error


def check_zero_dim(function, spec: Spec, device) -> None:
    """A 0-d x: NumPy arithmetic on a 0-d array returns a NumPy scalar, not an array."""
    try:
        check_values_and_gradients(function, spec, {"x": sample((), device, seed=9)})
    except TypeError as error:
        if "expected np.ndarray" not in str(error):  # only torch.from_numpy says this
            raise
        raise GradingError(
            f"with a 0-d x, {spec.name} raised TypeError: {str(error).splitlines()[0]}: "
            "torch.from_numpy takes NumPy arrays only; what does NumPy arithmetic on a 0-d "
            "array return? (print its type for a 0-d x)", str(error),
            mistake=f"{spec.name}/from-numpy-on-a-scalar") from error
