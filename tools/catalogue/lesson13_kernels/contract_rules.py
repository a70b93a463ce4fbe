"""Lesson 13: answers about the Function contract's rules and what setup_context saves (review
75). silu_mul: the output saved as well as a and b (the contract saves no tensor beyond them),
contiguous copies of a and b saved and a placeholder made without device= (review 80), an
empty input returned as the output, a call counter in a module global (rule 4), the output
allocated without device= (rule 1's device clause, seen on a GPU only), both gradients returned
when one input requires grad (rule 2); rms_norm_rows: a count
in a module global, the weight's gradient returned when only x requires grad (rule 2), the
buffers allocated without device=, and the weight's gradient left in float32 for a half weight,
its fake saying so (rule 2: autograd casts it back without a word, after the float32 work)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_UNGATED = ("    return (grad_x if ctx.needs_input_grad[0] else None,\n"
            "            grad_weight if ctx.needs_input_grad[1] else None, None)",
            "    return grad_x, grad_weight, None")

MISTAKES = [
    Mistake("silu_mul", "setup_context saves a, b and the output y (unused)",
            "silu_mul saves an extra tensor of shape (3, 5) (the output y)", _edit(
                SILU_MUL, ("    ctx.save_for_backward(*inputs)",
                           "    ctx.save_for_backward(*inputs, output)"),
                ("    a, b = ctx.saved_tensors", "    a, b, _ = ctx.saved_tensors"))),
    Mistake("silu_mul", "an empty input returned as it is (the output aliases a)",
            "returns one of its own inputs (or a view of one) as its output y", _edit(
                SILU_MUL, ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)",
                           "    if a.numel() == 0:\n        return a\n"
                           "    a, b = a.contiguous(), b.contiguous()\n"
                           "    y = torch.empty_like(a)"))),
    # rule 1's device clause inside an operator's body: the shared default-device check runs
    # the body inside its mode, so a CPU run sees it too
    Mistake("silu_mul", "the output allocated without device= (the default device)",
            "made a tensor on the default device (torch.empty without device=)",
            _edit(SILU_MUL, ("    y = torch.empty_like(a)\n    silu_mul_kernel",
                             "    y = torch.empty(a.shape, dtype=a.dtype)\n    silu_mul_kernel"))),
    # review 80's W19: a copy of each input saved, seen where a and b are SwiGLU's halves,
    # h.chunk(2, -1), not contiguous (for a contiguous input .contiguous() is the input itself)
    Mistake("silu_mul", "a.contiguous() and b.contiguous() saved",
            "silu_mul saves a copy of a for backward", _edit(
                SILU_MUL, ("    ctx.save_for_backward(*inputs)",
                           "    ctx.save_for_backward(*(t.contiguous() for t in inputs))"))),
    # review 80's W55: the empty placeholder for a gradient not needed made without device=,
    # seen by the default-device probe run with one input frozen
    Mistake("silu_mul", "the placeholder for a gradient not needed made without device=",
            "made a tensor on the default device (torch.empty without device=)", _edit(
                SILU_MUL, ("    grad_a = torch.empty_like(a) if need_a else a.new_empty(0)\n"
                           "    grad_b = torch.empty_like(b) if need_b else b.new_empty(0)\n",
                           "    grad_a = torch.empty_like(a) if need_a else torch.empty(0, dtype=a.dtype)\n"
                           "    grad_b = torch.empty_like(b) if need_b else torch.empty(0, dtype=b.dtype)\n"))),
    Mistake("silu_mul", "a call counter in a module global",
            "the module global CALLS went from", _edit(
                SILU_MUL, ("BLOCK = 1024\n", "BLOCK = 1024\nCALLS = 0\n"),
                ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)",
                 "    global CALLS\n    CALLS += 1\n"
                 "    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)"))),
    Mistake("silu_mul", "both gradients returned when only one input requires grad",
            "registered backward returns a tensor for b, whose ctx.needs_input_grad entry is "
            "False", _edit(SILU_MUL, ("backward = none_where_not_needed(backward)\n", ""),
                           ("*ctx.needs_input_grad)", "True, True)"))),
    Mistake("rms_norm_rows", "the rows seen so far counted in a module global",
            "the module global ROWS_SEEN went from", _edit(
                RMS, ("    D = x.shape[-1]\n    rows = x.reshape(-1, D).contiguous()\n"
                      "    y = torch.empty_like(rows)",
                      "    global ROWS_SEEN\n    ROWS_SEEN = globals().get('ROWS_SEEN', 0) + x.numel()\n"
                      "    D = x.shape[-1]\n    rows = x.reshape(-1, D).contiguous()\n"
                      "    y = torch.empty_like(rows)"))),
    Mistake("rms_norm_rows", "the weight's gradient returned when only x requires grad",
            "registered backward returns a tensor for weight, whose ctx.needs_input_grad entry "
            "is False", _edit(RMS, _UNGATED)),
    Mistake("rms_norm_rows", "rstd and the partial rows allocated without device= (the default "
            "device)", "made a tensor on the default device (torch.empty without device=)", _edit(
                RMS, ("    rstd = torch.empty(rows.shape[0], device=x.device,",
                      "    rstd = torch.empty(rows.shape[0],"),
                ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                 "    partial_w = torch.empty(rows.shape, dtype=rstd.dtype)"))),
    Mistake("rms_norm_rows", "a float32 weight gradient for a half weight, its fake saying so",
            "returned grad_weight in float32 for a float16 weight", _edit(RMS,
                  ("    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)",
                   "    return grad_x.view(x.shape), partial_w.sum(0)"),
                  ("    return torch.empty_like(x, memory_format=torch.contiguous_format), "
                   "torch.empty_like(weight)",
                   "    return (torch.empty_like(x, memory_format=torch.contiguous_format),\n"
                   "            torch.empty_like(weight, dtype=torch.float64 if x.dtype == "
                   "torch.float64 else torch.float32))"))),
]
