"""How a cell's run ended, and the fault each ending costs the notebook, in words an instructor
and a learner can act on."""

import enum

from .faults import Fault
from .notebook_format import cell_label, error_output, is_test_cell

MEMORY_ERRORS = ("can't allocate memory", "out of memory", "Cannot allocate memory")


class Outcome(enum.Enum):
    """How one cell's run ended."""

    OK = "ran"
    ERROR = "raised an error"  # the learner's own error: fine, grading goes on
    TIMEOUT = "timed out and was interrupted"
    HUNG = "timed out and ignored the interrupt"
    DIED = "lost its kernel"
    MEMORY = "ran out of memory"

    @property
    def lost_kernel(self) -> bool:
        return self in (Outcome.HUNG, Outcome.DIED, Outcome.MEMORY)


def classify(outputs: list, interrupted: bool) -> Outcome:
    """The outcome of a cell that finished (``interrupted``: by the time limit)."""
    if interrupted:
        return Outcome.TIMEOUT
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if any(o.get("ename") in ("MemoryError", "OutOfMemoryError")
           or any(text in str(o.get("evalue", "")) for text in MEMORY_ERRORS) for o in errors):
        return Outcome.MEMORY
    return Outcome.ERROR if errors else Outcome.OK


def outcome_fault(outcome: Outcome, label: str, *, cell_timeout: int, notebook_seconds: int,
                  memory_limit_mb: int, out_of_time: bool, death: str) -> Fault | None:
    """The fault a cell's outcome costs (None for OK and the learner's own errors);
    ``out_of_time``: the notebook's budget was (nearly) used up; ``death``: how the kernel
    ended, in words."""
    if outcome in (Outcome.OK, Outcome.ERROR):
        return None
    if outcome in (Outcome.TIMEOUT, Outcome.HUNG) and out_of_time:
        return Fault("notebook-timeout", f"{label} was stopped when the notebook used up its "
                     f"{notebook_seconds} s", label)
    if outcome is Outcome.TIMEOUT:
        return Fault("timeout", f"{label} ran past the {cell_timeout} s limit and was "
                     "interrupted (an endless loop?)", label)
    if outcome is Outcome.HUNG:
        return Fault("timeout", f"{label} ran past the {cell_timeout} s limit and ignored the "
                     "interrupt: the kernel was restarted", label)
    if outcome is Outcome.MEMORY:
        return Fault("memory-limit", f"{label} ran out of memory (cap {memory_limit_mb} MiB): "
                     "the kernel was restarted", label)
    return Fault("kernel-died", f"the kernel {death} while {label} ran: it was restarted", label)


def out_of_time_faults(cells: list, index: int, notebook_seconds: int) -> list[Fault]:
    """The notebook's budget ran out before cell ``index``: it and every test after it."""
    label = cell_label(cells, index)
    return [Fault("notebook-timeout", f"the notebook used up its {notebook_seconds} s before "
                  f"{label}; that cell and the ones after it did not run", label)] + [
        Fault("notebook-timeout", "the notebook ran out of time before this test",
              cell_label(cells, later)) for later in range(index, len(cells))
        if is_test_cell(cells[later])]


def gave_up_faults(cells: list, failed: int, restarts: int) -> list[Fault]:
    """The kernel failed too often: grading stops after cell ``failed``."""
    return [Fault("kernel-died", f"the kernel was restarted {restarts} times; the cells after "
                  f"{cell_label(cells, failed)} did not run")] + [
        Fault("kernel-died", "not run: the kernel had failed too often", cell_label(cells, later))
        for later in range(failed + 1, len(cells)) if is_test_cell(cells[later])]


def out_of_memory_outputs(outputs: list, fault: Fault) -> list:
    """A cell that ran out of memory, as its feedback shows it: what it printed, then one error
    line, the cap and the allocation that failed, in place of a traceback whose frames are the
    grader's own files."""
    errors = [output for output in outputs if output.get("output_type") == "error"]
    failed = ""
    if errors:
        said = (str(errors[-1].get("evalue", "")).splitlines() or [""])[0]
        failed = f" ({errors[-1].get('ename', 'error')}: {said})" if said else ""
    return [output for output in outputs if output.get("output_type") != "error"] + [
        error_output("MemoryError", fault.message + failed)]


KERNEL_DIED = "KernelDied"  # the error shown under a cell whose kernel died while it ran


def died_outputs(outputs: list, death: str) -> list:
    """A cell whose kernel died while it ran (os._exit, a crash), as its feedback shows it: what
    it printed, then one error line saying so, as a cell that raised shows its error; without
    it the learner's page shows nothing under the cell (``death``: how the kernel ended)."""
    return [output for output in outputs if output.get("output_type") != "error"] + [
        error_output(KERNEL_DIED, f"Python stopped while this cell ran: the kernel {death}. It "
                     "was restarted, the cells before this one were run again, and grading went "
                     "on after this cell without what it would have defined")]
