"""Lesson 02's layers at many rows: x of (4099, in) and (3, 1367, in), in float64 and float32,
output and every gradient against the reference. No power of two above 2 divides 4099, 1367 or
4101 (3 * 1367), so a sum over positions taken in blocks (range(rows // 1024 or 1)) that drops
its last partial block fails here; the failure names the rows it got right and the rows it left
out, where the gradients match the reference's over a prefix of the rows."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs, reference_gradients
from ...errors import GradingError

MANY_ROWS = ((4099,), (3, 1367))
# a float32 sum over thousands of rows rounds in a learner's order, not the reference's: an
# absolute bound far above that rounding, and far below one row's share of any sum
FLOAT32_ATOL = 1e-3
# block sizes a learner may pick: each gives the rows a blocked sum keeps, rows - rows % block
BLOCKS = (*(2 ** k for k in range(3, 13)), 10, 100, 500, 1000, 2000)


def check_many_rows(function, spec: Spec, make_values, first: str) -> None:
    """``make_values(leading, dtype)`` gives the inputs, ``first`` names the input whose last
    dimension is the features (x, x1). Float64 first, then float32."""
    for leading in MANY_ROWS:
        for dtype in (torch.float64, torch.float32):
            values = make_values(leading, dtype)
            shape = tuple(values[first].shape)
            with case(f"{first} of shape {shape}, {str(dtype).removeprefix('torch.')}"):
                try:
                    check_values_and_gradients(
                        function, spec, values,
                        atol=FLOAT32_ATOL if dtype == torch.float32 else None)
                except GradingError as error:
                    _name_dropped_rows(function, spec, values, first, error)
                    raise


def _prefixes(leading: tuple) -> list[tuple[str, torch.Tensor, int, int]]:
    """(how the rows are counted, mask of the rows kept, kept, of how many) for each prefix a
    blocked sum may keep: over the leading dims flattened, and along the last leading dim."""
    flat = torch.arange(torch.Size(leading).numel()).reshape(leading)
    along = torch.arange(leading[-1]).expand(leading)
    found, seen = [], set()
    for counted, index, total in (("rows", flat, flat.numel()), ("along", along, leading[-1])):
        if counted == "along" and len(leading) == 1:
            continue
        for block in BLOCKS:
            kept = total - total % block
            if 0 < kept < total and (counted, kept) not in seen:
                seen.add((counted, kept))
                found.append((counted, (index < kept).unsqueeze(-1), kept, total))
    return found


def _name_dropped_rows(function, spec: Spec, values: dict, first: str,
                       error: GradingError) -> None:
    """Raise naming the rows left out where every wrong gradient is the reference's over a
    prefix of the rows (grad_output zeroed past it); return otherwise."""
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(5),
                                  dtype=output.dtype)
        names = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
        got = dict(zip(names, torch.autograd.grad(output, [inputs[n] for n in names],
                                                  grad_output, allow_unused=True)))
        truth = reference_gradients(spec, inputs, grad_output)
    except Exception:  # noqa: BLE001 - a probe: any failure is the caller's to report
        return
    dtype = values[first].dtype
    atol = FLOAT32_ATOL if dtype == torch.float32 else 1e-8
    wrong = [n for n in names if got[n] is None or got[n].shape != truth[n].shape
             or not torch.allclose(got[n], truth[n], rtol=1e-4, atol=atol)]
    if not wrong or any(got[n] is None or got[n].shape != truth[n].shape for n in wrong):
        return
    leading = tuple(values[first].shape[:-1])
    for counted, mask, kept, total in _prefixes(leading):
        partial = reference_gradients(spec, inputs, grad_output * mask)
        if all(torch.allclose(got[n], partial[n], rtol=1e-4, atol=atol) for n in wrong):
            listed = " and ".join(f"grad_{n}" for n in wrong)
            shape = tuple(values[first].shape)
            where = (f"the first {kept} rows of {total} ({first} of shape {shape}, its leading "
                     "dimensions flattened)" if counted == "rows" else
                     f"the first {kept} of {total} positions along dim {len(leading) - 1} of "
                     f"{first} (shape {shape})")
            raise GradingError(
                f"{listed} {'is' if len(wrong) == 1 else 'are'} right on {where} but "
                f"{'misses' if len(wrong) == 1 else 'miss'} the rest: a chunked or blocked sum "
                "that drops its last partial block? The contract's leading dimensions are each "
                f"of any size: which rows does your loop visit when {total} is not a multiple "
                "of its block?", error.details or error.hint,
                mistake=f"{spec.name}/drops-last-rows") from error
