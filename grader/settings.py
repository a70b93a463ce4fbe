"""Every grading setting, declared once with its environment variable, default and meaning.

``Settings.from_environment()`` is read by the nbgrader configuration (``SealedExecute``'s
defaults), by ``make autograde`` (and sent with every job, since workers may be elsewhere) and by
the kernel manager (zygote on or off). Nothing else reads these variables.
"""

import os
from dataclasses import asdict, dataclass, fields


def _setting(default, variable: str, description: str):
    from dataclasses import field

    return field(default=default, metadata={"variable": variable, "help": description})


# seconds a kernel may take, once a cell's execute reply has come, to send the rest of its output
# and say it is idle (nbclient's iopub_timeout, 4 s by default: too short for a loaded machine)
IOPUB_TIMEOUT = 10


@dataclass(frozen=True)
class Settings:
    cell_timeout: int = _setting(120, "AUTOGRADER_CELL_TIMEOUT", "seconds one cell may run")
    notebook_timeout: int = _setting(
        0, "AUTOGRADER_NOTEBOOK_TIMEOUT",
        "seconds for one notebook, restarts and replays included (0: four cell timeouts)")
    memory_limit_mb: int = _setting(2048, "AUTOGRADER_MEMORY_LIMIT_MB",
                                    "memory cap per kernel in MiB (0: none)")
    sandbox: str = _setting("auto", "AUTOGRADER_SANDBOX",
                            "auto (sandbox when possible), required (refuse without), or off")
    zygote: bool = _setting(True, "AUTOGRADER_ZYGOTE", "fork kernels from a process that has "
                                                        "imported torch already (0: do not)")
    output_limit_kb: int = _setting(1024, "", "output kept per cell, in KiB")
    run_every_cell: bool = _setting(False, "AUTOGRADER_RUN_EVERY_CELL",
                                    "run also the demo cells grading does not need (1: do)")
    restart_limit: int = _setting(3, "", "kernel restarts allowed per notebook")

    def __post_init__(self):
        if self.sandbox not in ("auto", "required", "off"):
            raise ValueError(f"{_variable('sandbox')} must be auto, required or off, "
                             f"not {self.sandbox!r}")
        for name in ("cell_timeout", "notebook_timeout", "memory_limit_mb"):
            if getattr(self, name) < 0:
                raise ValueError(f"{_variable(name)} must be 0 or more, not {getattr(self, name)}")
        if self.cell_timeout == 0:
            raise ValueError(f"{_variable('cell_timeout')} must be at least 1 second")

    @property
    def notebook_seconds(self) -> int:
        """The notebook's time budget: its own setting, or four cell timeouts."""
        return self.notebook_timeout or 4 * self.cell_timeout

    @classmethod
    def from_environment(cls, environ=None) -> "Settings":
        """The defaults, overridden by whichever variables are set (and not empty)."""
        environ = os.environ if environ is None else environ
        given = {}
        for item in fields(cls):
            text = environ.get(item.metadata["variable"], "").strip() \
                if item.metadata["variable"] else ""
            if not text:
                continue
            if item.type in (bool, "bool"):
                given[item.name] = text != "0"
            elif item.type in (int, "int"):
                try:
                    given[item.name] = int(text)
                except ValueError:
                    raise ValueError(f"{item.metadata['variable']} must be a whole number, "
                                     f"not {text!r}") from None
            else:
                given[item.name] = text.lower()
        return cls(**given)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "Settings":
        return cls(**values)


def _variable(name: str) -> str:
    item = next(item for item in fields(Settings) if item.name == name)
    return item.metadata["variable"] or name


def described() -> list[tuple[str, object, str]]:
    """(variable, default, meaning) of every setting an environment variable controls."""
    return [(item.metadata["variable"], item.default, item.metadata["help"])
            for item in fields(Settings) if item.metadata["variable"]]
