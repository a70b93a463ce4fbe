"""Lesson 13: what grading every mutant of the solutions found passing (issue 45), each now
named: the forward operator's fake giving rstd a dtype the operator never returns (only the
function's own output was compared with its fake, and opcheck ran on float64 input, where rstd
is float64 either way); silu_mul's rows taken with view, which only 2-D strided inputs allow
(no 3-D one was graded); bfloat16 carried to the kernel as float16, which overflows past 65504
(no bfloat16 value was graded past float16's range)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import LIGER_ROWS as LIGER_LAYOUT, UNUSUAL as SILU_MUL_UNUSUAL

HOST_CAST = next(answer.code for answer in SILU_MUL_UNUSUAL if answer.name.startswith(
    "half precision cast to float32 on the host"))

MISTAKES = [
    Mistake("rms_norm_rows", "the forward operator's fake with a float16 rstd for float32 x",
            "for a torch.float32 x its fake implementation gives output 1",
            _edit(RMS, ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else "
                        "torch.float32",
                        "    rstd_dtype = torch.float64 if x.dtype == torch.float64 else "
                        "torch.float16"))),
    # a fresh review's answer (f6b9c9ed): opcheck on float64 input saw it first, in torch's words
    Mistake("rms_norm_rows", "the forward operator's fake with a float32 rstd for float64 x",
            "for a torch.float64 x its fake implementation gives output 1",
            _edit(RMS, ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else "
                        "torch.float32",
                        "    rstd_dtype = torch.float32"))),
    Mistake("silu_mul", "rows of a 3-D input taken with view, not reshape",
            "right for contiguous inputs but wrong for the same values in a transposed",
            _edit(LIGER_LAYOUT, ("a, b = (t.reshape(-1, width).contiguous() for t in (a, b))",
                                 "a, b = (t.view(-1, width).contiguous() for t in (a, b))"))),
    *[Mistake("silu_mul", f"bfloat16 carried to the {kernel} kernel as float16",
              "in bfloat16, where it is finite: bfloat16 reaches far past float16's",
              _edit(HOST_CAST, edit)) for kernel, edit in (
        ("forward", ("        a, b = a.float(), b.float()", "        a, b = a.half(), b.float()")),
        ("backward", ("        grad, a, b = grad.float(), a.float(), b.float()",
                      "        grad, a, b = grad.float(), a.float(), b.half()")))],
]
