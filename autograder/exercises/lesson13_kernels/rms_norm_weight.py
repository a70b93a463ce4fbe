"""Lesson 13: rms_norm_rows at a weight with zero entries ("finite for any weight, zero entries
included"): F.rms_norm's results are finite there, and what recovers x_hat from a saved y by
dividing by the weight is not. Named where a zero weight shows it, and where the masked-off
lanes of a row (a weight loaded as 0 past the row's end) make every result of a row NaN."""

import torch

from ...checks import case
from ...errors import GradingError
from .rms_norm_probes import _run
from .rms_norm_spec import checked, values

_NON_FINITE = ("/non-finite-output", "/non-finite-gradient")
# rows of 64: no lane is masked off in a block of next_power_of_2(D), nor in blocks of 16..64
_UNMASKED_D = 64


def _message(where: str) -> str:
    return (f"x_hat recovered from y / w? rms_norm_rows's results are not finite {where}, "
            "though F.rms_norm's are: where the weight is 0, y holds nothing of x to recover, "
            "and y / w is 0 / 0. Save what x_hat is made of instead")


def _finite(function, vals: dict) -> bool | None:
    try:
        return all(bool(t.isfinite().all()) for t in _run(function, vals))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return None


def divides_by_weight(function, device) -> bool:
    """Finite on rows of 64 whose weight has no zero entry, not finite once half the weight's
    entries are 0."""
    vals = values((2, _UNMASKED_D), device, seed=15)
    zero = dict(vals, weight=vals["weight"].clone())
    zero["weight"][::2] = 0
    return _finite(function, vals) is True and _finite(function, zero) is False


def name_division_by_weight(function, error: GradingError, where: str, device) -> None:
    """A non-finite result on rows whose block has masked-off lanes, from y / w: named."""
    if not (getattr(error, "mistake", "") or "").endswith(_NON_FINITE):
        return
    if divides_by_weight(function, device):
        raise GradingError(
            _message("on rows whose weight has no zero entry but whose block has lanes past the "
                     "row's end (a weight loaded as 0 there)"), error.details, case=where,
            mistake="rms_norm_rows/not-finite-at-zero-weight") from error


def check_zero_weight(function, device) -> None:
    """A weight with zero entries, in float64 and in float32 (the clause names no dtype)."""
    for dtype in (torch.float64, torch.float32):
        vals = values((2, 5), device, seed=14, dtype=dtype)
        vals["weight"][::2] = 0
        where = f"x of shape (2, 5), {str(dtype)[6:]}, weight with zero entries"
        try:
            with case(where):
                checked(function, vals)
        except GradingError as error:
            if not (getattr(error, "mistake", "") or "").endswith(_NON_FINITE):
                raise
            raise GradingError(_message("where a weight entry is 0"), error.details,
                               case=error.case,
                               mistake="rms_norm_rows/not-finite-at-zero-weight") from error
