"""Lesson 00's transfer exercise: Outer, y = outer(u, v), a Jacobian that is not diagonal."""

import torch

from ..checks import (Spec, case, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients)
from ..contract import check_each_input_alone, covers
from ..errors import GradingError
from ..exercise import Exercise, sample
from .template import (check_input_version_tracking, check_one_ctx_per_call,
                       check_uses_grad_output)

LATER_IN_LESSON = True

OUTER = Spec("Outer", ("u", "v"), lambda u, v: torch.outer(u, v))

# (m, n): m != n first, so that a gradient with u and v swapped cannot even have the right
# shape; then a square case, where it can; then a single entry on either side.
SIZES = [(4, 3), (3, 3), (1, 5), (5, 1)]


def _values(m, n, device, seed=0, dtype=torch.float64) -> dict:
    return {"u": sample((m,), device, seed=seed, dtype=dtype),
            "v": sample((n,), device, seed=seed + 50, dtype=dtype)}


def check_saves_only_inputs(forward) -> None:
    """Backward needs u and v, which the caller holds anyway: nothing else is kept."""
    others = [saved for saved in forward.saved if not saved.role.startswith("input")]
    if others:
        what = others[0]
        raise GradingError(
            f"Outer saved a{'n' if what.role[0] in 'aeiou' else ''} {what.role} of shape "
            f"{what.shape} ({what.nbytes} bytes): the contract saves only u and v themselves, "
            "which the caller holds anyway; anything else, a copy included, is new memory")


def outer_full(Outer, device) -> None:
    function = check_is_function(Outer, OUTER)
    check_uses_grad_output(function, OUTER, _values(4, 3, device))
    for seed, (m, n) in enumerate(SIZES):
        with case(f"u of shape ({m},), v of shape ({n},)"):
            forward, _ = check_values_and_gradients(function, OUTER, _values(m, n, device, seed))
            check_no_ctx_tensors(OUTER, forward)
            check_saves_only_inputs(forward)
    covers("saves only u and v")
    covers("m != n")
    with case("u of shape (4,), v of shape (3,)"):
        check_one_ctx_per_call(function, OUTER, _values(4, 3, device),
                               _values(4, 3, device, seed=1))
        for name in ("u", "v"):
            check_input_version_tracking(function, OUTER, _values(4, 3, device), name)
    check_each_input_alone(function, OUTER, _values(4, 3, device), frozen_get_none=True)
    covers("gradient only when needed")
    check_gradcheck(function, OUTER, _values(3, 2, device))


EXERCISES = [
    Exercise("Outer", "00_template", outer_full,
             contract=("saves only u and v", "m != n", "gradient only when needed"),
             example=lambda: tuple(_values(4, 3, "cpu").values())),
]
