"""Lesson 13: rms_norm_rows's answers whose kernels, saved values or buffers go wrong in ways the
targeted probes name (rstd saved or read otherwise, partial rows unwritten or kept between
calls, masked lanes, half-precision steps, copies of the inputs saved), and correct ones written
otherwise."""

from .. import Mistake, Unusual
from .common import _edit
from .rms_norm_rows import RMS
from .rms_norm_rows_groups import GROUPS
from .variants import (RMS_EMPTY_PARTIALS, RMS_FROM_SAVED_OUTPUT,
                       RMS_RSTD_UNREAD, _CACHE_GLOBAL, _GRAD_X, _KEPT, _PARTIALS,
                       _SAVE, _SQUARES_IN_HALF, _TWO_SIZES, _WEIGHT_CACHE, _Y)


MISTAKES = [
    Mistake("rms_norm_rows", "masked loads without other= feeding tl.sum",
            "a masked load without other= feeds a result of rms_norm_rows", _edit(
                RMS,
                ("    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
                 "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n",
                 "    x = tl.load(x_ptr + row * D + columns, mask=mask)\n"
                 "    w = tl.load(w_ptr + columns, mask=mask)\n"))),
    Mistake("rms_norm_rows", "the mean over the row divided by BLOCK_D, not D",
            "right for rows of 8 (a power of two", _edit(
                RMS,
                ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                 "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / BLOCK_D + eps)"),
                ("tl.sum(grad_hat * x_hat, axis=0) / D)",
                 "tl.sum(grad_hat * x_hat, axis=0) / BLOCK_D)"))),
    Mistake("rms_norm_rows", "y saved, x_hat recovered as y / weight",
            "not finite where a weight entry is 0",
            RMS_FROM_SAVED_OUTPUT),
    Mistake("rms_norm_rows", "rstd saved and passed, the backward kernel summing x**2 again",
            "does not read the rstd that forward saved", RMS_RSTD_UNREAD),
    Mistake("rms_norm_rows", "partial rows from torch.empty summed with no rows",
            "reads memory that no kernel wrote", RMS_EMPTY_PARTIALS),
    Mistake("rms_norm_rows", "rstd saved twice, two tensors of one value per row",
            "the contract's budget is one such tensor besides the inputs", _edit(
                RMS, ("    ctx.save_for_backward(x, weight, output[1])",
                      "    ctx.save_for_backward(x, weight, output[1], output[1])"),
                ("    x, weight, rstd = ctx.saved_tensors",
                 "    x, weight, rstd, _ = ctx.saved_tensors"))),
    Mistake("rms_norm_rows", "the backward's grid (the number of rows) kept in a module global "
            "by forward", _TWO_SIZES, _edit(
                RMS,
                ("    rows = x.reshape(-1, D).contiguous()\n",
                 "    rows = x.reshape(-1, D).contiguous()\n"
                 "    global ROWS\n    ROWS = rows.shape[0]\n"),
                ("        rms_norm_backward_kernel[(rows.shape[0],)](",
                 "        rms_norm_backward_kernel[(ROWS,)]("))),
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
    Mistake("rms_norm_rows", "partial rows kept per shape in a global, fully overwritten by "
            "every call", _KEPT, _edit(RMS, (_PARTIALS, (
                "    partial_w = _WORKSPACE.setdefault((rows.shape, rstd.dtype, x.device),\n"
                "                                      torch.empty(rows.shape, device=x.device,\n"
                "                                                  dtype=rstd.dtype))\n")),
                ('@torch.library.custom_op("autograd_course::rms_norm_rows_backward"',
                 '_WORKSPACE = {}\n\n\n@torch.library.custom_op('
                 '"autograd_course::rms_norm_rows_backward"'))),
    Mistake("rms_norm_rows", "y saved, x_hat = y / w, the weight's masked-off lanes loaded as 0",
            "x_hat recovered from y / w?", _edit(
                RMS, ("    x_hat = x * rstd\n", "    x_hat = x / w  # x here is y\n"),
                ("    ctx.save_for_backward(x, weight, output[1])",
                 "    ctx.save_for_backward(output[0], weight, output[1])"))),
    Mistake("rms_norm_rows", "float16 forward: x * x squared in float16, then summed in "
            "float32 (bfloat16 converted first)",
            "squares x * x computed in float16", _edit(RMS, _SQUARES_IN_HALF)),
    Mistake("rms_norm_rows", "setup_context saves y as well as x, weight and rstd",
            "saves an extra tensor of shape (3, 2, 5) (the output y)",
            _edit(RMS, ("    ctx.save_for_backward(x, weight, output[1])",
                        "    ctx.save_for_backward(x, weight, output[1], output[0])"),
                  ("    x, weight, rstd = ctx.saved_tensors",
                   "    x, weight, rstd, _y = ctx.saved_tensors"))),
    Mistake("rms_norm_rows", "a contiguous copy of weight cached by data_ptr between calls",
            "keeps a copy of weight from an earlier call",
            _edit(RMS, _CACHE_GLOBAL, _WEIGHT_CACHE)),
    Mistake("rms_norm_rows", "a copy of weight cached by data_ptr and _version between calls",
            "keeps a copy of weight from an earlier call",
            _edit(RMS, _CACHE_GLOBAL, (_WEIGHT_CACHE[0], _WEIGHT_CACHE[1].replace(
                "weight.dtype)", "weight.dtype, weight._version)")))),
    Mistake("rms_norm_rows", "each program's partial row added into one row with tl.atomic_add",
            "adds into shared memory with an atomic operation (tl.atomic_add)",
            _edit(GROUPS,
                  ("    tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)",
                   "    tl.atomic_add(partial_w_ptr + columns, partial_w, mask=mask)"),
                  ("    partial_w = torch.empty(programs, D, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.zeros(1, D, device=x.device, dtype=rstd.dtype)"))),
    Mistake("rms_norm_rows", "eps added to the sum of squares, then divided by D",
            "adds eps to the sum of squares before dividing by D",
            _edit(RMS, ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                        "    rstd = 1 / tl.sqrt((tl.sum(x * x, axis=0) + eps) / D)"))),
    Mistake("rms_norm_rows", "x.contiguous() and weight.contiguous() saved (w_r9)",
            "saves a copy of x for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x.contiguous(), weight.contiguous(),"
                               " output[1])"))),
    Mistake("rms_norm_rows", "weight.contiguous() saved, x as it came",
            "saves a copy of weight for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x, weight.contiguous(), output[1])"))),
    Mistake("rms_norm_rows", "x saved cast to float32 (a copy for half input)",
            "saves a copy of x for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x.float(), weight, output[1])"))),
    Mistake("rms_norm_rows", "partial rows of the weight's gradient allocated in x's dtype "
            "(each row's share rounded to float16 before the sum)",
            "the gradient for weight loses precision in torch.float16",
            _edit(RMS, ("partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                        "partial_w = torch.empty(rows.shape, device=x.device, dtype=x.dtype)"))),
    Mistake("rms_norm_rows", "the row gradient scaled by r squared, not r",
            "your gradient for x is wrong",
            _edit(RMS, ("    grad_x = rstd * (grad_hat", "    grad_x = rstd * rstd * (grad_hat"))),
]
