"""Lesson 06, review 55c: the mask filled with torch.finfo(dtype).min, which the lesson and the
grader once offered as a fill "far below any score". It only ties with a visible score equal to
finfo.min, where the masked keys take their share of the weight; the checks now have such rows
(float32 and float64), and only -inf masks them. Also a copy of O saved (named by its bytes
only, before). D kept in float16 and dQ accumulated in float16 now get different first lines:
their hints are in flash_low_precision.py."""

from .. import Mistake, edit
from .answers import FILL, MEMORY, SDPA, M, S

_TIES = "mask fill ties with a visible score"
_MIN = FILL.replace('float("-inf")', "torch.finfo(scores.dtype).min")

MISTAKES = [
    Mistake(S, "masked scores filled with torch.finfo(dtype).min", _TIES,
            edit(SDPA, (FILL, _MIN))),
    Mistake(M, "masked scores filled with torch.finfo(dtype).min", _TIES,
            edit(MEMORY, (FILL, _MIN))),
    # was named only as 1024 bytes too many
    Mistake(M, "saves a copy of the output", "saved a copy of its output O", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output.clone(), lse.squeeze(-1), mask)"))),
]
