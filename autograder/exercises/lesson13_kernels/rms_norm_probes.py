"""Lesson 13: what names a cause in rms_norm_rows's batteries (rms_norm_rows.py), each from a
gradient taken with grad_output all ones: a weight gradient that is one row's contribution per
column (programs storing into one shared row), a row gradient that is the path through y_j
alone, and, from a number of rows above the backward's fixed grid, results that stop before the
last rows or loads past them (a group of rows per program, counted or bounded wrong); and the
check that forward saves a value per row for backward (the rstd the contract keeps)."""

import torch
import torch.nn.functional as F

from ...checks import make_inputs, run_forward
from ...errors import GradingError
from .kernel_checks import operator_calls
from .kernel_memory import refusals
from .kernel_unwritten import poisoned_allocations, reads_unwritten


def _normalised(values: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """x's rows in float64 and their rstd = 1 / sqrt(mean(x^2) + eps), shaped to broadcast."""
    rows = values["x"].detach().double()
    return rows, torch.rsqrt(rows.pow(2).mean(-1, keepdim=True) + values["eps"])


def one_rows_contribution_per_column(got: torch.Tensor, values: dict) -> bool:
    """The signature of programs storing into one shared row: each entry of the weight
    gradient is the contribution of a single row (the last program to write it), not the sum."""
    rows, rstd = _normalised(dict(values, x=values["x"].reshape(-1, values["x"].shape[-1])))
    contributions = rows * rstd  # grad_output is ones: row r adds x_hat_r to the gradient
    close = torch.isclose(got.detach().double()[None, :], contributions, rtol=1e-4, atol=1e-6)
    return bool(close.any(0).all())


def direct_path_only(got_x: torch.Tensor, values: dict) -> bool:
    """grad_x = rstd * weight (grad_output ones): the path from x_j through y_j alone, with r's
    dependence on every x_k of the row left out. The true gradient differs from it by
    rstd * x_hat_j * mean(weight * x_hat), which is not zero for the batteries' rows."""
    rows, rstd = _normalised(values)
    if not rows.numel() or got_x.shape != rows.shape:
        return False
    direct = rstd * values["weight"].detach().double()
    return bool(torch.allclose(got_x.detach().double(), direct, rtol=1e-4, atol=1e-6))


def row_sum_not_averaged(got_x: torch.Tensor, values: dict) -> bool:
    """grad_x = r (w - x_hat * sum_k w_k x_hat_k) (grad_output ones): the closed form with the
    row's sum where the true gradient has its mean, 1/D of it; the two differ wherever
    x_hat * sum(w x_hat) does, which the batteries' rows make non-zero."""
    rows, rstd = _normalised(values)
    if not rows.numel() or got_x.shape != rows.shape or rows.shape[-1] < 2:
        return False
    weight = values["weight"].detach().double()
    x_hat = rows * rstd
    summed = rstd * (weight - x_hat * (weight * x_hat).sum(-1, keepdim=True))
    return bool(torch.allclose(got_x.detach().double(), summed, rtol=1e-4, atol=1e-6))


def weight_out_of_projection(got_x: torch.Tensor, values: dict) -> bool:
    """grad_x = r (w - x_hat * mean(x_hat)) (grad_output ones): the closed form with the
    weight left out of the row's sum, mean_k(g_k x_hat_k) where the gradient has
    mean_k(g_k w_k x_hat_k); the two differ wherever the weight is not all ones."""
    rows, rstd = _normalised(values)
    if not rows.numel() or got_x.shape != rows.shape or rows.shape[-1] < 2:
        return False
    x_hat = rows * rstd
    unweighted = rstd * (values["weight"].detach().double()
                         - x_hat * x_hat.mean(-1, keepdim=True))
    return bool(torch.allclose(got_x.detach().double(), unweighted, rtol=1e-4, atol=1e-6))


def _run(function, values: dict) -> tuple:
    """(y, grad_x, grad_weight) of ``function`` with grad_output all ones."""
    x, weight = (values[n].detach().clone().requires_grad_() for n in ("x", "weight"))
    y = function(x, weight, values["eps"])
    return (y.detach(), *torch.autograd.grad(y, (x, weight), torch.ones_like(y)))


def row_results_right(function, values: dict) -> bool:
    """Whether the output and the gradient for x (not the weight's) match F.rms_norm's."""
    D = values["x"].shape[-1]
    try:
        got, want = (_run(f, values)[:2] for f in
                     (function, lambda x, w, eps: F.rms_norm(x, (D,), w, eps)))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    return all(a.shape == b.shape and torch.allclose(a, b, rtol=1e-7, atol=1e-9)
               for a, b in zip(got, want))


def first_rows_only(function, values: dict) -> tuple[str, int] | None:
    """(what, k) when the output or the gradient for x is right on its first k rows alone and
    wrong on every row after them, or the weight gradient is the sum over the first k rows
    alone, 0 < k < rows: no program reached the last rows."""
    D = values["x"].shape[-1]
    try:
        got = _run(function, values)
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return None
    want = _run(lambda x, w, eps: F.rms_norm(x, (D,), w, eps), values)
    rows = values["x"].reshape(-1, D).double()
    x_hat = F.rms_norm(rows, (D,), None, values["eps"])
    prefixes = x_hat.cumsum(0)  # the weight gradient of the first k rows, k = 1, 2, ...
    for what, mine, truth in [("output", got[0], want[0]),
                              ("weight gradient", got[2][None], prefixes),
                              ("gradient for x", got[1], want[1])]:
        if mine.numel() % D or (what != "weight gradient" and mine.shape != truth.shape):
            continue
        close = torch.isclose(mine.reshape(-1, D).double(), truth.reshape(-1, D).double(),
                              rtol=1e-5, atol=1e-7).all(-1)
        if what == "weight gradient":
            k = int(close.nonzero()[0]) + 1 if close.any() else 0
        else:
            k = int(close.long().cumprod(0).sum())
            k = k if not close[k:].any() else 0
        if 0 < k < len(rows):
            return what, k
    return None


def reads_past_last_row(function, values: dict) -> bool:
    """Whether a call's first refused access is a load just past the end of a tensor of one
    entry per row or per element of x (x, grad_output or rstd, as the kernel was handed them)."""
    seen = refusals()
    before = len(seen)
    try:
        _run(function, values)
    except Exception:  # noqa: BLE001 -- the refusal is what the probe looks for
        pass
    rows = values["x"].reshape(-1, values["x"].shape[-1]).shape
    return len(seen) > before and seen[before].what == "reads" and \
        seen[before].past_numel in (rows[0], rows.numel())


def name_rows_left_out(function, values: dict, error: GradingError, few: dict,
                       right_with_few: bool) -> None:
    """A failure with more rows than a backward's fixed grid has programs, where fewer rows of
    the same length (``few``) are right: results that stop before the last rows, or loads past
    them."""
    shape, D = tuple(values["x"].shape), values["x"].shape[-1]
    rows, fewer = values["x"].reshape(-1, D).shape[0], few["x"].shape[0]
    if not right_with_few:
        return
    if left := first_rows_only(function, values):
        what, k = left
        raise GradingError(
            f"rms_norm_rows leaves the last {rows - k} of {rows} rows out of its {what} (right "
            f"over the first {k}, and right with {fewer} rows): no program reaches the last "
            "rows. Does every row fall in some program's group? A group size rounded down "
            "(the rows divided by the programs, floored) leaves the remainder of that division "
            "to no program: round the group size up", error.details,
            case=f"x of shape {shape}", mistake="rms_norm_rows/rows-left-out") from error
    if reads_past_last_row(function, values):
        raise GradingError(
            f"rms_norm_rows's kernel reads past the last row with {rows} rows (right with "
            f"{fewer} rows of the same length): a program's loop over its group of rows runs "
            "past the end of x, grad_output or rstd. With a fixed number of programs the last "
            "groups are shorter, or empty: bound each program's loop by the rows that are left "
            "as well as by its group's size", error.details,
            case=f"x of shape {shape}", mistake="rms_norm_rows/loop-past-last-row") from error


def half_rstd(function, x: torch.Tensor, weight: torch.Tensor, eps: float) -> bool:
    """Whether the backward operators are handed a tensor of one value per row in x's half
    dtype: the per-row rstd, saved in half precision."""
    x, weight = (t.detach().clone().requires_grad_() for t in (x, weight))
    rows = x.shape[:-1].numel()
    try:
        out = function(x, weight, eps)
        calls = operator_calls(lambda: torch.autograd.grad(out, (x, weight), torch.ones_like(out)))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    return any(isinstance(t, torch.Tensor) and t.numel() == rows and t.dtype == x.dtype
               and t.shape != x.shape for _, args, kwargs in calls
               for t in (*args, *kwargs.values()))


def _per_row(saved, rows: int) -> list:
    """The saved records that are floating tensors of one value per row, not inputs."""
    return [s for s in saved if s.tensor.numel() == rows and s.dtype.is_floating_point
            and not s.role.startswith("input")]


def _extra_saved(saved, per_row: list):
    """The first saved record that is neither an input (its memory: _role) nor one of
    ``per_row``; None when there is none."""
    return next((s for s in saved if not s.role.startswith("input") and s.tensor is not None
                 and all(s is not p for p in per_row)), None)


def _copy_of(tensor: torch.Tensor, inputs: dict):
    """The name of the input ``tensor`` is a copy of (contiguous or cast: same shape, equal
    values, other memory), or None."""
    return next((n for n, v in inputs.items() if isinstance(v, torch.Tensor)
                 and v.shape == tensor.shape and torch.equal(v.detach().to(tensor.dtype),
                                                             tensor.detach())), None)


def check_nothing_else_saved(saved, inputs: dict, per_row: list, dtype, how: str = "") -> None:
    """Nothing saved but the inputs themselves (their memory) and the per-row rstd."""
    if not (extra := _extra_saved(saved, per_row)):
        return
    if (name := _copy_of(extra.tensor, inputs)) is not None:
        raise GradingError(
            f"rms_norm_rows saves a copy of {name} for backward ({extra.dtype}, shape "
            f"{extra.shape}, {extra.nbytes} bytes, not {name}'s memory) with {how}{dtype} "
            f"input: the contract saves nothing beyond the inputs themselves and one number "
            f"per row. The caller keeps {name} alive anyway, so the copy doubles that memory "
            "until backward runs; save the input as it came and let the backward operator make "
            "its own contiguous (or float32) copy when it runs",
            mistake="rms_norm_rows/saves-input-copy")
    what = "the output y" if extra.role == "output" else f"{extra.dtype}, not an input"
    raise GradingError(
        f"rms_norm_rows saves an extra tensor of shape {extra.shape} ({what}) for backward "
        f"with {how}{dtype} input: the contract saves nothing beyond the inputs and one "
        "number per row; the backward rebuilds anything else (y, x_hat) from x, weight and rstd, "
        "and saving it keeps a whole extra activation in memory until backward",
        mistake="rms_norm_rows/saves-extra-tensor")


def _strided(values: dict, dtype) -> dict:
    """Leaves of ``values`` in ``dtype``: x transposed in memory (last dimension not
    contiguous), weight every second element of a buffer twice its length."""
    x, weight = (values[n].detach().to(dtype) for n in ("x", "weight"))
    x = x.transpose(-1, -2).contiguous().transpose(-1, -2) if x.dim() > 1 else x
    weight = torch.stack((weight, weight), -1)[..., 0]
    return {**values, "x": x.requires_grad_(), "weight": weight.requires_grad_()}


def _gradients_with_saved_rows_scaled(function, values: dict, scale: float) -> tuple:
    """(grad_x, grad_weight), grad_output all ones, with every floating tensor of one value
    per row that forward saved multiplied by ``scale`` when backward unpacks it."""
    x, weight = (values[n].detach().clone().requires_grad_() for n in ("x", "weight"))
    rows = x.shape[:-1].numel()

    def unpack(tensor):
        if tensor.is_floating_point() and tensor.numel() == rows and tensor.shape != x.shape:
            return tensor * scale
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(lambda tensor: tensor, unpack):
        y = function.apply(x, weight, values["eps"])
    return torch.autograd.grad(y, (x, weight), torch.ones_like(y))


def check_saves_rstd(function, spec, values: dict) -> None:
    """What forward saved (its saved-tensor records) holds a floating tensor of one value per
    row that is not an input, one at most (the contract's budget): the contract's rstd, no
    narrower than float32 for float32, float16 and bfloat16 input (float64 kept for every input
    is fine; a narrower one for float64 input is the domain's check), and the backward reads it (its gradients change when that value is
    doubled)."""
    inputs = make_inputs(values)
    rows = values["x"].shape[:-1].numel()
    saved = run_forward(function, spec, inputs).saved
    if len(per_row := _per_row(saved, rows)) > 1:
        raise GradingError(
            f"rms_norm_rows saves {len(per_row)} tensors of one value per row for backward "
            f"({', '.join(f'{s.role} {s.shape}' for s in per_row)}): the contract's budget is "
            "one such tensor besides the inputs, enough to give the backward each row's r",
            mistake="rms_norm_rows/saves-more-per-row")
    if per_row:
        check_nothing_else_saved(saved, inputs, per_row, torch.float64)
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            narrow = make_inputs({n: v.to(dtype) if isinstance(v, torch.Tensor) else v
                                  for n, v in values.items()})
            try:
                kept = _per_row(narrow_saved := run_forward(function, spec, narrow).saved,
                                rows)
            except Exception:  # noqa: BLE001 -- the dtype checks after this one name it
                continue
            check_nothing_else_saved(narrow_saved, narrow, kept, dtype)
            wrong = [s.dtype for s in kept if s.dtype.itemsize < 4]  # float64 is wider: fine
            if wrong:
                raise GradingError(
                    f"rms_norm_rows saves its per-row rstd in {wrong[0]} for {dtype} input: "
                    "the contract keeps it in no dtype narrower than float32, since the "
                    f"gradient is computed from it, and {wrong[0]} rounds away digits of r "
                    "that float32 keeps", mistake="rms_norm_rows/rstd-wrong-dtype")
        for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
            strided = _strided(values, dtype)  # a copy made contiguous is a new tensor
            try:
                kept = _per_row(strided_saved := run_forward(function, spec, strided).saved,
                                rows)
            except Exception:  # noqa: BLE001 -- the layout checks name it
                continue
            check_nothing_else_saved(strided_saved, strided, kept, dtype,
                                     "non-contiguous x and strided weight, ")
        plain, doubled = (_gradients_with_saved_rows_scaled(function, values, scale)
                          for scale in (1.0, 2.0))
        if all(torch.allclose(p, d, rtol=1e-9, atol=1e-12) for p, d in zip(plain, doubled)):
            raise GradingError(
                "rms_norm_rows's backward does not read the rstd that forward saved: its "
                "gradients stay the same when the saved value of each row is doubled, so the "
                "backward works r out again (a second sum of each row's squares). The contract's "
                "backward reads r from what setup_context saved: pass the saved rstd to the "
                "backward kernel and load it there", mistake="rms_norm_rows/rstd-not-read")
        return
    kept = ", ".join(f"{s.role.removeprefix('input ')} {s.shape}" for s in saved) or "nothing"
    raise GradingError(
        f"rms_norm_rows's forward saves no value per row for backward (it saved {kept}): the "
        "contract's backward reads r from one number per row that setup_context saved, in "
        "float32 (float64 for float64 input), instead of computing each row's sum of squares "
        "again; return rstd from the forward operator and save it in setup_context",
        mistake="rms_norm_rows/rstd-not-saved")


def unwritten_columns(function, values: dict) -> int | None:
    """The first column from which a call on ``values`` leaves every row of its output or of
    its gradient for x unwritten (fresh buffers filled with NaN), where that column is a power
    of two below D: the width of a block narrower than the row. None otherwise."""
    D = values["x"].shape[-1]
    try:
        with poisoned_allocations():
            y, grad_x, _ = _run(function, values)
    except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name the error
        return None
    for result in (y, grad_x):
        if result.shape != values["x"].shape:
            continue
        columns = result.reshape(-1, D).isnan().all(0)
        width = 1
        while width < D:
            if columns[width:].all() and not columns[:width].any():
                return width
            width *= 2
    return None


def name_unwritten_columns(function, values: dict) -> None:
    """A result that changes between calls because a block narrower than the row leaves its
    last columns unwritten (a block width kept from an earlier call's D, or a constant), not
    because a buffer is kept: named by the columns no program wrote."""
    width = unwritten_columns(function, values)
    if width is None:
        return
    D = values["x"].shape[-1]
    columns = f"column {width}" if width == D - 1 else f"columns {width} to {D - 1}"
    raise GradingError(
        f"rms_norm_rows leaves {columns} of every row unwritten for x of "
        f"{tuple(values['x'].shape)}: its programs cover {width} lanes of a row of {D} (a "
        "fresh buffer keeps whatever it held there, so its results change from call to call). "
        "Is the block's width computed from this call's own D (not kept from an earlier "
        "call, nor a constant)? The block must be at least D (a power of two no narrower "
        "than the row, masked past its end), or loop over the row",
        mistake="rms_norm_rows/block-narrower-than-row")


def check_no_buffer_kept(function, device) -> None:
    """One call on x of (3, 5), then one on (40, 5), the first again, another (40, 5) and the
    first again: a buffer kept between calls (partial rows allocated once per D, say, and
    summed whole) gives the small call the rows the large one before it stored (two large calls
    of different values: whatever ran before the probe, one pair differs). Compared within
    1e-6: a tl.atomic_add sum may vary in its last bits from run to run."""
    from .rms_norm_spec import values as _values
    small = _values((3, 5), device, seed=21)
    try:
        results = [_run(function, small)]
        for seed in (22, 23):
            _run(function, _values((40, 5), device, seed=seed))
            results.append(_run(function, small))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name the error
        return
    for before, after in zip(results, results[1:]):
        for what, a, b in zip(("output", "gradient for x", "gradient for weight"), before, after):
            if a.shape == b.shape and not torch.allclose(a, b, rtol=1e-6, atol=1e-9,
                                                         equal_nan=True):
                name_unwritten_columns(function, small)
                if reads_unwritten(lambda: _run(function, small)):  # before a kept buffer
                    raise GradingError(
                        f"rms_norm_rows's {what} for one x of (3, 5) changes with what its "
                        "fresh torch.empty buffers hold (filled with 1, then 2): it returns or "
                        "sums memory that no kernel wrote, where the contract asks for nothing "
                        "returned that no program stored. Which entries of your buffers does no "
                        "program store for 3 rows?", mistake="rms_norm_rows/reads-unwritten-memory")
                raise GradingError(
                    f"rms_norm_rows's {what} for one x of (3, 5) changes after a call on x of "
                    "(40, 5): it keeps a buffer between calls (partial rows of the weight "
                    "gradient allocated once and reused?), and a smaller call reads or sums the "
                    "rows a larger one stored. Allocate every buffer in the call, sized by that "
                    "call's grid", mistake="rms_norm_rows/buffer-kept-between-calls")
