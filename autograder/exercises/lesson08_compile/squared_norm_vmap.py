"""Lesson 08's squared_norm under torch.vmap: its batching rule against a loop over the
samples, with x's batch dim first, between a sample's dims and last, and the wrong results
named when they are what a rule with one of the lesson's common mistakes returns."""

import torch

from ...checks import Spec, case
from ...diagnose import diagnose_values
from ...errors import GradingError
from ...exercise import sample
from .operators import raised_error, registration_error

SQUARED_NORM = Spec("squared_norm", ("x", "dim"), lambda x, dim: (x * x).sum(dim))
BATCHED = (5, 2, 3, 4)  # a batch of 5 samples of shape (2, 3, 4): vmap over every dim of one
# x's batch dim besides 0, in torch.vmap's in_dims: between a sample's dims, and last (as -1)
BATCH_POSITIONS = (1, -1)


def _operator_error(phase: str, error: Exception, dim) -> GradingError:
    """A hint for an error the operator raised, named only from PyTorch's own message."""
    named = registration_error("squared_norm", "dim", error)
    if named is not None:
        return named
    message = str(error)
    if phase.startswith("batching rule") and "is invalid for input of size" in message:
        return GradingError(
            f"squared_norm's batching rule reshapes x into sizes it does not have (dim={dim}): "
            "it folds the batch dim into a sample's dim and back, but the reduction removes a "
            "dim, so the sizes it reshapes back to no longer multiply out to the output's; "
            "keep the batch dim its own dim and reduce the sample's dim past it",
            message, mistake="squared_norm/rule-folds-batch")
    return raised_error("squared_norm", phase, error, f"dim={dim}")


class BatchWritten(GradingError):
    """The rule wrote into the caller's batch: raised at once, never taken for a wrong value."""


def _vmapped(squared_norm, batch, dim, position=0, phase="batching rule (under torch.vmap)"):
    before, version = batch.clone(), batch._version
    try:
        out = torch.vmap(squared_norm, in_dims=(position, None))(batch, dim)
    except Exception as error:
        raise _operator_error(phase, error, dim) from error
    if batch._version != version or not torch.equal(batch, before):
        raise BatchWritten(
            "squared_norm's batching rule modified its input x in place: under torch.vmap it "
            f"wrote into the caller's batch (shape {tuple(batch.shape)}, in_dims=({position}, "
            f"None), dim={dim}), as a forward or backward must not either: the operator "
            "promises mutates_args=(), and a view of x (movedim, transpose) shares x's memory; "
            "compute a new tensor instead", mistake="squared_norm/rule-writes-input")
    return out


def _matches(got, loop) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == loop.shape
            and torch.allclose(got, loop))


def _where(q: int, position: int, n: int) -> str:
    """How a rule placed x's batch dim at q (of n dims), for a message."""
    if q % n == position % n:
        return "leaving x's batch dim where in_dims puts it"
    return "moving x's batch dim to the front" if q % n == 0 else "moving x's batch dim last"


def _placements(position: int, n: int):
    """Where a rule may put x's batch dim before its one call: left in place, first or last
    (in that order: where two say the same, the first is named)."""
    return list(dict.fromkeys((position % n, 0, n - 1)))


def _unchanged_dim(batch, position: int, dim: int, q: int):
    """What vmap returns from a rule that moves x's batch dim to q and passes dim on unchanged,
    reporting where the batch dim really ends up (None: that dim is the batch dim itself)."""
    n = batch.dim()
    reduced = dim % n
    if reduced == q:
        return None
    out = SQUARED_NORM.reference(batch.movedim(position % n, q), reduced)
    return out.movedim(q - (reduced < q), 0)


def _reports_in_dims(loop, position: int, dim: int, q: int, n: int):
    """What vmap returns from a rule that moves x's batch dim to q, reduces the right dim and
    reports in_dims[0] (``position``, as given or counted from the front) as the output's batch
    dim; None where vmap could not take that out_dims."""
    left_at = q - (dim % (n - 1) < q)  # where the sum leaves the batch dim
    batched = loop.movedim(0, left_at)
    shapes = []
    for reported in dict.fromkeys((position, position % n)):
        try:
            shapes.append(batched.movedim(reported, 0))
        except (IndexError, RuntimeError):
            pass
    return shapes or None


def _holds(wrong, predict) -> bool:
    """Does every wrong tensor result match the prediction (where there is one), and one at
    least? A dim the prediction cannot say (None) is left out."""
    matched = False
    for dim, got, _ in wrong:
        predicted = predict(dim)
        if predicted is None:
            continue
        if not isinstance(got, torch.Tensor):
            return False
        if not any(_matches(got, p) for p in (predicted if isinstance(predicted, list)
                                               else [predicted])):
            return False
        matched = True
    return matched


def _relabelled(got, loop):
    """(where the batch dim was, where out_dims said) when ``got`` is the right result with
    its batch dim reported at the wrong place, else None."""
    if not isinstance(got, torch.Tensor) or got.dim() != loop.dim() or got.shape == loop.shape:
        return None
    for left_at in range(loop.dim()):
        raw = loop.movedim(0, left_at)
        for reported in range(loop.dim()):
            if reported != left_at and _matches(got, raw.movedim(reported, 0)):
                return left_at, reported
    return None


def _assumes_batch_dim_first(got, batch, dim: int) -> bool:
    """Is got the batched x reduced at the dim a rule uses when it takes the batch dim to be
    at 0 without looking at in_dims (dim + 1, a negative dim unchanged), reported at 0?"""
    return _matches(got, SQUARED_NORM.reference(batch, dim + 1 if dim >= 0 else dim))


def _negative_dim_unchanged(batch, b: int, wrong, shown: str) -> None:
    """Raise when exactly the negative dims that name a sample's dim before the batch dim are
    wrong, every result predictable there being what a rule gives that leaves the batch dim in
    place and passes a negative dim on unchanged (it then names the batched x's dim one
    further on, the batch dim itself where that is next)."""
    n = batch.dim()
    before = {dim for dim in range(-(n - 1), 0) if dim % (n - 1) < b}
    if not before or {dim for dim, _, _ in wrong} != before:
        return
    for dim, got, _ in wrong:
        reduced = dim % n
        if reduced != b and not (isinstance(got, torch.Tensor) and _matches(
                got, SQUARED_NORM.reference(batch, reduced).movedim(b - (reduced < b), 0))):
            return
    dim = min(before)
    what = "the batch dim itself" if dim % n == b else "another dim of a sample"
    raise GradingError(
        f"squared_norm under torch.vmap is right for every dim >= 0 but wrong for dim={dim} "
        f"with {shown}, as for every negative dim that names a sample's dim before the batch "
        f"dim: counted from the end of the batched x, that sample's dim is at {dim - 1}, not "
        f"{dim}, since the batch dim comes after it; dim={dim} passed on unchanged names dim "
        f"{dim % n} of the batched x, {what}",
        mistake="squared_norm/negative-dim-not-shifted")


def _transposed(batch, position: int, dim: int, q: int):
    """What vmap returns from a rule that swaps x's batch dim with dim q by transpose (not
    movedim) and then counts a sample's dim as if the other dims kept their order."""
    n = batch.dim()
    b = position % n
    if b == q:
        return None
    d = dim % (n - 1)
    reduced = d + (d >= q)  # where the sample's dim d would be with the batch dim at q
    out = SQUARED_NORM.reference(batch.transpose(b, q), reduced)
    return out.movedim(q - (reduced < q), 0)


def _vmap_at(squared_norm, samples, position: int) -> None:
    """torch.vmap with x's batch dim at ``position``, against a loop over the samples, for every
    dim of a sample; a wrong result is named when it is what a rule with one of the lesson's
    common mistakes returns: dim passed on unchanged (batch dim first, last or in place), a
    sample's dim d at the batch dim's own place not counted past it (> for >=), the input's batch
    dim reported as the output's, or the batch dim assumed at 0."""
    batch = samples.movedim(0, position)
    n = batch.dim()
    sample_dims = n - 1
    wrong = []
    for dim in range(-sample_dims, sample_dims):
        loop = torch.stack([SQUARED_NORM.reference(x, dim) for x in batch.unbind(position)])
        try:
            got = _vmapped(squared_norm, batch, dim, position)
        except BatchWritten:
            raise
        except GradingError as error:
            got = error
        if not _matches(got, loop):
            wrong.append((dim, got, loop))
    if not wrong:
        return
    b = position % n
    shown = (f"x's batch dim at {b} (in_dims=({position}, None)) in an x of shape "
             f"{tuple(batch.shape)}")
    loops = {dim: loop for dim, _, loop in wrong}
    tensors = [(dim, got, loop) for dim, got, loop in wrong if isinstance(got, torch.Tensor)]
    shown_dim = max(dim for dim, _, _ in wrong)  # a non-negative one where there is one
    for q in _placements(position, n):
        if _holds(wrong, lambda dim: _unchanged_dim(batch, position, dim, q)):
            if b == 0 and all(dim >= 0 for dim, _, _ in wrong):
                raise GradingError(
                    "squared_norm under torch.vmap is right for negative dims but wrong for "
                    "dim >= 0: the rule sees x with the batch dimension in it, so a non-negative "
                    "dim of one sample names another dimension of the batched x: which one, "
                    "given where the batch dim is?",
                    f"dim={wrong[0][0]}: got shape {tuple(getattr(wrong[0][1], 'shape', ()))}, "
                    f"expected {tuple(wrong[0][2].shape)}", mistake="squared_norm/dim-not-shifted")
            dim = min(dim for dim, _, _ in wrong)
            raise GradingError(
                f"squared_norm under torch.vmap reduces the wrong dim of a sample: with {shown} "
                f"and dim={dim}, it gives what a rule gives that passes dim on unchanged after "
                f"{_where(q, position, n)} (or shifts dim by one where it must not): the rule "
                "sees x with the batch dim in it, so which dim of the batched x a sample's dim "
                "is, counted from the front or from the end, depends on where the batch dim is; "
                "translate dim past the batch dim, wherever it is",
                mistake="squared_norm/dim-not-shifted")
    if b < sample_dims and {dim for dim, _, _ in wrong} == {
            dim for dim in range(-sample_dims, sample_dims) if dim % sample_dims == b}:
        relabelled = [_relabelled(got, loop) for _, got, loop in wrong]
        if all(relabelled):
            dim, got, loop = wrong[0]
            left_at, reported = relabelled[0]
            raise GradingError(
                f"squared_norm's batching rule reduces the right dim but returns the wrong "
                f"out_dims where a sample's dim is {b}, the batch dim's own place (dim={dim}, "
                f"with {shown}): its one call leaves the batch dim at {left_at} of the output, "
                f"and out_dims says {reported}; the reduced dim comes before the batch dim only "
                f"when d < the batch dim's place (<, not <=)",
                f"got shape {tuple(got.shape)}, the loop's {tuple(loop.shape)}",
                mistake="squared_norm/out-dims-wrong-at-tie")
        raise GradingError(
            f"squared_norm's batching rule goes wrong only where a sample's dim is {b}, the "
            f"batch dim's own place (dim={b} and dim={b - sample_dims}, with {shown}): there it "
            f"reduces the batch dim itself; a sample's dim d is d + 1 of the batched x when "
            f"d >= the batch dim's place (>=, not >), and d when it comes before",
            mistake="squared_norm/dim-not-shifted")
    _negative_dim_unchanged(batch, b, wrong, shown)
    for q in _placements(position, n):
        if q % n == n - 1 and position % n == n - 1:
            continue  # batch last, reported last: right
        if tensors and _holds(wrong, lambda dim: _reports_in_dims(loops[dim], position, dim, q, n)):
            dim = shown_dim
            if q == b:
                raise GradingError(
                    "squared_norm's batching rule returns x's batch dim as the output's (an "
                    "element-wise rule's out_dims): right when the batch dim is at 0, where "
                    f"nothing comes before it; but with {shown} and dim={dim}, the reduction "
                    "removes a dim before the batch dim: where is the batch dim in the output "
                    "then? (an element-wise op keeps every dim, a sum does not)",
                    mistake="squared_norm/out-dims-is-in-dims")
            raise GradingError(
                f"squared_norm's batching rule returns in_dims[0] ({position}) as the output's "
                f"batch dim after {_where(q, position, n)}: the output's batch dim is where the one "
                f"call left it (with {shown} and dim={dim}, at {q - (dim % sample_dims < q)} of "
                "the output), not where it was in x", mistake="squared_norm/out-dims-is-in-dims")
    for q in (0, n - 1):
        if tensors and _holds(wrong, lambda dim: _transposed(batch, position, dim, q)):
            raise GradingError(
                f"squared_norm's batching rule reorders a sample's dims: with {shown} and "
                f"dim={shown_dim}, it gives what a rule gives that swaps x's batch dim with dim "
                f"{q} by transpose: the sample's dim that was at {q} lands at {b}, out of order "
                "with the others; which op moves one dim and keeps the order of the rest?",
                mistake="squared_norm/transposed-batch-dim")
    if tensors and all(_assumes_batch_dim_first(got, batch, dim) for dim, got, _ in tensors):
        raise GradingError(
            "squared_norm's batching rule takes x's batch dim to be at 0 whatever in_dims "
            f"says: right with in_dims=(0, None), wrong with {shown}; in_dims[0] is where the "
            "batch dim is: move it to the front first, or count past it",
            mistake="squared_norm/batch-dim-assumed-first")
    dim, got, loop = wrong[0]
    if isinstance(got, GradingError):
        raise got
    with case(f"torch.vmap over a batch of {BATCHED[0]} samples of shape {BATCHED[1:]} with "
              f"{shown}, dim={dim}"):
        diagnose_values("squared_norm's output under vmap", got, loop)


def check_fresh_batches(squared_norm, device) -> None:
    """Two batches of the same shape with different values, one after the other: each gets its
    own result (a rule that keeps results between calls, keyed by shape or dim, returns the
    first batch's for the second)."""
    dim = 1
    batches = [sample(BATCHED, device, seed=seed) for seed in (40, 41)]
    got = [_vmapped(squared_norm, batch, dim) for batch in batches]
    loop = [SQUARED_NORM.reference(batch, dim + 1) for batch in batches]
    for first, second, want in ((0, 1, loop[1]), (1, 0, loop[0])):
        if (isinstance(got[second], torch.Tensor) and got[second].shape == want.shape
                and not torch.allclose(got[second], want)
                and torch.allclose(got[second], loop[first])):
            raise GradingError(
                "squared_norm's batching rule returns, for a batch of the same shape "
                f"{tuple(BATCHED)} with other values, dim={dim}, the result of an earlier "
                "batch: it keeps results between calls (a cache keyed by shape or dim), state "
                "outside ctx that a rule may not keep; compute each batch's result from its x",
                mistake="squared_norm/rule-keeps-results")


def check_vmap(squared_norm, device) -> None:
    """torch.vmap(squared_norm, in_dims=(b, None)) matches a loop over the samples, for every
    dim of a sample, non-negative and negative, with x's batch dim b first, then between a
    sample's dims and last (a negative b)."""
    samples = sample(BATCHED, device, seed=6)
    for position in (0, *BATCH_POSITIONS):
        _vmap_at(squared_norm, samples, position)
