"""Lesson 06's multi-head layout case, shared by the four attention exercises: Q, K, V as
x.view(B, L, H, d).transpose(1, 2), whose dimensions .view cannot merge without a copy; and
grad_output in the same layout, as it arrives from out.transpose(1, 2).reshape(B, L, H * dv)."""

import torch

from ...checks import make_inputs
from ...diagnose import diagnose_gradient
from ...errors import GradingError
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
            raise GradingError(_view_hint(name, "Q, K, V"), str(error), where,
                               mistake=f"{name}/view-on-multihead-layout") from error
        raise GradingError(hint, error.details, where, mistake=error.mistake) from error


def _view_hint(name: str, what: str) -> str:
    made = ("(B, H, L, d) made by x.view(B, L, H, d).transpose(1, 2)" if what == "Q, K, V" else
            "(B, H, Lq, dv) as out.transpose(1, 2).reshape(B, Lq, H * dv) sends it back")
    return (f"{name} raises in .view on {what} of the standard multi-head layout, "
            f"{made}, and passes on contiguous copies of the same numbers: .view cannot "
            "merge dimensions of such a tensor (the leading (B, H) into one, say) without a "
            "copy; use .reshape, or let batched @ (torch.matmul) run over every leading "
            "dimension")


GRAD_OUTPUT = "grad_output laid out as (B, L, H, dv).transpose(1, 2)"


def _gradients(apply, values: dict, grad_output) -> list:
    inputs = make_inputs(values)
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    return list(torch.autograd.grad(apply(*inputs.values()), wanted, grad_output,
                                    allow_unused=True))


def check_grad_output_layout(function, name: str, values: dict, reference, where: str) -> None:
    """Q, K, V (B, H, L, d) and grad_output (B, H, Lq, dv) all in the multi-head layout, as in
    ``out.transpose(1, 2).reshape(B, L, H * dv) @ W``: the gradients against ``reference``'s.
    A .view error is named grad_output's only when the same inputs pass with a contiguous
    grad_output."""
    laid = multihead_layout(values)
    with torch.no_grad():
        shape = reference(**make_inputs(values, requires_grad=False)).shape
    generator = torch.Generator().manual_seed(7)
    grad_output = torch.randn(shape, generator=generator, dtype=torch.float64).to(values["Q"])
    grad_output = grad_output.transpose(1, 2).contiguous().transpose(1, 2)
    names = [n for n, v in values.items() if isinstance(v, torch.Tensor)
             and v.is_floating_point()]
    where = f"{where}, {MULTIHEAD}, {GRAD_OUTPUT}"
    try:
        grads = _gradients(function.apply, laid, grad_output)
    except Exception as error:  # the learner's code may raise anything
        if VIEW_ERROR in str(error):
            try:
                _gradients(function.apply, laid, grad_output.contiguous())
            except Exception:  # noqa: BLE001 - not the layout of grad_output alone
                pass
            else:
                raise GradingError(_view_hint(name, "grad_output"), str(error), where,
                                   mistake=f"{name}/view-on-multihead-grad-output") from error
        raise GradingError(f"{name}.backward raised {type(error).__name__} with grad_output in "
                           f"the multi-head layout: {str(error).splitlines()[0]}", str(error),
                           where) from error
    truth = _gradients(reference, values, grad_output.contiguous())
    for name_, grad, true in zip(names, grads, truth):
        try:
            diagnose_gradient(name_, grad, true)
        except GradingError as error:
            raise GradingError(error.hint, error.details, where,
                               mistake=error.mistake) from error


def _passes(check, function, values: dict) -> bool:
    try:
        check(function, values)
    except Exception:  # the learner's code may raise anything: the probe is not proven
        return False
    return True
