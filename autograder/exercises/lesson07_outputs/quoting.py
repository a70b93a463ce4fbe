"""Lesson 07: an error the learner's code raises inside a checked case, quoted in the hint's
first line with the inputs that raised it; a .view of a tensor that is not contiguous named
there with the learner's line."""

import linecache
import re
from contextlib import contextmanager

import torch

from ...checks import Spec, case
from ...errors import GradingError


def _quoted(error: BaseException) -> str:
    """``IndexError: tuple index out of range``: an error's type and first line."""
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}".rstrip(": ")


def _phase(error: BaseException) -> str:
    """``.backward`` or ``.forward``: the learner's method the error came out of, if any, and
    the line of it that raised: ``.backward raised ... at `n = idx.shape[-1]` (line 13)``
    is built from the two parts (``_where``)."""
    phase, traceback = "", error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name in ("forward", "backward"):
            phase = f".{traceback.tb_frame.f_code.co_name}"
        traceback = traceback.tb_next
    return phase


def _where(error: BaseException) -> str:
    """`` at `line` (line N)``: the learner's line in forward or backward that raised, as the
    view hint quotes it; empty where no such line is found."""
    frame, lineno, traceback = None, 0, error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name in ("forward", "backward"):
            frame, lineno = traceback.tb_frame, traceback.tb_lineno
        traceback = traceback.tb_next
    line = linecache.getline(frame.f_code.co_filename, lineno).strip() if frame else ""
    return f" at `{line}` (line {lineno})" if line else ""


def _view_hint(error: GradingError) -> GradingError:
    """A quoted "view size is not compatible" (torch's own first line says only "use
    .reshape"), with the learner's line that raised it and the tensor it viewed that is not
    contiguous there (grad_values, a transposed x), all in the first line; else ``error``."""
    cause = error.__cause__
    if not isinstance(cause, RuntimeError) or "view size is not compatible" not in str(cause):
        return error
    frame, lineno, traceback = None, 0, cause.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name in ("forward", "backward"):
            frame, lineno = traceback.tb_frame, traceback.tb_lineno
        traceback = traceback.tb_next
    if frame is None:
        return error
    line = linecache.getline(frame.f_code.co_filename, lineno).strip()
    viewed = [name for name, value in frame.f_locals.items()
              if isinstance(value, torch.Tensor) and not value.is_contiguous()
              and re.search(rf"(?<![\w.]){re.escape(name)}\.view\(", line)]
    if not line or not viewed:
        return error
    where = f"`{line}` in {frame.f_code.co_name} (line {lineno})"
    return GradingError(
        f"{error.hint.rstrip('.')}; {where} views {viewed[0]}, which is not contiguous here "
        "(the contract allows that), and .view only relabels memory already laid out as the "
        "new shape",
        error.details, mistake=error.mistake)


@contextmanager
def quoting_case(spec: Spec, description: str):
    """``case``, with any other error the learner's code raises in the block (an IndexError on
    a 0-d x, a ValueError of its own) quoted as a hint, so that its first line names the inputs
    too; the category stays ``raised:<Type>`` (``autograder.mistakes``). A NotImplementedError
    with a message (torch's, for an op it lacks for a dtype) is quoted too; the stub's is bare. A .view of a tensor
    that is not contiguous is named, with its line (``_view_hint``)."""
    try:
        with case(description):
            try:
                yield
            except GradingError as error:
                hinted = _view_hint(error)
                if hinted is error:
                    raise
                raise hinted from error.__cause__
            except Exception as error:  # the learner's code may raise anything
                if isinstance(error, NotImplementedError) and not str(error):
                    raise  # the stub's bare NotImplementedError: not written yet
                raise GradingError(f"{spec.name}{_phase(error)} raised {_quoted(error)}"
                                   f"{_where(error)}", str(error)) from error
    except GradingError as error:  # a probe that names its own x (a long row): said once
        inner = error.__cause__
        if (isinstance(inner, GradingError) and " of shape " in description
                and inner.case.startswith(description.split(" of shape ")[0] + " of shape ")):
            raise inner from inner.__cause__
        raise
