"""Lesson 06's multi-head layout case, shared by the three attention exercises: Q, K, V as
x.view(B, L, H, d).transpose(1, 2), whose dimensions .view cannot merge without a copy."""

from ..errors import GradingError
from .attention_inputs import MULTIHEAD, multihead_layout

VIEW_ERROR = "view size is not compatible with input tensor's size and stride"


def check_multihead_layout(check, function, name: str, values: dict, where: str) -> None:
    """``check(function, values)`` on Q, K, V (B, H, L, d) in the multi-head layout. A .view
    error there is named only when the same check passes on contiguous copies of the same
    numbers: the layout alone is then what breaks it."""
    try:
        check(function, multihead_layout(values))
    except GradingError as error:
        hint = error.hint.removesuffix(f" (with {error.case})") if error.case else error.hint
        where = f"{error.case or where}, {MULTIHEAD}"
        if VIEW_ERROR in f"{error.hint} {error.details}" and _passes(check, function, values):
            raise GradingError(
                f"{name} raises in .view on Q, K, V of the standard multi-head layout, "
                "(B, H, L, d) made by x.view(B, L, H, d).transpose(1, 2), and passes on "
                "contiguous copies of the same numbers: .view cannot merge dimensions of such "
                "a tensor (the leading (B, H) into one, say) without a copy; use .reshape, or "
                "let batched @ (torch.matmul) run over every leading dimension",
                str(error), where, mistake=f"{name}/view-on-multihead-layout") from error
        raise GradingError(hint, error.details, where, mistake=error.mistake) from error


def _passes(check, function, values: dict) -> bool:
    try:
        check(function, values)
    except Exception:  # the learner's code may raise anything: the probe is not proven
        return False
    return True
