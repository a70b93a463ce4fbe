"""An instructor's own exercise in a few lines, graded as deeply as the course's.

A ``FunctionExercise`` describes a Function by its maths (a reference written with torch ops
that autograd differentiates) and by what the lesson asks of it; grading then checks values and
gradients against the reference on several shapes and dtypes, gradcheck (and gradgradcheck when
asked), ``grad_output`` and inputs left untouched, no tensors on ``ctx``, what was saved, in-place
version tracking, ``needs_input_grad`` by counted work, a hand-written backward, on CPU and CUDA;
then every property its domain implies (``autograder.properties``: each ranged constant at both
ends, both dtypes, every layout, two calls in one graph) and the Function contract's rules
(``requires_grad`` changed after forward, ``None`` on every path, dimensions of size 1, the
caller's state, the default device), as for the course's own exercises::

    MY_TANH = FunctionExercise("MyTanh", reference=torch.tanh, saves="output")
    MY_TANH.self_check(MyTanh)   # visible: the whole battery, this machine's devices
    MY_TANH.grade(MyTanh)        # hidden tests: the same battery on the grader's devices

Both raise ``GradingError`` whose first line names the likely mistake.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                     check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                     run_backward, run_forward)
from .errors import GradingError
from .domain import Constant, Domain
from .exercise import Exercise, sample
from .probes import record_returned_gradients
from .saved_output import check_output_itself

SAVES = ("output", "inputs", "nothing")
BOOKKEEPING = ("detach", "alias")  # ops autograd adds when it unpacks saved tensors
SIZE_ONE = ((1,), (1, 1), (2, 1, 3))  # rule 1's size-1 dimensions, besides the derived ones


@dataclass(frozen=True)
class FunctionExercise:
    """What to grade (see the module docstring). ``arguments`` are ``apply``'s parameters in
    order; those in ``constants`` are Python values, the others tensors of one shape.
    ``saves``: "output", "inputs", "nothing", a byte budget (int), or None for no rule."""

    name: str
    reference: Callable
    arguments: tuple[str, ...] = ("x",)
    constants: dict = field(default_factory=dict)
    saves: str | int | None = None
    second_order: bool = False  # gradgradcheck: the backward is itself differentiable
    hand_written: bool = True  # no autograd re-entry, no built-in *_backward op in backward
    needs_input_grad: bool = False  # skips the gradients nobody asked for (counted ops)
    shapes: tuple = ((5,), (3, 4), (2, 3, 4), ())
    domain: Callable | None = None  # maps standard-normal samples into the inputs' domain
    ranges: dict = field(default_factory=dict)  # a constant's (low, high), tried at both ends

    def __post_init__(self):
        if isinstance(self.saves, str) and self.saves not in SAVES:
            raise ValueError(f"saves must be one of {SAVES}, a byte budget or None, "
                             f"not {self.saves!r}")
        unknown = set(self.constants) - set(self.arguments)
        if unknown:
            raise ValueError(f"constants {sorted(unknown)} are not among {self.arguments}")
        unranged = set(self.ranges) - set(self.constants)
        if unranged:
            raise ValueError(f"ranges {sorted(unranged)} are not among the constants "
                             f"{sorted(self.constants)}")

    @property
    def spec(self) -> Spec:
        return Spec(self.name, self.arguments, self.reference)

    @property
    def tensor_names(self) -> list[str]:
        return [name for name in self.arguments if name not in self.constants]

    def values(self, shape, device, *, seed=0, dtype=torch.float64, **constants) -> dict:
        """Inputs for one case: seeded samples for the tensors, the constants as given (or as
        ``constants`` overrides them)."""
        values = {}
        for offset, name in enumerate(self.arguments):
            if name in self.constants:
                values[name] = constants.get(name, self.constants[name])
                continue
            tensor = sample(shape, device, seed=seed + 100 * offset, dtype=dtype)
            values[name] = self.domain(tensor) if self.domain else tensor
        return values

    # -- the checks ----------------------------------------------------------------------------

    def check_saved(self, forward) -> None:
        """What forward kept for backward matches ``saves``."""
        roles = [saved.role for saved in forward.saved]
        if self.saves == "output" and roles != ["output"]:
            kept = ", ".join(roles) or "nothing"
            hint = ("saved its input: save the output instead, which backward can use directly"
                    if any(role.startswith("input") for role in roles)
                    else f"saved {kept}: save exactly the output")
            raise GradingError(f"{self.name} {hint}",
                               mistake=f"{self.name}/saves-other-than-output")
        if self.saves == "inputs" and sorted(roles) != sorted(f"input {n}"
                                                              for n in self.tensor_names):
            raise GradingError(f"{self.name} saved {', '.join(roles) or 'nothing'}: save its "
                               f"inputs ({', '.join(self.tensor_names)}) and recompute the rest",
                               mistake=f"{self.name}/saves-other-than-inputs")
        if self.saves == "nothing" and roles:
            raise GradingError(f"{self.name} saved {', '.join(roles)}: its backward needs "
                               "nothing from forward", mistake=f"{self.name}/saves-unneeded")
        if isinstance(self.saves, int) and forward.saved_bytes > self.saves:
            raise GradingError(f"{self.name} kept {forward.saved_bytes} bytes for backward, more "
                               f"than the {self.saves} this exercise allows",
                               mistake=f"{self.name}/saves-too-many-bytes")

    def check_version_tracking(self, function, device) -> None:
        """A saved tensor changed in place before backward must make backward raise."""
        if self.saves not in ("output", "inputs"):
            return
        leaves = make_inputs(self.values((4,), device))
        inputs = {name: value * 1 if isinstance(value, torch.Tensor) else value
                  for name, value in leaves.items()}  # non-leaves: they may be written
        output = function.apply(*inputs.values())
        changed = output if self.saves == "output" else inputs[self.tensor_names[0]]
        with torch.no_grad():
            changed.add_(1)
        try:
            output.sum().backward()
        except RuntimeError as error:
            if "modified by an inplace operation" in str(error):
                return
            raise GradingError(f"{self.name}.backward raised RuntimeError: {error}") from error
        raise GradingError(f"{self.name} did not notice its saved {self.saves} was changed in "
                           "place: save tensors with ctx.save_for_backward, not as ctx attributes "
                           "or through .data / .detach()", mistake=f"{self.name}/saved-untracked")

    def check_needs_input_grad(self, function, device) -> None:
        """With one tensor input requiring grad, backward computes less than with all."""
        names = self.tensor_names
        if len(names) < 2:
            return
        values = self.values((3, 4), device)
        everything, _ = self._work(function, values, set(names))
        for name in names:
            work, returned = self._work(function, values, {name})
            if work < everything:
                continue
            others = [o for o in names if o != name]
            given = [o for o in others if isinstance(returned.get(o), torch.Tensor)]
            if given and not any(bool(returned[o].any()) for o in given):
                raise GradingError(
                    f"{self.name}.backward returns a tensor of zeros for {', '.join(given)} "
                    f"when only {name} requires grad: a tensor of zeros is not None, and "
                    "making it is work; what does ctx.needs_input_grad say about "
                    f"{', '.join(others)}, and what may backward return for an input that "
                    "needs no gradient?", mistake=f"{self.name}/ignores-needs-input-grad")
            if given:
                raise GradingError(
                    f"{self.name}.backward returns a tensor for {', '.join(given)} when only "
                    f"{name} requires grad, computed as when every input does: what does "
                    f"ctx.needs_input_grad say about {', '.join(others)}, and what may backward "
                    "return for an input that needs no gradient?",
                    mistake=f"{self.name}/ignores-needs-input-grad")
            raise GradingError(
                f"{self.name}.backward does the same work when only {name} requires grad as "
                f"when every input does, though it returns None for {', '.join(others)}: what "
                "tells backward, before that work, which gradients are wanted?",
                mistake=f"{self.name}/ignores-needs-input-grad")

    def _work(self, function, values: dict, wanted: set) -> tuple[int, dict]:
        """How many ops backward dispatches when only ``wanted`` require grad, and what it
        returned for each tensor input."""
        recorder, calls = record_returned_gradients(function)
        inputs = make_inputs(values, requires_grad=wanted)
        forward = run_forward(recorder, self.spec, inputs)
        tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)
                   and v.requires_grad}
        backward = run_backward(self.spec, forward.output, tensors,
                                torch.ones_like(forward.output))
        returned = dict(zip(self.spec.input_names, calls[-1])) if calls else {}
        return sum(op not in BOOKKEEPING for op in backward.ops), returned

    def check_uses_grad_output(self, function, values: dict) -> None:
        """A backward that returns the same gradients whatever grad_output is forgot the chain
        rule's grad_output."""
        grads = []
        for scale in (1.0, 3.0):
            inputs = make_inputs(values)
            tensors = [inputs[name] for name in self.tensor_names]
            try:
                output = function.apply(*inputs.values())
                grads.append(torch.autograd.grad(output, tensors, torch.full_like(output, scale)))
            except Exception:  # noqa: BLE001 (the caller's hint already says what went wrong)
                return
        if all(torch.allclose(a, b) for a, b in zip(*grads)):
            raise GradingError(f"{self.name}.backward ignores grad_output: multiply the local "
                               "derivative by grad_output (the chain rule)",
                               mistake=f"{self.name}/ignores-grad-output")

    def check_second_order(self, function, values: dict) -> None:
        inputs = make_inputs(values)
        tensors = [inputs[name] for name in self.tensor_names]

        def apply(*given):
            call = dict(inputs)
            call.update(zip(self.tensor_names, given))
            return function.apply(*call.values())

        try:
            torch.autograd.gradgradcheck(apply, tuple(tensors), eps=1e-6, atol=1e-5)
        except Exception as error:  # GradcheckError, or the learner's own error
            raise GradingError(
                f"gradgradcheck failed for {self.name}: the derivative of your backward is "
                "wrong; compute backward from inputs or outputs with differentiable torch ops "
                "(never an intermediate, never .detach())", str(error)) from error

    # -- the battery ---------------------------------------------------------------------------

    def _case(self, function, shape, device, dtype=torch.float64, seed=0, tolerance=None):
        described = f"{', '.join(self.tensor_names)} of shape {shape}, {dtype}".replace(
            "torch.", "")
        with case(described):
            values = self.values(shape, device, seed=seed, dtype=dtype)
            try:
                forward, backward = check_values_and_gradients(function, self.spec, values,
                                                               **(tolerance or {}))
            except GradingError:
                self.check_uses_grad_output(function, values)  # a more precise hint, if so
                raise
            check_no_ctx_tensors(self.spec, forward)
            self.check_saved(forward)
            if self.hand_written:
                check_backward_by_hand(self.spec, backward)

    def full(self, submission, device) -> None:
        """The hidden battery on ``device``."""
        function = check_is_function(submission, self.spec)
        for seed, shape in enumerate(self.shapes):
            self._case(function, shape, device, seed=seed)
        self._case(function, self.shapes[0], device, dtype=torch.float32,
                   tolerance={"rtol": 1e-4, "atol": 1e-6})
        check_gradcheck(function, self.spec, self.values((3,), device))
        if self.second_order:
            self.check_second_order(function, self.values((3,), device))
        self.check_version_tracking(function, device)
        if self.saves == "output":  # after the version counter's check, which names .data
            check_output_itself(self.name, run_forward(
                function, self.spec, make_inputs(self.values((4,), device))))
        if self.needs_input_grad:
            self.check_needs_input_grad(function, device)

    def domain_of(self) -> Domain:
        """The domain the description implies: the tensors of one shape, (3, 4) where typical,
        each ranged constant, and the size-1 shapes of ``SIZE_ONE`` besides those derived from
        (3, 4) (``autograder.size_one``), all mapped by ``domain``."""
        constants = {name: Constant(low, high, f"{name} from {low} to {high}")
                     for name, (low, high) in self.ranges.items()}
        return Domain(
            self.spec, lambda device, dtype=torch.float64, seed=0, **given:
            self.values((3, 4), device, seed=seed, dtype=dtype, **given),
            constants=constants,
            size_one=lambda device, dtype: [self.values(shape, device, seed=7 + i, dtype=dtype)
                                            for i, shape in enumerate(SIZE_ONE)])

    def exercise(self) -> Exercise:
        """The battery, then every check its domain implies (``domain_of``)."""
        return Exercise(self.name, "instructor", self.full, domain=self.domain_of())

    def self_check(self, submission) -> None:
        """Run the battery on this machine's devices; print a tick or raise GradingError."""
        exercise = self.exercise()
        print(f"✓ {exercise.passed_message(exercise.run(submission))}.")

    def grade(self, submission) -> None:
        """The same battery, on the grader's devices (CPU, and CUDA when present)."""
        exercise = self.exercise()
        print(f"✓ {exercise.passed_message(exercise.run(submission))}.")
