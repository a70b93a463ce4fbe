"""Lesson 10, review 58 (second review): the reviewer's RMSNorm module that sends half inputs to
F.rms_norm (it passed both checks: the custom node was looked for on float32 and float64 inputs
only), LayerNorm and GroupNorm backwards that build each row's D x D (each group's M x M)
Jacobian and multiply by it (no clause forbade it), and a float64 x given to a float32 module
computed in float32, eps=None resolved from that compute dtype (named as a float32 computation
now, not as an eps). Their unusual answers (x.detach() saved, x_hat saved, torch.var_mean)
duplicate earlier entries."""

from .. import Mistake, edit
from .group_norm import _grad_x
from .layer_norm import _ln_grad_x
from .rms_norm_module import _APPLY, _INIT, _module

_HALF_BRANCH = ("        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: in float32\n"
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n")

_JACOBIAN = ("torch.eye({n}, dtype=x.dtype, device=x.device) - 1.0 / {n}"
             " - x_hat[..., :, None] * x_hat[..., None, :] / {n}")

MISTAKES = [
    Mistake("RMSNorm", "half inputs sent to F.rms_norm", "does not compute through "
            "RMSNormFunction.apply", _module(_INIT, edit(_APPLY, (
                _HALF_BRANCH,
                "        if x.dtype in (torch.float16, torch.bfloat16):  # torch's own op\n"
                "            return F.rms_norm(x, x.shape[-1:], self.weight, self.eps)\n")))),
    Mistake("RMSNorm", "a float64 x computed in the float32 weight's dtype, eps=None from it",
            "every value of RMSNorm's output is exactly a float32 number", _module(_INIT, edit(
                _APPLY, (
                "        return RMSNormFunction.apply(x, self.weight, eps)\n",
                "        wide = torch.promote_types(self.weight.dtype, torch.float32)\n"
                "        eps = torch.finfo(wide).eps if self.eps is None else self.eps\n"
                "        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)\n"
                "        return y.to(torch.promote_types(x.dtype, self.weight.dtype))\n")))),
    Mistake("LayerNormFunction", "each row's D x D Jacobian built in backward",
            "a D x D matrix per row", _ln_grad_x(
                "            J = rstd[..., None] * (" + _JACOBIAN.format(n="D") + ")\n"
                "            grad_x = (g[..., None, :] @ J)[..., 0, :]\n")),
    Mistake("GroupNormFunction", "each group's M x M Jacobian built in backward",
            "an M x M matrix per group", _grad_x(
                "            J = rstd[..., None] * (" + _JACOBIAN.format(n="M") + ")\n"
                "            grad_x = (g[..., None, :] @ J)[..., 0, :]\n")),
]

UNUSUAL = []
