"""Lesson 10, review 59c: three grad_x slips named only as "your gradient for x is wrong" (the
mean term's or the projection's row mean of grad_output, not of grad_output * weight; the
projection divided by sum(x_hat ** 2), not D), a half module's weight cut off (a raw
RuntimeError), a module computing every input in float64 (failed on a memory rule its
contract does not state, now accepted), and two more correct answers of the review."""

from .. import Mistake, Unusual, edit
from .layer_norm import _LN_CORRECT, _ln_grad_x
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms
from .rms_norm_module import _WIDE_MODULE as _RIGHT

MISTAKES = [
    Mistake("LayerNormFunction", "the mean term's row mean of grad_output, not of "
            "grad_output * weight", "takes the mean term's row mean of grad_output",
            _ln_grad_x(edit(_LN_CORRECT, ("(g - g.mean(", "(g - grad_output.mean(")))),
    Mistake("LayerNormFunction", "the projection divided by sum(x_hat ** 2), not by D",
            "divides the projection term's row sum by the row's sum of x_hat ** 2",
            _ln_grad_x(edit(_LN_CORRECT, (
                "x_hat * (g * x_hat).mean(-1, keepdim=True)",
                "x_hat * (g * x_hat).sum(-1, keepdim=True)"
                " / (x_hat * x_hat).sum(-1, keepdim=True)")))),
    Mistake("RMSNormFunction", "the projection's row mean of grad_output * x_hat, not of "
            "g * x_hat", "takes the projection term's row mean of grad_output",
            _rms(edit(_RMS_BACKWARD, ("x_hat * (g * x_hat).mean(",
                                      "x_hat * (grad_output * x_hat).mean(")))),
    Mistake("RMSNorm", "a half module's weight detached", "a bfloat16 module: RMSNorm.weight "
            "received no gradient", edit(_RIGHT, (
                "self.weight.to(wide), eps)",
                "(self.weight.detach() if self.weight.dtype in (torch.float16, "
                "torch.bfloat16) else self.weight).to(wide), eps)"))),
]

UNUSUAL = [
    # more accurate than torch.nn.RMSNorm for float32 inputs; ✎ 3 states no memory rule
    Unusual("RMSNorm", "every input computed in float64, the output cast back", edit(
        _RIGHT, ("RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)",
                 "RMSNormFunction.apply(x.double(), self.weight.double(), eps)"))),
    Unusual("RMSNorm", "half inputs computed in float64, rounded once at the end", edit(
        _RIGHT, ("RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)",
                 "RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, "
                 "torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in "
                 "(torch.float16, torch.bfloat16) else wide), eps)"))),
    Unusual("RMSNormFunction", "rstd through vector_norm, x.detach() saved (a view)", _rms(
        _RMS_BACKWARD, edit(_RMS_FORWARD, (
            "torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)",
            "torch.rsqrt(torch.linalg.vector_norm(x, dim=-1, keepdim=True).square() "
            "/ x.shape[-1] + eps)"), ("save_for_backward(x, ", "save_for_backward(x.detach(), ")))),
]
