"""What lesson 10's LayerNormFunction and RMSNormFunction forward saved for backward: one
full-size tensor, a bounded count of per-row tensors, the weight itself, in the input's dtype."""

from types import SimpleNamespace

from ...checks import Spec, make_inputs, run_forward
from ...comparison import check_saved_dtypes
from ...errors import GradingError
from ...probes import same_tensor


def check_saved(spec: Spec, forward, values: dict, *, per_row_limit: int,
                keep_hint: str, x_itself: bool = False) -> None:
    """One full-size tensor, at most ``per_row_limit`` per-row tensors, the weight itself,
    nothing else (nothing when a dimension makes full-size and per-row sizes coincide)."""
    x = values["x"]
    features = x.shape[-1]
    rows = x.numel() // features
    if features == 1:
        return
    full, per_row, weights, other = [], [], [], []
    for saved in forward.saved:
        numel = saved.tensor.numel()
        if saved.role == "input weight":
            weights.append(saved)
        elif saved.role == "input bias":
            other.append(saved)
        elif numel == x.numel():
            full.append(saved)
        elif numel == rows:
            per_row.append(saved)
        else:
            other.append(saved)
    kept = ", ".join(f"{s.role} of shape {s.shape}" for s in forward.saved) or "nothing"
    if len(full) != 1:
        raise GradingError(f"{spec.name} saved {len(full)} full-size tensors ({kept}): "
                           f"{keep_hint}")
    if x_itself and full[0].role != "input x":
        raise GradingError(f"{spec.name} saved a new full-size tensor ({full[0].role} of shape "
                           f"{full[0].shape}) instead of x: {keep_hint} (x costs nothing new "
                           "while the caller holds it; backward rebuilds x * rstd)")
    if full[0].role != "input x" and full[0].nbytes > x.numel() * x.element_size():
        raise GradingError(f"{spec.name} saved a {full[0].dtype} copy of x ({full[0].nbytes} "
                           f"bytes): keep x itself, or a normalised copy in x's dtype")
    if len(per_row) > per_row_limit:
        raise GradingError(f"{spec.name} saved {len(per_row)} per-row tensors ({kept}): "
                           f"{keep_hint}")
    if other:
        what = other[0]
        whose = "the bias, which backward never needs" if what.role == "input bias" else \
            f"{what.role} of shape {what.shape}"
        raise GradingError(f"{spec.name} saved {whose}: {keep_hint}")
    if values["weight"] is not None and not weights:
        copies = [s for s in forward.saved if s.tensor.shape == values["weight"].shape
                  and not same_tensor(s.tensor, values["weight"])]
        if copies:
            raise GradingError(f"{spec.name} saved a copy of the weight: save the weight "
                               "itself (no memory of its own)")


def check_saved_precision(function, spec: Spec, values: dict) -> None:
    """Before any value is compared: a statistic forward computed and saved narrower than the
    float64 input (a float32 rstd) is named as what it is, a tensor seen saved in a narrower
    dtype, not as the small value error it later causes (the domain's saved-dtype rule, run
    first: the same rule, its first line proven by what was saved)."""
    forward = run_forward(function, spec, make_inputs(values))
    dtype = values["x"].dtype
    check_saved_dtypes(SimpleNamespace(spec=spec), forward, dtype, dtype)
