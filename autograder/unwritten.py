"""An unanswered exercise met outside its self-check, shown in one calm line.

A lesson's demo cells use the learner's Functions. While an answer cell still holds nbgrader's
stub, running one raises the stub's NotImplementedError through torch's frames: a red traceback
that reads as if the course were broken. In a notebook that error reads as one line naming the
exercise, as an unanswered self-check's does. The cell still fails (Run All, nbclient and
nbgrader see the error), and ``%tb`` shows the whole traceback.
"""

import linecache
import sys

from .failure import _cell_name

STUB_LINE = "raise NotImplementedError()"  # nbgrader's stub, as grader.notebook_format writes it


def unwritten_exercise(error: BaseException, shell) -> str | None:
    """The class or function whose stub raised ``error``: its innermost frame is a notebook
    cell's ``raise NotImplementedError()``. None for any other NotImplementedError."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    if traceback is None:
        return None
    code = traceback.tb_frame.f_code
    if _cell_name(code.co_filename, shell) is None:
        return None
    if linecache.getline(code.co_filename, traceback.tb_lineno).strip() != STUB_LINE:
        return None
    return code.co_qualname.split(".")[0]  # MySigmoid.forward -> MySigmoid


def calm_line(name: str) -> str:
    return (f"{name} is not written yet: this cell uses it, and its answer cell above still "
            "raises NotImplementedError. Write it, run that cell, then this one again.")


def _show(shell, etype, value, traceback, tb_offset=None) -> list[str]:
    """IPython's custom handler: show the error as IPython would, but an unwritten stub's as
    ``calm_line`` (a handler shows what it returns itself)."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, traceback  # for %tb
    render = getattr(value, "_render_traceback_", None)
    name = unwritten_exercise(value, shell) if render is None else None
    if render is not None:  # a self-check's failure renders itself (autograder.failure)
        shown = render()
    elif name is not None:
        shown = [calm_line(name)]
    else:
        shown = shell.InteractiveTB.structured_traceback(etype, value, traceback, tb_offset)
    shell._showtraceback(etype, value, shown)
    return shown


def show_unwritten_calmly() -> None:
    """In IPython, show an unanswered exercise's NotImplementedError as ``calm_line``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NotImplementedError,), _show)
