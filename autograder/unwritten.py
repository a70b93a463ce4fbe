"""An unanswered exercise met outside its self-check, shown in one calm line.

A lesson's demo cells use the learner's Functions. While an answer cell still holds nbgrader's
stub, running one raises the stub's NotImplementedError through torch's frames: a red traceback
that reads as if the course were broken. In a notebook that error reads as one line naming the
exercise, as an unanswered self-check's does. The cell still fails (Run All, nbclient and
nbgrader see the error), and ``%tb`` shows the whole traceback.

A cell run before the cell that assigns a name it reads (a comparison before its prediction)
fails the same way: one line that names the variable and the way out, in place of a traceback.
"""

import linecache
import re
import sys

from .failure import _cell_name

STUB_LINE = "raise NotImplementedError()"  # nbgrader's stub, as grader.notebook_format writes it


_DEFINED = re.compile(r"(?:class|def)\s+(\w+)")  # a definition at a cell's top level


def cell_exercise(lines: list[str], lineno: int) -> str | None:
    """The exercise an answer cell's top-level stub line ``lineno`` (1-based) belongs to: the
    last class or function the cell defines above it (CubeOnce's cell leaves the stub's
    ``raise`` under the class). None where the cell defines none."""
    names = [match[1] for line in lines[:lineno - 1] if (match := _DEFINED.match(line))]
    return names[-1] if names else None


def unwritten_exercise(error: BaseException, shell) -> tuple[str, bool] | None:
    """The class or function whose stub raised ``error``, and whether the stub's line runs in
    its own answer cell (the ``raise`` an exercise leaves under its class) rather than in a
    method a later cell calls: its innermost frame is a notebook cell's
    ``raise NotImplementedError()``. None for any other NotImplementedError."""
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
    if code.co_name == "<module>":  # the cell's own top level: its answer cell
        name = cell_exercise(linecache.getlines(code.co_filename), traceback.tb_lineno)
        return None if name is None else (name, True)
    return code.co_qualname.split(".")[0], False  # MySigmoid.forward -> MySigmoid


def calm_line(name: str, in_answer_cell: bool = False) -> str:
    if in_answer_cell:
        return (f"{name}'s answer cell: the stub's raise NotImplementedError() under the class "
                "still runs. Write there what the exercise asks for, or delete it when your "
                "class is done, then run this cell again.")
    return (f"{name} is not written yet: this cell uses it, and its answer cell above still "
            "raises NotImplementedError. Write it, run that cell, then this one again.")


def unassigned_name(error: BaseException, shell) -> str | None:
    """The name a NameError reports, where it was read at a notebook cell's top level (a name
    inside a function's body is a bug there, whose traceback says where); None otherwise."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    if traceback is None or not isinstance(error, NameError) or error.name is None:
        return None
    code = traceback.tb_frame.f_code
    if code.co_name != "<module>" or _cell_name(code.co_filename, shell) is None:
        return None
    return error.name


def unassigned_line(name: str) -> str:
    return (f"{name} is not defined yet: if a cell above this one assigns it (a prediction, "
            "say), run that cell first (Run > Run All Above Selected Cell); if none does, check "
            "the spelling.")


def _show(shell, etype, value, traceback, tb_offset=None) -> list[str]:
    """IPython's custom handler: show the error as IPython would, but an unwritten stub's as
    ``calm_line`` (a handler shows what it returns itself)."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, traceback  # for %tb
    render = getattr(value, "_render_traceback_", None)
    unwritten = unwritten_exercise(value, shell) if render is None else None
    unassigned = unassigned_name(value, shell) if render is None else None
    if render is not None:  # a self-check's failure renders itself (autograder.failure)
        shown = render()
    elif unwritten is not None:
        shown = [calm_line(*unwritten)]
    elif unassigned is not None:
        shown = [unassigned_line(unassigned)]
    else:
        shown = shell.InteractiveTB.structured_traceback(etype, value, traceback, tb_offset)
    shell._showtraceback(etype, value, shown)
    return shown


def show_unwritten_calmly() -> None:
    """In IPython, show an unanswered exercise's NotImplementedError as ``calm_line`` and a
    name read before its cell ran as ``unassigned_line``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NotImplementedError, NameError), _show)
