"""Lesson 13: what review 58 found passing or misnamed, now named: rms_norm_rows's output
formed as a float16 product (x_hat rounded to float16, times the float16 weight) and its
gradient for x as rstd times the bracket in float16, both off by tens of ulp where x_hat (or
the bracket) lies below float16's smallest normal; and weight-gradient partial rows kept per D
between calls and summed whole (the hint blamed BLOCK_D)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

_Y = ("    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), "
      "mask=mask)\n")
_GRAD_X = "    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)\n"
_PARTIALS = "    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)\n"

MISTAKES = [
    Mistake("rms_norm_rows",
            "float16 forward: x_hat rounded to float16 before the product with the weight",
            "rms_norm_rows's output in float16 is", _edit(RMS, (_Y, (
                "    if y_ptr.dtype.element_ty == tl.float16:\n"
                "        y = (x * rstd).to(tl.float16) * w.to(tl.float16)\n"
                "    else:\n"
                "        y = x * rstd * w\n"
                "    tl.store(y_ptr + row * D + columns, y.to(y_ptr.dtype.element_ty), "
                "mask=mask)\n")))),
    Mistake("rms_norm_rows", "float16 backward: rstd times the bracket, both rounded to float16",
            "rms_norm_rows's gradient for x in float16 is", _edit(RMS, (_GRAD_X, _GRAD_X + (
                "    if grad_x_ptr.dtype.element_ty == tl.float16:\n"
                "        grad_x = rstd.to(tl.float16) * (grad_hat - x_hat * tl.sum(grad_hat * "
                "x_hat, axis=0) / D).to(tl.float16)\n")))),
    Mistake("rms_norm_rows",
            "weight-gradient partial rows kept per D between calls, summed whole",
            "changes after a call on x of (40, 5)", _edit(RMS, (_PARTIALS, (
                "    key = (D, rstd.dtype, x.device)\n"
                "    if key not in _KEPT or _KEPT[key].shape[0] < rows.shape[0]:\n"
                "        _KEPT[key] = torch.zeros(max(rows.shape[0], 64), D, device=x.device,\n"
                "                                 dtype=rstd.dtype)\n"
                "    partial_w = _KEPT[key]  # rows past this call's keep an earlier call's\n")),
                ("@torch.library.custom_op(\"autograd_course::rms_norm_rows_backward\"",
                 "_KEPT = {}\n\n\n@torch.library.custom_op("
                 "\"autograd_course::rms_norm_rows_backward\""))),
]
