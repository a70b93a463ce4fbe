"""Lesson 05: the answers of review 58 not already catalogued in the same form, with the hint
each gets. The reviewer's one answer that passed both checks: backward's fresh leaves upcast to
float32 where an argument was bfloat16 or float16 (the contract's "dtype included" was graded on
float64 and float32 arguments only; half-precision arguments are now graded, an element-wise
block and a Linear for each). Its twin casts float16 only. Not here: the reviewer's other wrong
answers and unusual answers (longer groups last, rounded bounds, RevNet's one-call backward, the
state through save_for_backward), each already catalogued in the same form."""

from .. import Mistake, edit
from .answers import CORRECT_BACKWARD, FRESH, _checkpoint

SOLUTION = _checkpoint(CORRECT_BACKWARD)


def _upcast(halves: str) -> str:
    return edit(SOLUTION, (FRESH, "lambda t: (t.detach().float() if t.dtype in " + halves
                           + " else t.detach()).requires_grad_(t.requires_grad)"))


# CheckpointFunction (review 58, w8): half-precision leaves recomputed in float32 "for a more
# accurate backward": the gradients are not a plain run's, and a half Linear refuses the mix.
WRONG_01_HALVES_TO_FLOAT32 = _upcast("(torch.float16, torch.bfloat16)")

# CheckpointFunction: float16 only recomputed in float32 ("float16 overflows, bfloat16 does not").
WRONG_02_FLOAT16_TO_FLOAT32 = _upcast("(torch.float16,)")

MISTAKES = [
    Mistake("CheckpointFunction", "fresh leaves of bfloat16 and float16 arguments cast to float32",
            "recomputed run_fn on float32 copies of arguments that were bfloat16",
            WRONG_01_HALVES_TO_FLOAT32),
    Mistake("CheckpointFunction", "fresh leaves of float16 arguments cast to float32",
            "recomputed run_fn on float32 copies of arguments that were float16",
            WRONG_02_FLOAT16_TO_FLOAT32),
]
