"""Lesson 13: rms_norm_rows's inputs in layouts other than contiguous: each read as flat memory
by a kernel is named, and which tensor (a strided weight saved for the backward kernel, read
flat there, is the forward's right output and the gradients wrong). A non-contiguous
grad_output is the domain's property (autograder.grad_output_layout); an expanded one read flat
is named by kernel_memory."""

import torch

from ...checks import case
from ...contract import covers
from ...errors import GradingError
from ...exercise import sample
from .kernel_checks import explain
from .rms_norm_spec import EPS, RMS_NORM_ROWS
from .rms_norm_spec import checked as _checked
from .rms_norm_spec import right as _right


def check_strided_weight(function, device) -> None:
    """weight a view with stride 2 (every other element of its base, the leaf), x contiguous:
    the leaves check_rows makes are dense copies, so only this call hands a kernel a strided
    weight. Right if it matches the reference or the same call with a contiguous weight (a
    precision mistake is another check's); otherwise named: weight, and the backward when the
    output is right."""
    x = sample((4, 6), device, seed=3)
    base = 1 + sample((12,), device, seed=4)
    grad_output = sample((4, 6), device, seed=5)

    def run(call, strided: bool):
        leaves = (x.clone().requires_grad_(), (base if strided else base[::2]).clone()
                  .requires_grad_())
        try:
            out = call(leaves[0], leaves[1][::2] if strided else leaves[1], EPS)
            grad_x, grad_w = torch.autograd.grad(out, leaves, grad_output)
        except (GradingError, NotImplementedError):
            raise
        except Exception as error:
            raise explain("rms_norm_rows", "call with a strided weight", error) from error
        return out.detach(), grad_x, grad_w[::2] if strided else grad_w

    got = run(function, True)
    dense, truth = run(function, False), run(RMS_NORM_ROWS.reference, True)
    if any(all(torch.allclose(g, w, rtol=1e-9, atol=1e-10) for g, w in zip(got, want))
           for want in (truth, dense)):
        return
    forward = torch.allclose(got[0], dense[0], rtol=1e-9, atol=1e-10)
    raise GradingError(
        "rms_norm_rows is wrong for a weight that is a strided view (every other element of a "
        "tensor: stride 2), x contiguous, and gives other values for the same weight "
        "contiguous: " + (
            "its output is the same and its gradients differ: the weight saved for backward "
            "is that view, and the backward kernel reads it as flat memory (made contiguous in "
            "the forward only?): make it contiguous before the backward kernel reads it too"
            if forward else "a kernel indexes flat memory: make weight contiguous on the host "
            "(weight.contiguous()) or pass its stride to the kernel"),
        case="weight a strided slice", mistake="rms_norm_rows/strided-read-as-flat")


def check_non_contiguous(function, device) -> None:
    covers("non-contiguous inputs")
    # the leaves check_rows makes are copies, dense for a slice: check_strided_weight, after
    # these, hands the kernels a strided weight
    strided = {"x transposed":
               {"x": sample((6, 4), device, seed=3).t(),
                "weight": 1 + sample((12,), device, seed=4)[::2], "eps": EPS},
               # no view flattens these rows (x.view(-1, D) raises): reshape copies them
               "x of shape (2, 4, 6), its last two dims transposed":
               {"x": sample((2, 6, 4), device, seed=3).mT,
                "weight": 1 + sample((6,), device, seed=4), "eps": EPS}}
    for where, values in strided.items():
        try:
            with case(where):
                _checked(function, values)
        except GradingError as error:
            dense = {n: v.contiguous() if isinstance(v, torch.Tensor) else v
                     for n, v in values.items()}
            if not _right(function, dense):
                raise
            raise GradingError(
                "rms_norm_rows is right for contiguous inputs but wrong for the same values in "
                "a transposed or strided view: a kernel indexes flat memory, so make the inputs "
                "contiguous on the host (x.contiguous()) or pass their strides to the kernel",
                error.details, case=where,
                mistake="rms_norm_rows/strided-read-as-flat") from error
    check_strided_weight(function, device)
