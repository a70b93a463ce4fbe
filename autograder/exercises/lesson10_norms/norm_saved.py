"""What lesson 10's norms saved for backward, against the contract's budget in bytes: x's size
in x's dtype (none for RMSNorm, whose x itself is free) plus a few numbers per row (per group
for GroupNorm), each number in x's dtype (float32 or float64: the contracts' domain); the
weight itself is free. Over the budget, the message names what made it so."""

from types import SimpleNamespace

from ...checks import Spec, make_inputs, run_forward
from ...comparison import check_saved_dtypes
from ...errors import GradingError


def budget(x, rows: int, per_row: int, *, x_free: bool = False) -> int:
    """The contract's budget in bytes: x's bytes (unless x itself is free) and ``per_row``
    numbers for each of ``rows`` rows, a number in x's dtype (float32 at least)."""
    size = x.element_size()
    return per_row * rows * max(size, 4) + (0 if x_free else x.numel() * size)


def check_budget(name: str, forward, x, weight, *, rows: int, per_row: int, keep_hint: str,
                 x_free: bool = False, unit: str = "row") -> None:
    """The bytes of every tensor forward saved, but the weight itself (and x itself where
    ``x_free``), at most ``budget``; over it, a first line that names why."""
    free = ("input weight", "input x") if x_free else ("input weight",)
    spent = sum(saved.nbytes for saved in forward.saved if saved.role not in free)
    allowed = budget(x, rows, per_row, x_free=x_free)
    if spent <= allowed:
        return
    kept = ", ".join(f"{s.role} of shape {s.shape}" for s in forward.saved) or "nothing"
    full = [s for s in forward.saved if s.tensor.numel() == x.numel() and s.role != "input weight"]
    per_row_kept = [s for s in forward.saved if s.tensor.numel() == rows
                    and not s.role.startswith("input")]
    over = f"{spent} bytes where the budget is {allowed} ({kept}): {keep_hint}"
    wider = [s for s in full if s.role != "input x" and s.nbytes > x.numel() * x.element_size()]
    if wider:
        raise GradingError(f"{name} saved a {wider[0].dtype} full-size tensor ({wider[0].role} of "
                           f"shape {wider[0].shape}, {wider[0].nbytes} bytes) for a {x.dtype} x "
                           f"of {x.numel() * x.element_size()} bytes: the budget counts x's size "
                           f"in x's dtype; {over}", mistake=f"{name}/saves-wider-copy")
    new = [s for s in full if s.role != "input x"]
    if len(full) > 1:
        raise GradingError(f"{name} saved {len(full)} full-size tensors, {over}")
    if x_free and new:
        raise GradingError(f"{name} saved a new full-size tensor ({new[0].role} of shape "
                           f"{new[0].shape}) instead of x, {over} (x costs nothing new while "
                           "the caller holds it)")
    if any(s.role == "input bias" for s in forward.saved):
        raise GradingError(f"{name} saved the bias, which backward never needs, {over}")
    if len(per_row_kept) > per_row:
        raise GradingError(f"{name} saved {len(per_row_kept)} tensors of one number per "
                           f"{unit}, {over}")
    widest = max(x.element_size(), 4)
    wide_stats = [s for s in per_row_kept if s.tensor.element_size() > widest]
    if wide_stats:
        shown = ", ".join(f"{s.role} of shape {s.shape}" for s in wide_stats)
        raise GradingError(f"{name} saved {len(wide_stats)} tensor{'s' * (len(wide_stats) > 1)} "
                           f"of one number per {unit} in {wide_stats[0].dtype} ({shown}) for a "
                           f"{x.dtype} x: the budget counts each number per {unit} in x's dtype "
                           f"({widest} bytes); {spent} bytes "
                           f"where the budget is {allowed} ({kept})",
                           mistake=f"{name}/saves-wider-statistics")
    # the weight forward received is saved as "input weight"; a tensor of its shape saved
    # under any other role is a copy (values["weight"] is not the tensor forward was given)
    if weight is not None and any(s.tensor.shape == weight.shape
                                  and not s.role.startswith("input") for s in forward.saved):
        raise GradingError(f"{name} saved a copy of the weight (the weight itself is free), "
                           f"{over}")
    # no weight given, yet a tensor of the weight's shape saved: a stand-in (ones) for it
    features = x.shape[-1] if x.dim() else 1
    stand_in = [s for s in forward.saved if not s.role.startswith("input")
                and s.tensor.numel() == features and s.tensor.numel() != rows]
    if weight is None and stand_in:
        raise GradingError(f"{name} saved a tensor of shape {stand_in[0].shape} "
                           f"({stand_in[0].role}) though it was given no weight: {spent} bytes "
                           f"where the budget is {allowed} ({kept}); what does backward need "
                           "to know when there is no weight, and does that take a tensor?",
                           mistake=f"{name}/saves-stand-in-weight")
    raise GradingError(f"{name} saved {over}")


def check_saved(spec: Spec, forward, values: dict, *, per_row_limit: int,
                keep_hint: str, x_itself: bool = False) -> None:
    """LayerNorm's and RMSNorm's budget: per row, ``per_row_limit`` numbers."""
    x = values["x"]
    check_budget(spec.name, forward, x, values["weight"], rows=x.numel() // x.shape[-1],
                 per_row=per_row_limit, keep_hint=keep_hint, x_free=x_itself)


def check_saved_in_float32(function, spec: Spec, values: dict, **options) -> None:
    """What forward saved for a float32 x (the float64 cases cannot see a wider copy): one
    forward, no values compared."""
    check_saved(spec, run_forward(function, spec, make_inputs(values)), values, **options)


def check_saved_precision(function, spec: Spec, values: dict) -> None:
    """Before any value is compared: a statistic forward computed and saved narrower than the
    float64 input (a float32 rstd) is named as what it is, a tensor seen saved in a narrower
    dtype, not as the small value error it later causes (the domain's saved-dtype rule, run
    first: the same rule, its first line proven by what was saved)."""
    forward = run_forward(function, spec, make_inputs(values))
    dtype = values["x"].dtype
    check_saved_dtypes(SimpleNamespace(spec=spec), forward, dtype, dtype)
