"""The domain an exercise's contract declares, as data.

A contract says more than its edge cases: which constants range over which interval, which
dtypes it accepts (and what it accumulates in), how large and how strided its inputs may be,
where ties are broken by a rule, where each row must be stable on its own, and what it promises
on CUDA. An exercise states those here; ``autograder.properties`` turns the statement into
checks, the same for every exercise, so that none depends on its author remembering them.
Each part carries the contract clause it stands for, and every check it generates names it.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .checks import Spec
from .tolerances import TOLERANCES, Tolerance  # noqa: F401 (the domain's vocabulary)

# a fraction of a range that no power of two, and no round number, lands on
OFF_GRID = 0.3711


@dataclass(frozen=True)
class Constant:
    """A constant argument (a Python number, or a 0-d tensor) ranging over ``[low, high]``."""

    low: float
    high: float
    clause: str
    integer: bool = False
    also: tuple = ()  # further points the contract cares about (a tiny magnitude, a zero)

    def points(self) -> tuple:
        """Both ends, a point between them off every power of two (on a log scale where the
        range spans orders of magnitude of one sign), and ``also``."""
        low, high = self.low, self.high
        if low > 0 and high / low > 100:
            inside = math.exp(math.log(low) + OFF_GRID * (math.log(high) - math.log(low)))
        else:
            inside = low + OFF_GRID * (high - low)
        if self.integer:
            return tuple(dict.fromkeys((int(low), round(inside), int(high), *self.also)))
        return low, inside, high, *self.also




@dataclass(frozen=True)
class Case:
    """Inputs an exercise builds for one property: ``values(device, dtype)`` -> the inputs in
    forward's order, checked against the reference within ``tolerance`` (the dtype's default
    when None)."""

    values: Callable[[torch.device, torch.dtype], dict]
    clause: str
    dtype: torch.dtype = torch.float64
    tolerance: Tolerance | None = None


LAYOUTS = ("transposed", "column slice", "expanded")
LAYOUT_CLAUSE = "inputs of any layout torch's own ops accept (strides other than the shape's)"
PER_CALL_CLAUSE = "ctx keeps each call's state: calls in one graph do not share it"
TWICE_CLAUSE = ("backward may run more than once on one graph (retain_graph=True, gradcheck, "
                "a Jacobian row by row): it leaves what forward saved as it was")
ONCE_CLAUSE = ("backward may refuse to run a second time on one graph (as reentrant checkpointing "
               "does: it frees the graph it rebuilds), but never gives other gradients")
DTYPE_CLAUSE = "each dtype the contract names, saved tensors included"
GRAD_OUTPUT_CLAUSE = ("grad_output of any layout autograd hands backward (a transposed or expanded "
                      "one: y.t() or .sum() downstream gives it)")
REQUIRES_GRAD_CLAUSE = ("any of the inputs may require grad, the others not: each gradient "
                        "asked for is right, and grad_output is left as it was")
OPTIONAL_NONE_CLAUSE = ("an optional input passed as None (apply(x, weight, None)) is an input: "
                        "backward returns a value for it, None")
# the Function contract's rules (autograder.function_contract), checked for every exercise after
# its own properties; each failure ends its first line with the rule's reference
LATE_REQUIRES_GRAD_CLAUSE = ("which gradients backward computes is fixed when forward runs "
                             "(ctx.needs_input_grad), whatever requires_grad says later")
NONE_PATHS_CLAUSE = ("None for every input that needs no gradient, on every path backward "
                     "takes: a grad_output of zeros and an empty batch included")
SIZE_ONE_CLAUSE = "any shape the op takes, dimensions of size 1 included"
CALLER_STATE_CLAUSE = ("the caller's grad mode, default dtype, random number generators, "
                       "modules and parameters left as the op itself leaves them")
DEFAULT_DEVICE_CLAUSE = ("every tensor made on the inputs' device, whatever the default "
                         "device is (device=x.device, or a *_like / new_* op)")
EMPTY_AND_SCALAR_CLAUSE = ("any shape the op takes, an empty tensor and a 0-d one included")
LINEAR_MEMORY_CLAUSE = ("backward holds a few tensors of its inputs' and outputs' size, never a "
                        "Jacobian built as a matrix")
RECOMPUTES_CLAUSE = ("backward recomputes forward and asks autograd for its gradient: the point "
                     "of recomputation (lesson 05)")
BY_HAND_CLAUSE = ("backward derives the gradient itself: no call into autograd, no built-in "
                  "*_backward op")
INPUTS_KEPT_CLAUSE = ("forward leaves its inputs as given however it is called: none of them "
                      "needing a gradient (under torch.no_grad() too), or not leaves")
FRESH_OUTPUT_CLAUSE = ("forward returns a new tensor whatever the arguments, never an input or "
                       "a view of one (a factor of one, a term of zero included)")
RULE_PROPERTIES = ("inputs kept", "late requires grad", "none on every path", "size one",
                   "empty and 0-d", "fresh output", "by hand", "linear memory", "caller state",
                   "default device")


@dataclass(frozen=True)
class Domain:
    """What the contract lets the inputs be.

    ``values(device, dtype=..., seed=..., **constants)`` builds a small, typical set of inputs
    in forward's order; a constant left out takes its default there. ``prepare`` turns a
    submission into something with ``.apply`` (an operator wrapped in ``Operator``); by
    default the submission must be a Function class."""

    spec: Spec
    values: Callable[..., dict]
    prepare: Callable | None = None
    constants: dict[str, Constant] = field(default_factory=dict)
    dtypes: tuple[torch.dtype, ...] = (torch.float64, torch.float32)
    dtype_clause: str = DTYPE_CLAUSE
    # the strided layouts tried; fewer only where the contract rules one out (say why in
    # layout_clause), on the inputs named in layout_inputs (None: every floating tensor input)
    layouts: tuple[str, ...] = LAYOUTS
    layout_inputs: tuple[str, ...] | None = None
    layout_clause: str = LAYOUT_CLAUSE
    # backward handed a non-contiguous grad_output (transposed, or a stride-2 slice for a 1-d
    # output; a 0-d output has one layout only): off only where the contract rules it out
    # (say why in grad_output_clause)
    strided_grad_output: bool = True
    grad_output_clause: str = GRAD_OUTPUT_CLAUSE
    per_call: bool = True
    # the two calls' constants in the per-call check, where the ends of a range do not tell
    # the calls apart (at a low tau a softmax is one-hot: its gradient is 0 whatever tau);
    # None: both ends. per_call.per_call_separation measures how far apart they are
    per_call_constants: tuple[dict, dict] | None = None
    # backward builds and frees a graph of its own (reentrant checkpointing): a second backward
    # on one graph may raise, and is judged only when it runs
    second_backward_may_raise: bool = False
    # a dtype's bound where the contract allows a small constant (clipping's eps, as torch's
    # own clip_grad_norm_ adds): float64 still fails a float32 step that every value shows
    tolerances: dict[torch.dtype, Tolerance] = field(default_factory=dict)
    # trailing inputs the contract lets be left out (an optional bias): the per-call check's
    # second call leaves them out, so state one call keeps for the other (a global flag) shows
    optional: tuple[str, ...] = ()
    # compute (and accumulation) dtype of each input dtype that computes wider than it stores
    accumulates: dict[torch.dtype, torch.dtype] = field(default_factory=dict)
    accumulation: Case | None = None  # where accumulating in the input dtype measurably fails
    large: Case | None = None  # past an implementation's limits, where "any shape" says so
    ties: Case | None = None  # values one ulp apart, where ties are broken by a rule
    rows_apart: Case | None = None  # rows of far-apart magnitude, where each row must be stable
    cuda: str = ""  # CUDA behaviour the contract names, said when a run could not exercise it
    # rule 1's dimensions of size 1: size_one(device, dtype) gives inputs with some (a dict, or
    # a list of dicts), checked against the reference as the layouts are; besides them, unless
    # size_one_derived is False (say why in size_one_clause), the typical inputs with every
    # dimension of one size cut to 1, one size at a time, where the reference accepts that
    size_one: Callable[[torch.device, torch.dtype], dict | list] | None = None
    size_one_derived: bool = True
    size_one_clause: str = SIZE_ONE_CLAUSE
    # rule 2's empty batch for the None-on-every-path check: the typical inputs with one size
    # cut to 0 where the reference accepts that; False where the contract rules it out
    empty_batch: bool = True
    # rule 1's 0-d case: each tensor input's first entry, where every floating input has one
    # shape; False only where the contract rules it out (say why in empty_and_scalar_clause)
    zero_dim: bool = True
    empty_and_scalar_clause: str = EMPTY_AND_SCALAR_CLAUSE
    # rule 3's memory: backward on the typical inputs grown stays linear in their bytes; False
    # only where the exercise's own contract allows more (say why in linear_memory_clause)
    linear_memory: bool = True
    # rule 3's own derivation: False only where the exercise is about recomputation (lesson 05)
    by_hand: bool = True
    by_hand_clause: str = BY_HAND_CLAUSE
    linear_memory_clause: str = LINEAR_MEMORY_CLAUSE
    # rule 1's default device: forward and backward on CPU inputs with the default device set
    # elsewhere; False only where the contract rules it out (say why in default_device_clause)
    default_device: bool = True
    default_device_clause: str = DEFAULT_DEVICE_CLAUSE

    def properties(self) -> list[str]:
        """The names of the checks this domain implies, in the order they run: one call at a
        time first, so that a wrong answer is blamed on two calls sharing state only when
        each call alone is right."""
        names = [f"constant {name}" for name in self.constants]
        names += [f"dtype {str(dtype).removeprefix('torch.')}" for dtype in self.dtypes]
        names += [f"layout {layout}" for layout in self.layouts]
        names += ["grad_output layout"] if self.strided_grad_output else []
        names += [name for name, part in (("accumulation", self.accumulation),
                                          ("large", self.large), ("ties", self.ties),
                                          ("rows apart", self.rows_apart)) if part is not None]
        return (names + ["requires grad"] + (["per call"] if self.per_call else [])
                + ["backward twice"] + (["optional none"] if self.optional else [])
                + self.rule_properties())

    def rule_properties(self) -> list[str]:
        """The Function contract's rules as checks (``autograder.function_contract``), run after
        the properties above and the check that nothing is kept outside ctx: a wrong answer
        those name keeps its hint."""
        off = {"size one": self.size_one is None and not self.size_one_derived,
               "empty and 0-d": not (self.empty_batch or self.zero_dim),
               "linear memory": not self.linear_memory, "by hand": not self.by_hand,
               "default device": not self.default_device}
        return [name for name in RULE_PROPERTIES if not off.get(name)]

    def clauses(self) -> dict[str, str]:
        """Each property's contract clause."""
        clauses = {"per call": PER_CALL_CLAUSE,
                   "backward twice": (ONCE_CLAUSE if self.second_backward_may_raise
                                      else TWICE_CLAUSE),
                   "requires grad": REQUIRES_GRAD_CLAUSE,
                   "optional none": OPTIONAL_NONE_CLAUSE,
                   "inputs kept": INPUTS_KEPT_CLAUSE,
                   "late requires grad": LATE_REQUIRES_GRAD_CLAUSE,
                   "none on every path": NONE_PATHS_CLAUSE, "size one": self.size_one_clause,
                   "empty and 0-d": self.empty_and_scalar_clause,
                   "fresh output": FRESH_OUTPUT_CLAUSE,
                   "linear memory": self.linear_memory_clause,
                   "by hand": self.by_hand_clause,
                   "caller state": CALLER_STATE_CLAUSE,
                   "default device": self.default_device_clause}
        clauses.update({f"constant {n}": c.clause for n, c in self.constants.items()})
        clauses.update({f"dtype {str(d).removeprefix('torch.')}": self.dtype_clause
                        for d in self.dtypes})
        clauses.update({f"layout {layout}": self.layout_clause for layout in self.layouts})
        clauses["grad_output layout"] = self.grad_output_clause
        clauses.update({name: part.clause for name, part in (
            ("accumulation", self.accumulation), ("large", self.large), ("ties", self.ties),
            ("rows apart", self.rows_apart)) if part is not None})
        return {name: clauses[name] for name in self.properties()}


class Operator:
    """A custom operator (or a plain function) seen through the ``.apply`` the checks call;
    ``plain``: the learner's own plain function, where ``function`` wraps it (rule 6's grad mode
    is checked on it, which no ``apply`` restores)."""

    def __init__(self, function, plain=None):
        self.function, self.plain = function, plain
        self.__name__ = getattr(function, "__name__", type(function).__name__)

    def apply(self, *args):
        return self.function(*args)


def sampled(spec: Spec, shapes: dict, constants: dict | None = None, *, scale: float = 1.0,
            away_from_zero: float = 0.0, tensor_constants: tuple[str, ...] = ()):
    """A ``Domain.values`` for the common case: seeded standard-normal tensors of ``shapes``
    (times ``scale``, pushed ``away_from_zero``), and ``constants`` by default, in forward's
    order; a constant named in ``tensor_constants`` is a 0-d tensor of the inputs' dtype."""
    defaults = constants or {}

    def values(device, dtype=torch.float64, seed=0, **given) -> dict:
        made = {}
        for position, name in enumerate(spec.input_names):
            if name in shapes:
                generator = torch.Generator().manual_seed(1000 * seed + position)
                tensor = scale * torch.randn(shapes[name], generator=generator,
                                             dtype=torch.float64)
                tensor = tensor + away_from_zero * torch.where(tensor >= 0, 1.0, -1.0)
                made[name] = tensor.to(dtype).to(device)
            else:
                value = given.get(name, defaults[name])
                made[name] = (torch.tensor(value, dtype=dtype, device=device)
                              if name in tensor_constants else value)
        return made

    return values
