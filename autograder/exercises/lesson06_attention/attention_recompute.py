"""Lesson 06: MemoryEfficientAttention's and FlashAttention's backward recompute P from the
log-sum-exp L that forward saved, P = exp(S - L), rather than normalising the scores again
(softmax, or a second pass for each row's maximum and sum): L is what saving it was for.

The probe shifts every per-row statistic forward saved by 1 between the passes (through
``.data``, which autograd's version check does not see): a backward that reads L then gives
P / e, and other gradients; one that ignores it gives the very same gradients, and one that
divides exp(S - L) by its row sum again (a second pass over each row) gives them again up to
rounding."""

import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, make_inputs, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference
from ...probes import reachable

SHIFT = 1.0


def _gradients(function, spec: Spec, values: dict, grad_output, shift: float) -> tuple:
    """Q's, K's and V's gradients, with forward's saved per-row statistics shifted by
    ``shift`` before backward; and how many such statistics there were."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    rows = math.prod(values["Q"].shape[:-1])
    statistics = [s.tensor for s in forward.saved if s.role == "intermediate"
                  and s.dtype.is_floating_point and math.prod(s.shape) == rows]
    for statistic in statistics:
        statistic.data.add_(shift)
    grads = torch.autograd.grad(forward.output, [inputs[n] for n in ("Q", "K", "V")],
                                grad_output)
    return grads, len(statistics)


def check_backward_reads_lse(function, spec: Spec, values: dict) -> None:
    """Backward's gradients depend on the saved log-sum-exp."""
    generator = torch.Generator().manual_seed(8)
    Q, V = values["Q"], values["V"]
    grad_output = torch.randn((*Q.shape[:-1], V.shape[-1]), generator=generator,
                              dtype=Q.dtype).to(Q.device)
    plain, count = _gradients(function, spec, values, grad_output, 0.0)
    shifted, _ = _gradients(function, spec, values, grad_output, SHIFT)
    if count and not all(torch.equal(a, b) for a, b in zip(plain, shifted)) and all(
            torch.allclose(a, b, rtol=1e-9, atol=0) for a, b in zip(plain, shifted)):
        # L was read, and then cancelled: exp(S - L - 1) / its row sum is exp(S - L) again
        raise GradingError(
            f"{spec.name}'s backward divides the recomputed probabilities by their row sum "
            f"again: with the {count} per-row number{'s' * (count > 1)} forward saved shifted "
            f"by {SHIFT:g} before backward, the gradients move only by rounding, so a second "
            "pass over each row cancels L, where P = exp(S - L) sums to 1 already: the row sum "
            "that saving L spares is taken again",
            mistake=f"{spec.name}/renormalises-recomputed-probabilities")
    if not count:
        hidden = row_statistic_in_container(function, spec, values)
        if hidden is not None:
            raise GradingError(
                f"{spec.name} keeps a per-row tensor of shape {hidden[1]} in ctx.{hidden[0]}, a "
                "container on ctx, not through ctx.save_for_backward: autograd then neither "
                "guards it against in-place changes nor frees it with the graph, and "
                "saved-tensor hooks never see it; save L with ctx.save_for_backward and read it "
                "back from ctx.saved_tensors " + rule_reference("ctx"),
                mistake=f"{spec.name}/row-statistic-in-ctx-container")
    if all(torch.equal(a, b) for a, b in zip(plain, shifted)):
        kept = (f"with the {count} per-row number{'s' * (count > 1)} forward saved shifted by "
                f"{SHIFT:g} before backward, the gradients are the very same" if count else
                "forward saved no per-row number")
        unread = ("backward has none to read" if not count else "backward does not read it"
                  if count == 1 else "backward reads none of them")
        raise GradingError(
            f"{spec.name}'s backward normalises the scores again instead of recomputing P from "
            f"a saved log-sum-exp L ({kept}): {unread}, so it takes each row's maximum and sum "
            "again, the pass over every row that P = exp(S - L) spares",
            mistake=f"{spec.name}/recomputes-softmax-without-lse")


def row_statistic_in_container(function, spec: Spec, values: dict) -> tuple | None:
    """(The ctx attribute, the tensor's shape) of a per-row statistic (one number per query
    row) that forward kept inside a container on ctx rather than saved."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    rows = math.prod(values["Q"].shape[:-1])
    for attribute, value in forward.ctx_attributes.items():
        if isinstance(value, torch.Tensor):
            continue  # a tensor attribute itself is check_no_ctx_tensors' to name
        for _, tensor in reachable(value, f"ctx.{attribute}"):  # in lists, tuples, dicts
            if tensor.dtype.is_floating_point and tensor.numel() == rows:
                return attribute, tuple(tensor.shape)
    return None


# the ops that take a row's maximum (or normalise a row, which takes it inside)
_ROW_MAXIMUM_OPS = {"amax", "max", "aminmax", "logsumexp", "_softmax", "_log_softmax"}


class _RowMaxima(TorchDispatchMode):
    """Records each op of ``_ROW_MAXIMUM_OPS`` run on a tensor shaped as the scores."""

    def __init__(self, scores_shape: tuple):
        super().__init__()
        self.scores_shape, self.found = scores_shape, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if (name in _ROW_MAXIMUM_OPS and args and isinstance(args[0], torch.Tensor)
                and tuple(args[0].shape[-2:]) == self.scores_shape):
            self.found.append(f"{name} on a tensor of shape {tuple(args[0].shape)}")
        return func(*args, **(kwargs or {}))


def check_no_second_row_maximum(function, spec: Spec, values: dict) -> None:
    """Backward takes no maximum over a tensor shaped as the scores (Lq x Lk): P = exp(S - L)
    needs none, and one read beside L (P = exp(S - m) * exp(m - L)) is a second pass over
    each row that the shift probe cannot see, since the gradients still move with L."""
    inputs = make_inputs(values)
    output = run_forward(function, spec, inputs).output
    grad_output = torch.ones_like(output)
    scores_shape = (values["Q"].shape[-2], values["K"].shape[-2])
    with _RowMaxima(scores_shape) as books:
        torch.autograd.grad(output, [inputs[n] for n in ("Q", "K", "V")], grad_output,
                            allow_unused=True)
    if books.found:
        raise GradingError(
            f"{spec.name}'s backward takes each row's maximum again ({books.found[0]}, the "
            f"scores' {scores_shape[0]} x {scores_shape[1]}): a second pass over each row, "
            "where P = exp(S - L) needs no row maximum and no row sum",
            mistake=f"{spec.name}/backward-takes-row-maximum-again")
