"""One catalogue of answers with known verdicts, shared by the tests and the benchmarks.

Each lesson has a package ``lessonNN_<name>/``, named as its grading package in
``autograder/exercises/``, whose modules are named by what they catalogue (one exercise's
answers, its domain slips, the builders they share); its ``__init__`` gathers them, in the
lesson's order, into two lists:

- ``UNUSUAL``: correct answers written differently from the lesson's solution (an einsum
  form, a ``torch.where`` form, ...). Each must pass ``self_check`` and ``grade``.
- ``MISTAKES``: wrong answers, each with the hint the grader must give (a phrase of its first
  line). A mistake the lesson names (``named=True``) must fail the visible ``self_check`` with
    that same hint, not only the hidden tests. One mistake of each exercise is marked
  ``nbgrader=True``: it is also handed in as a notebook and autograded by the real nbgrader,
  and must lose exactly its exercise, with its hint (the others are proven by ``self_check``
  and ``grade`` in-process; one each keeps a lesson's mistakes in one graded notebook).
  A ``gpu`` mistake breaks only what a contract grades on a GPU (a CUDA generator, say): a CPU
  grader passes it, as that contract says, so its test runs where a GPU is present.

Every entry's ``code`` is what a learner would type into the answer cell: it defines the
exercise under its own name and is self-contained, given ``PRELUDE``.

A lesson's ``contracts`` module holds its contracts as data (``clauses``), keyed by exercise:
``CLAUSES``, the bullets the lesson lists, and ``RULES``, the Function contract's rules, each
with the checks that enforce it and, for each check, the mistake here that witnesses it
(``contract_of`` reads them; tests/autograder/test_clauses.py and test_catalogue.py hold them
to the lesson and to grading). Grading never reads them.
"""

import functools
import importlib
import itertools
import linecache
import sys
import types
import pkgutil
from dataclasses import dataclass
from pathlib import Path

PRELUDE = ("import math\nimport torch\nimport torch.nn.functional as F\n"
           "from torch.autograd.function import once_differentiable\n")


@dataclass(frozen=True)
class Unusual:
    exercise: str
    name: str  # what is unusual about it, e.g. "einsum form"
    code: str

    def load(self):
        return load(self.exercise, self.code)


@dataclass(frozen=True)
class Mistake:
    exercise: str
    name: str  # the mistake in a few words, e.g. "wrong sign"
    hint: str  # a phrase the first line of the grader's message must contain
    code: str
    named: bool = False  # the lesson names this mistake: the self-check must catch it too
    nbgrader: bool = False  # also submitted through the real `nbgrader autograde` in the tests
    gpu: bool = False  # wrong on CUDA only (a contract's GPU bullet): graded as wrong on a GPU

    def load(self):
        return load(self.exercise, self.code)

    @property
    def answer_cell(self) -> str:
        """The mistake as a notebook's answer cell: ``PRELUDE`` and the code."""
        return PRELUDE + self.code.strip() + "\n"


# A cache keyed by the tensor object itself (its id, confirmed by a weakref): only the same
# tensor finds its entry, so a wrong answer built on it fails where it is meant to (a second call
# after an in-place step), never by chance where a freed tensor's memory or id is reused.
CACHED_BY_TENSOR = """import weakref
_cache = {}


def _cached(tensors, extra, make):
    key = tuple(id(t) for t in tensors) + extra
    hit = _cache.get(key)
    if hit is None or any(ref() is not t for ref, t in zip(hit[0], tensors)):
        hit = _cache[key] = ([weakref.ref(t) for t in tensors], make())
    return hit[1]
"""


def edit(code: str, *changes: tuple[str, str]) -> str:
    """An answer written as another with each ``(old, new)`` replaced; fails if ``old`` is
    missing, so an edit cannot silently stop applying when its base changes."""
    for old, new in changes:
        if old not in code:
            raise ValueError(f"catalogue edit: {old!r} is not in the answer")
        code = code.replace(old, new)
    return code


_LOADS = itertools.count()


def load(exercise: str, code: str):
    """Run an answer cell's ``code`` after ``PRELUDE``; return what it defines as ``exercise``."""
    number = next(_LOADS)
    # a module torch.compile can import by name, as it imports a function's module
    module = sys.modules[f"catalogue_{number}"] = types.ModuleType(f"catalogue_{number}")
    names: dict = vars(module)
    source, filename = PRELUDE + code, f"<catalogue {exercise} {number}>"
    # kept in linecache as IPython keeps a cell's source: @triton.jit reads a kernel's source,
    # and hints and tracebacks quote the answer's own lines
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), names)  # noqa: S102
    return names[exercise]


def _modules():
    """Each lesson's package, in the course's order."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.ispkg:
            yield importlib.import_module(f"{__name__}.{info.name}")


@functools.cache
def _contracts() -> list[types.ModuleType]:
    """Each lesson's ``contracts`` module (its exercises' clauses and rules, keyed by exercise)."""
    return [importlib.import_module(f"{package.__name__}.contracts") for package in _modules()
            if (Path(package.__file__).parent / "contracts.py").exists()]


def contract_of(exercise: str) -> tuple[tuple, dict[str, dict[str, str]]]:
    """``exercise``'s clauses (``clauses.Clause``: its contract's bullets, each with its checks
    and their witnesses) and its rules (the Function contract's rule key -> {check: witness}),
    from its lesson's ``contracts`` module; ``((), {})`` where it declares none."""
    for module in _contracts():
        if exercise in module.CLAUSES or exercise in module.RULES:
            return module.CLAUSES.get(exercise, ()), module.RULES.get(exercise, {})
    return (), {}


def unusual() -> list[Unusual]:
    """Every correct-but-unusual answer of every lesson."""
    return [entry for module in _modules() for entry in module.UNUSUAL]


def mistakes() -> list[Mistake]:
    """Every named wrong answer of every lesson."""
    return [entry for module in _modules() for entry in module.MISTAKES]


def mistake(exercise: str, name: str) -> Mistake:
    """The catalogued mistake ``name`` of ``exercise``."""
    for entry in mistakes():
        if (entry.exercise, entry.name) == (exercise, name):
            return entry
    raise KeyError(f"no catalogued mistake {name!r} for {exercise}")
