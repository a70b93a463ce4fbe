"""Probes for SortWithIndices's backward that its values alone cannot name: a gradient right on
the same shape without ties (so a wrong one is about ties), and a gradient whose rows all received
every row's gradients (the last dimension indexed with the whole tensor of indices at once), or
one right for a single row and wrong for a batch of rows;
an order that sorts x only as float32 numbers; and what forward saves for backward (the
permutation, once)."""

import torch

from ...errors import GradingError
from ...exercise import sample
from ...probes import AllocationLog
from .in_place import noise

# backward's budget: bytes per element of x, on rows of BACKWARD_ROW entries (the engine's
# int64 zeros for grad_indices among them); a permutation matrix takes 8 * BACKWARD_ROW
BACKWARD_BYTES_PER_ELEMENT = 64
BACKWARD_ROW = 64


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.detach(), b.detach())


def right_without_ties(function, x: torch.Tensor) -> bool:
    """The probe behind the ties hint: the same Function is right on x's shape without ties."""
    plain = torch.randperm(x.numel(), generator=torch.Generator().manual_seed(5))
    leaf = plain.reshape(x.shape).to(dtype=x.dtype, device=x.device).requires_grad_()
    try:
        values, indices = function.apply(leaf)
        g = noise(values, 11)
        grad, = torch.autograd.grad(values, leaf, g)
    except Exception:  # the learner's code may raise anything: then it is not only ties
        return False
    expected = torch.zeros_like(g).scatter(-1, torch.sort(leaf.detach(), -1).indices, g)
    return grad.shape == expected.shape and bool(torch.allclose(grad, expected))


def only_permuted(grad: torch.Tensor, expected: torch.Tensor) -> bool:
    """The probe that tells the two ties hints apart: each row of grad holds the same values as
    the right gradient's, in another order (another ordering of the ties), where a comparison of
    values sends a tied position the sum of several gradients (another multiset)."""
    if grad.shape != expected.shape or grad.dim() == 0:
        return False
    return bool(torch.allclose(grad.detach().sort(-1).values, expected.sort(-1).values))


def ties_hint(grad: torch.Tensor, expected: torch.Tensor) -> GradingError:
    """The failure for a gradient wrong on ties and right without them: another ordering of the
    ties (each row the right gradients, permuted) or positions found by comparing values (a
    tied position gets several gradients: another multiset)."""
    if only_permuted(grad, expected):  # each row holds the right gradients, elsewhere
        return GradingError(
            "SortWithIndices's gradient is wrong where x has equal values (ties), right on the "
            "same shape without ties, and each row holds the right gradients, only permuted: "
            "backward routes them by another ordering of the ties than the indices forward "
            "returned (torch.sort promises none, so two sorts of x may order ties "
            "differently). Which tensor does backward route with?",
            mistake="SortWithIndices/ties-in-another-order")
    return GradingError(
        "SortWithIndices's gradient is wrong where x has equal values (ties) and right on the "
        "same shape without ties, and a row's gradients are not the right ones reordered: a "
        "backward that finds positions by comparing values finds every tied position (one "
        "gradient sent to several); use the indices forward returned, not a comparison of "
        "values", mistake="SortWithIndices/positions-by-value")


def float32_twins(device) -> torch.Tensor:
    """Rows of three values apart in float32 (1, 1 + 2^-20, 1 + 2^-19), each with a twin one
    float64 ulp above it, shuffled: float32 rounds each twin onto its value (a tie), float16
    rounds all six to 1."""
    base = 1 + torch.arange(3, dtype=torch.float64) * 2.0 ** -20
    row = torch.cat([base, torch.nextafter(base, torch.tensor(2.0, dtype=torch.float64))])
    generator = torch.Generator().manual_seed(7)
    return torch.stack([row[torch.randperm(6, generator=generator)] for _ in range(3)]).to(device)


def sorted_as_float32_only(x: torch.Tensor, indices: torch.Tensor) -> bool:
    """The probe behind the float32 hint: x taken in the returned order is ascending once
    rounded to float32, and not in x's own (wider) dtype."""
    if x.dtype != torch.float64 or x.dim() == 0 or indices.shape != x.shape:
        return False
    ordered = x.detach().gather(-1, indices)
    return bool((ordered.diff(dim=-1) < 0).any() and (ordered.float().diff(dim=-1) >= 0).all())


def every_row_indexed(grad: torch.Tensor, indices: torch.Tensor, g: torch.Tensor) -> bool:
    """The probe behind the whole-index hint: two rows or more, all of grad's rows the same, and
    each entry one of the gradients that some row's indices send to its position, which is what
    ``grad_x[..., indices] = grad_values`` (or a loop of such writes over j) leaves."""
    if (grad.dim() < 2 or grad.shape != indices.shape or grad.shape[:-1].numel() < 2
            or grad.numel() == 0):
        return False
    n = grad.shape[-1]
    rows = grad.detach().reshape(-1, n)
    if not torch.equal(rows, rows[:1].expand_as(rows)):
        return False
    # sent[a, p]: the gradient row a's indices send to position p
    sent = g.reshape(-1, n).gather(-1, torch.argsort(indices.reshape(-1, n), dim=-1))
    return bool((rows[0] == sent).any(0).all())


def right_on_each_row(function, x: torch.Tensor) -> bool:
    """The probe behind the batch hint: x has two rows or more (of two entries or more), and the
    same Function is right on each of its first three rows given alone, as a 1-D x, routed by
    the indices it returns for that row."""
    if x.dim() < 2 or x.shape[:-1].numel() < 2 or x.shape[-1] < 2:
        return False
    for r, row in enumerate(x.detach().reshape(-1, x.shape[-1])[:3]):
        leaf = row.clone().requires_grad_()
        try:
            values, indices = function.apply(leaf)
            g = noise(values, 13 + r)
            grad, = torch.autograd.grad(values, leaf, g)
            expected = torch.zeros_like(g).scatter(-1, indices, g)
        except Exception:  # the learner's code may raise anything: then it is not only batches
            return False
        if grad.shape != expected.shape or not torch.allclose(grad, expected):
            return False
    return True


def _holds_permutation(saved: torch.Tensor, indices: torch.Tensor, inverse) -> bool:
    """``saved`` holds the permutation (or its inverse), in any integer dtype: equal values."""
    if saved.dtype.is_floating_point or saved.dtype.is_complex or saved.shape != indices.shape:
        return False
    if saved.dtype == torch.bool:
        return False
    wide = saved.detach().long()
    return torch.equal(wide, indices) or torch.equal(wide, inverse)


def _overflows(function, dtype: torch.dtype, device) -> bool:
    """The probe behind the narrow-dtype hint: on one row of iinfo(dtype).max + 2 entries (a
    position the dtype cannot hold) the Function's gradient is wrong, or backward raises. Two
    such rows, so that a dtype chosen from the length of the first dimension (x.shape[0], 2)
    rather than of a row is caught too."""
    n = torch.iinfo(dtype).max + 2
    generator = torch.Generator().manual_seed(3)
    x = torch.stack([torch.randperm(n, generator=generator) for _ in range(2)])
    x = x.to(device, torch.float64)
    leaf = x.requires_grad_()
    try:
        values, indices = function.apply(leaf)
        g = torch.arange(2 * n, dtype=torch.float64, device=device).reshape(2, n)
        grad, = torch.autograd.grad(values, leaf, g)
    except Exception:  # the learner's code may raise anything: a wrapped index, say
        return True
    expected = torch.zeros_like(g).scatter(-1, torch.sort(x.detach(), -1).indices, g)
    return grad.shape != expected.shape or not torch.equal(grad, expected)


def check_saved_indices(forward, indices: torch.Tensor, function=None) -> None:
    """Backward needs the permutation and nothing else: one tensor holding it, the indices or
    the same permutation inverted (which routes the gradient by a gather), in any integer dtype
    that holds every position (int32 halves the bytes; int16 or int8 hold short rows only), at
    most the returned indices' 8 bytes per element."""
    names = {"input x": "its input x", "output": "the values"}
    for saved in forward.saved:
        if saved.dtype.is_floating_point:
            what = names.get(saved.role, f"an intermediate of shape {saved.shape}")
            raise GradingError(f"SortWithIndices saves {what} with save_for_backward: backward "
                               "needs only where each value came from; save the indices alone",
                               mistake="SortWithIndices/saves-float-tensor")
    inverse = torch.argsort(indices, dim=-1) if indices.dim() else indices
    held = [saved for saved in forward.saved if _holds_permutation(saved.tensor, indices, inverse)]
    if not held:
        raise GradingError("SortWithIndices did not save its indices: backward needs them; "
                           "call ctx.save_for_backward(indices)")
    extra = [saved for saved in forward.saved if not any(saved is h for h in held)]
    if len(held) == 1 and extra:
        what = ", ".join(f"a tensor of shape {tuple(s.shape)} ({str(s.dtype)[6:]})" for s in extra)
        raise GradingError(
            f"SortWithIndices saves, besides the permutation, {what} that backward does not "
            "need to route the gradient: the contract asks forward to save what backward needs "
            "and nothing besides; what does backward read of each saved tensor?",
            mistake="SortWithIndices/saves-beyond-permutation")
    total = sum(saved.nbytes for saved in forward.saved)
    if total > indices.numel() * indices.element_size() or len(held) > 1:
        raise GradingError(f"SortWithIndices saves {total} bytes in {len(forward.saved)} "
                           "tensors: one permutation is all backward needs (the indices, or "
                           "their inverse, not both); save one",
                           mistake="SortWithIndices/saves-more-than-one-permutation")
    narrow = held[0].dtype
    if (function is not None and torch.iinfo(narrow).max < 2 ** 31 - 1
            and _overflows(function, narrow, indices.device)):
        raise GradingError(
            f"SortWithIndices saves the permutation as {str(narrow)[6:]}, which holds positions "
            f"up to {torch.iinfo(narrow).max}: on rows of {torch.iinfo(narrow).max + 2} entries "
            "its gradient is wrong. The contract takes rows of any length: which integer dtype "
            "holds every position of such a row?",
            case=f"x of shape (2, {torch.iinfo(narrow).max + 2})",
            mistake="SortWithIndices/indices-narrowed")


def check_backward_memory(function, device) -> None:
    """Backward's memory grows with x, not with the square of a row's length: at most
    BACKWARD_BYTES_PER_ELEMENT bytes per element of x on rows of BACKWARD_ROW entries, where an
    n x n permutation matrix per row (a one-hot of the indices, multiplied in) takes 8n."""
    leaf = sample((4, BACKWARD_ROW), device, seed=15).requires_grad_()
    values, _ = function.apply(leaf)
    g = noise(values, 16)
    with AllocationLog() as log:
        torch.autograd.grad(values, leaf, g)
    per_element = log.bytes / leaf.numel()
    if per_element > BACKWARD_BYTES_PER_ELEMENT:
        ops = ", ".join(dict.fromkeys(log.ops))
        raise GradingError(
            f"SortWithIndices's backward allocates {per_element:.0f} bytes per element of x on "
            f"rows of {BACKWARD_ROW} (ops: {ops}), more than the contract's "
            f"{BACKWARD_BYTES_PER_ELEMENT}, whatever a row's length: something in it grows with "
            "the square of a row's length. Which of these ops builds a tensor of n x n per row, "
            "and can the indices route the gradient without it?",
            mistake="SortWithIndices/backward-memory-grows-with-row")
