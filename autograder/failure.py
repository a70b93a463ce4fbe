"""How a failed self-check reads in a notebook: the hint first, in a few lines.

IPython shows an exception through its ``_render_traceback_`` when it has one. A failed
self-check gets one on the exception object itself, so its type (what ``Run All``, nbclient and
nbgrader see) and its message (nbgrader's evalue: the hint, then the details) stay what they
were. The short form names the exercise and the case (the inputs it was tried with), then the
hint; below it the details the hint does not already say, in a few lines (the numbers, the
grad_output), then the learner's own lines where the error was raised in their code, and
says how to get the rest where there is more to get. It renders once: ``%tb`` afterwards
finds no renderer and shows IPython's traceback, chained causes and details included, with the
grading library's and torch's frames left out: the cell that called the self-check, then the
learner's own code.
"""

import copy
import html
import linecache
import os
import re
import sys
import sysconfig
import types

from .errors import GradingError, without_case
from .mistakes import raised_words

RED_BOLD, RESET = "\x1b[1;31m", "\x1b[0m"
FULL_TRACEBACK = "Full traceback: run %tb in a new cell."
MORE_DETAIL = "All the details: run %tb in a new cell."
MORE_DETAIL_AND_TRACEBACK = "All the details and the full traceback: run %tb in a new cell."
MAX_LEARNER_FRAMES = 3
DETAIL_LABEL = "  Details: "
MAX_DETAIL_LINES, MAX_DETAIL_WIDTH = 5, 500  # a few lines (a row of numbers each), not a page
SHOWN_WIDTH = 100  # visible characters a shown line takes before it breaks between words
CODE_INDENT = " " * 6  # a line of the learner's code, shown as it is
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Code that is not the learner's: this library, torch, IPython and the standard library.
_GRADING_DIR = os.path.realpath(os.path.dirname(__file__)) + os.sep
_LIBRARY_DIRS = (_GRADING_DIR, *{os.path.realpath(sysconfig.get_paths()[key]) + os.sep
                                 for key in ("stdlib", "platstdlib", "purelib", "platlib")})


def headline(name: str, error: BaseException) -> str:
    """The hint, without its case: what the learner should look at first."""
    if isinstance(error, GradingError):
        return without_case(error.hint, error.case)
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, NotImplementedError) and not text:
        return f"{name} is not implemented yet: its stub still raises NotImplementedError"
    return raised_words(name, error) + (f": {text}" if text else "")


def _is_library(filename: str, directories: tuple | str = _LIBRARY_DIRS) -> bool:
    return os.path.realpath(filename).startswith(directories)


def _cell_name(filename: str, shell) -> str | None:
    """``Cell In[3]`` for a notebook cell's code, None for anything else IPython compiled."""
    format_code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = format_code_name(filename) if format_code_name is not None else None
    return f"{label[0]} {label[1]}" if label else None


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from (or during), outermost first."""
    chain = []
    while error is not None:
        chain.append(error)  # a link back into the chain (`raise e from e`) leads nowhere new
        error = next((link for link in (error.__cause__, error.__context__)
                      if link is not None and all(link is not seen for seen in chain)), None)
    return chain


def _own_frames(exception: BaseException, shell=None) -> list[tuple[str, int, str, str]]:
    """(where, line, function, source) of the learner's frames in ``exception``'s own
    traceback that the grading library called, innermost last."""
    frames, below_grading = [], False
    for code, line in ((tb.tb_frame.f_code, tb.tb_lineno)
                       for tb in _walk(exception.__traceback__)):
        where = _cell_name(code.co_filename, shell)
        library = where is None and (code.co_filename.startswith("<")
                                     or _is_library(code.co_filename))
        if below_grading and not library:
            source = linecache.getline(code.co_filename, line).strip()
            frames.append((where or code.co_filename, line, code.co_name, source))
        below_grading = below_grading or _is_library(code.co_filename, _GRADING_DIR)
    return frames


def learner_frames(error: BaseException, shell=None) -> list[tuple[str, int, str, str]]:
    """(where, line, function, source) of the learner's own frames that the grading library
    called, innermost last, from the innermost exception of the chain that has any: where
    their code raised the error. [] when the grading library raised it."""
    for exception in reversed(_chain(error)):
        if frames := _own_frames(exception, shell):
            return frames[-MAX_LEARNER_FRAMES:]
    return []


def _adds_nothing(exception: BaseException, error: BaseException, shell=None) -> bool:
    """Does ``exception``, a link of ``error``'s chain, only repeat it: a GradingError raised
    again with its case (``checks.case``), or an error of torch's or the library's that raised
    in none of the learner's code and whose words ``error``'s hint or details quote?"""
    if isinstance(exception, GradingError):
        return exception.hint in str(error)
    said = str(exception).strip()
    return not _own_frames(exception, shell) and bool(said) and said.splitlines()[0] in str(error)


def said_once(error: BaseException, shell=None) -> BaseException:
    """What ``%tb`` shows of a failed self-check's ``error``: a copy whose chain holds each
    error once, the links that add nothing left out (a cause raised in the learner's code
    stays, with their frames); ``error`` itself is unchanged, for whatever reads its chain.
    Any other error is itself."""
    if not isinstance(error, GradingError):
        return error
    kept = [exception for exception in _chain(error)[1:]
            if not _adds_nothing(exception, error, shell)]
    shown = copy.copy(error)
    shown.__traceback__ = error.__traceback__
    shown.__cause__ = kept[0] if kept else None  # the learner's error, its own chain after it
    shown.__suppress_context__ = True
    return shown


def details(error: BaseException) -> tuple[list[str], bool]:
    """The lines of a GradingError's details that its hint does not already say (a hint that
    quotes the learner's error has it as its details too), at most ``MAX_DETAIL_LINES`` of at
    most ``MAX_DETAIL_WIDTH`` characters; and whether any was cut (``%tb`` has them all)."""
    if not isinstance(error, GradingError) or not error.details:
        return [], False
    new = [line.rstrip() for line in error.details.strip().splitlines()
           if line.strip() and line.strip().rstrip(".") not in error.hint]
    kept = [line if len(line) <= MAX_DETAIL_WIDTH else line[:MAX_DETAIL_WIDTH - 1] + "…"
            for line in new[:MAX_DETAIL_LINES]]
    return kept, kept != new


def _unwritten_stub(error: BaseException) -> bool:
    """Is ``error`` an untouched stub's bare NotImplementedError (nothing to read in %tb)?"""
    return isinstance(error, NotImplementedError) and not str(error).strip()


def summary(name: str, error: BaseException, shell=None) -> list[str]:
    """The lines a failed self-check shows, the hint in the first."""
    first = headline(name, error)
    # the case first, where the eye lands (a hint may run to three lines): what tells this
    # failure apart ('tried with grad_output not contiguous') must not come after the hint;
    # in brackets, 'tried with', so that it reads as the inputs, not as what is wrong
    case = (f" (tried with {error.case})" if isinstance(error, GradingError) and error.case
            and f"with {error.case}" not in first else "")
    lines = [f"{RED_BOLD}✗ {name} failed its self-check{case}:{RESET} {first}"]
    said, cut = details(error)
    lines += [(DETAIL_LABEL if i == 0 else " " * len(DETAIL_LABEL)) + line
              for i, line in enumerate(said)]
    frames = learner_frames(error, shell)
    # an untouched stub's frame is its own raise, not code the learner wrote: where to write
    where_said = "the stub to replace" if _unwritten_stub(error) else "in your code"
    for where, line, function, source in frames:
        lines.append(f"  {where_said}, {where}, line {line}, in {function}:")
        if source:
            lines.append(f"{CODE_INDENT}{source}")
    # %tb only where it shows more: the learner's own error, or details cut here; never
    # after an untouched stub (its traceback is the stub's raise) or a hint said in full
    if cut:
        lines.append(f"  {MORE_DETAIL_AND_TRACEBACK if frames else MORE_DETAIL}")
    elif frames and not _unwritten_stub(error):
        lines.append(f"  {FULL_TRACEBACK}")
    return lines


def wrapped(line: str, width: int = SHOWN_WIDTH) -> list[str]:
    """``line`` in pieces of at most ``width`` visible characters, broken between words, each
    piece after the first indented two spaces more than the line (JupyterLab breaks a long
    error line anywhere, even inside a word); lines of code are left as they are."""
    indent = line[:len(line) - len(line.lstrip(" "))]
    if len(_ANSI.sub("", line)) <= width or indent == CODE_INDENT:
        return [line]
    pieces, current = [], indent
    for word in line[len(indent):].split(" "):
        candidate = f"{current} {word}" if current.strip() else current + word
        if len(_ANSI.sub("", candidate)) > width and current.strip():
            pieces.append(current)
            current = indent + "  " + word
        else:
            current = candidate
    return pieces + [current]


def _learners_only(traceback, shell):
    """``traceback`` without the frames of the grading library, torch or the standard library."""
    kept = [tb for tb in _walk(traceback)
            if _cell_name(tb.tb_frame.f_code.co_filename, shell) is not None
            or not (tb.tb_frame.f_code.co_filename.startswith("<")
                    or _is_library(tb.tb_frame.f_code.co_filename))]
    rebuilt = None
    for tb in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return rebuilt


def _walk(traceback):
    while traceback is not None:
        yield traceback
        traceback = traceback.tb_next


def keep_learner_frames(error: BaseException, shell=None) -> None:
    """Leave only the learner's frames in ``error``'s traceback and its chain's, and in the
    traceback IPython's ``%tb`` shows next, each error of its chain once (``said_once``)."""
    shown = said_once(error, shell)
    for exception in _chain(error):
        exception.__traceback__ = _learners_only(exception.__traceback__, shell)
    if getattr(sys, "last_value", None) is error:
        shown.__traceback__ = error.__traceback__
        sys.last_value, sys.last_traceback = shown, error.__traceback__


def shorten(name: str, error: BaseException) -> None:
    """Give ``error`` a one-time short rendering in IPython (nothing changes elsewhere)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()

    def render_once() -> list[str]:
        vars(error).pop("_render_traceback_", None)  # %tb later: IPython's traceback
        lines = summary(name, error, shell)
        keep_learner_frames(error, shell)
        return [part for line in lines for part in wrapped(line)]

    try:
        error._render_traceback_ = render_once
    except (AttributeError, TypeError):  # an exception type that takes no attributes
        pass


# A pass as visible as a failure's red box: a green one, same weight (the colours of
# ``widgets.markup``'s "ok" note).
PASS_HTML = (
    '<div style="background:#edf7ed;color:#1e4620;border-left:4px solid #2e7d32;'
    'padding:6px 10px;margin:2px 0;font-family:var(--jp-ui-font-family,system-ui,sans-serif);'
    'font-size:var(--jp-content-font-size1,14px)"><b>✓ {message}.</b></div>')


def show_pass(message: str) -> None:
    """Show a passed self-check: a green box in a notebook, ``✓ message.`` as plain text
    (a terminal, a test, the notebook's text/plain copy)."""
    text = f"✓ {message}."
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = lambda: None  # noqa: E731
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        print(text)
        return
    from IPython.display import display

    display({"text/plain": text, "text/html": PASS_HTML.format(message=html.escape(message))},
            raw=True)
