"""Lesson 06: what FlashAttention keeps between the passes, in every dtype it is graded in
(float64, float32, and float16 / bfloat16 where a .to(float32) is no longer a no-op): Q, K, V
and O themselves, the tensors it was given and the one it returned, and L, one number per
query row in float32 or wider; no copy of any of them, no other tensor."""

import math

import torch

from ...errors import GradingError
from .attention_saves import check_saves_no_copy
from .flash_probes import NAME


def check_flash_saves(forward, values: dict) -> None:
    """Copies first (named by what they copy), then Q, K, V and O saved as themselves, then
    the per-row statistics' dtype and the count of numbers saved besides those four."""
    check_saves_no_copy(NAME, forward, values)
    check_saves_themselves(forward, values)
    check_saved(forward, values)


def check_saves_themselves(forward, values: dict) -> None:
    """Q, K, V and the returned O are among the saved tensors as themselves (or views): a
    float32 O accumulator saved in place of the bfloat16 O returned is new memory, twice the
    output's size, kept until backward beside the output the caller already holds."""
    roles = {saved.role for saved in forward.saved}
    for n in ("Q", "K", "V"):
        if f"input {n}" not in roles:
            raise GradingError(
                f"{NAME} does not save its input {n} itself: save the tensors it was given, "
                f"ctx.save_for_backward(Q, K, V, O, L), and widen their tiles in backward",
                mistake="FlashAttention/saves-something-else-than-the-inputs")
    output = forward.output
    if not isinstance(output, torch.Tensor) or "output" in roles:
        return
    shaped = [s for s in forward.saved if s.role == "intermediate"
              and s.shape in (tuple(output.shape), tuple(output.mT.shape))]
    what = (f"a {str(shaped[0].dtype)[6:]} tensor of the output's shape ({shaped[0].nbytes} "
            f"bytes)" if shaped else "no tensor of the output's shape")
    raise GradingError(
        f"{NAME} saves {what} in place of the {str(output.dtype)[6:]} output O it returns "
        "(its float32 accumulator, say): save the O it returns itself, which costs nothing more "
        "(the caller holds it), and widen it in backward where D = rowsum(dO * O) needs float32",
        mistake="FlashAttention/saves-output-accumulator")


def check_saved(forward, values: dict) -> None:
    """Kept between the passes besides Q, K, V and O: L, one number per query row, no narrower
    than float32 or the inputs' dtype."""
    rows = math.prod(values["Q"].shape[:-1])
    extra = [s for s in forward.saved if not s.role.startswith("input") and s.role != "output"]
    wide = torch.promote_types(values["Q"].dtype, torch.float32)
    for saved in extra:
        if (math.prod(saved.shape) == rows and saved.dtype.is_floating_point
                and saved.dtype.itemsize < wide.itemsize):
            low, high = str(saved.dtype)[6:], str(values["Q"].dtype)[6:]
            raise GradingError(
                f"{NAME} keeps its log-sum-exp L in {low} for {high} inputs: P = exp(S - L) "
                f"then carries {low}'s rounding into every entry of its row; keep L in "
                f"{str(wide)[6:]} (the inputs' dtype, float32 at least)",
                mistake="FlashAttention/log-sum-exp-narrower-than-inputs")
    if sum(math.prod(s.shape) for s in extra) > rows:
        raise GradingError(
            f"{NAME} saves {len(extra)} tensors besides Q, K, V and O, "
            f"{sum(math.prod(s.shape) for s in extra)} numbers where one log-sum-exp per query "
            f"row is {rows}: keep L alone and recompute each tile of P from it in backward")
