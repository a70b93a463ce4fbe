"""Lesson 10, review 57: the reviewer's answers that passed both checks: a weight=None branch of
backward that computes grad_x whether or not x needs it (LayerNorm and GroupNorm; the ops were
logged with both parameters present only), and an RMSNorm module that resolves eps=None at its
first call and keeps it (each eps=None check built a fresh module); the same slip for bias=None
in LayerNorm, the configuration graded beside them. Also the one pass accumulated in float64
for a float32 x, correct since the variance clause names x's own dtype, and an output written
as x * rstd - mean * rstd. The reviewer's other answers duplicate entries already here."""

from .. import Mistake, Unusual, edit
from .group_norm import _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln
from .rms_norm_module import _APPLY, _EPS, _INIT, _OPMATH, _module

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

_LN_D = "        D = x.shape[-1]\n"

_LN_NO_WEIGHT_BRANCH = _LN_D + '''        if weight is None:  # plain normalisation: grad_x (and maybe the bias) is all there is
            x_hat = (x - mean) * rstd
            g = grad_output
''' + _LN_CORRECT + '''            grad_bias = grad_output.reshape(-1, D).sum(0) if need_bias else None
            return grad_x if need_x else None, None, grad_bias, None
'''

_LN_NO_BIAS_BRANCH = _LN_D + '''        if ctx.bias_was_none:  # no bias: x_hat serves both gradients that are left
            x_hat = (x - mean) * rstd
            grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + '''            return grad_x if need_x else None, grad_weight if need_weight else None, None, None
'''

_GN_NO_WEIGHT_BRANCH = '''        summed = [0, *range(2, x.dim())]
        if weight is None:  # no affine weight: grad_x is all that is left to do
            x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd
            g = grad_output.reshape(x_hat.shape)
            grad_x = rstd * (g - g.mean(-1, keepdim=True)
                             - x_hat * (g * x_hat).mean(-1, keepdim=True))
            grad_bias = grad_output.sum(summed) if ctx.needs_input_grad[3] else None
            return (grad_x.reshape(x.shape) if ctx.needs_input_grad[0] else None,
                    None, None, grad_bias, None)
'''

UNUSUAL = [
    # the variance clause names x's own dtype: float64 squares of float32 numbers near 1e4 are
    # exact to 2^-53, so the cancellation costs nothing a float32 output can show
    Unusual("LayerNormFunction", "one-pass variance accumulated in float64 for a float32 x",
            _ln(_LN_RIGHT, edit(_LN_FORWARD, (
                "        variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)\n",
                "        if x.dtype == torch.float64:\n"
                "            variance, mean = torch.var_mean(x, dim=-1, keepdim=True, "
                "correction=0)\n"
                "        else:  # one pass, accumulated in float64\n"
                "            wide = x.double()\n"
                "            wide_mean = wide.mean(-1, keepdim=True)\n"
                "            variance = ((wide * wide).mean(-1, keepdim=True) - wide_mean ** 2)"
                ".to(x.dtype)\n"
                "            mean = wide_mean.to(x.dtype)\n")))),
    Unusual("LayerNormFunction", "the output as x * rstd - mean * rstd", _ln(
        _LN_RIGHT, edit(_LN_FORWARD, ("y = (x - mean) * rstd", "y = x * rstd - mean * rstd")))),
]

MISTAKES = [
    Mistake("LayerNormFunction", "a weight=None branch computes grad_x whatever x needs",
            "does it compute grad_x when ctx.needs_input_grad says x needs none",
            _ln(edit(_LN_RIGHT, (_LN_D, _LN_NO_WEIGHT_BRANCH)))),
    Mistake("LayerNormFunction", "a bias=None branch computes grad_x and grad_weight whatever "
            "they need", "does it compute grad_weight when ctx.needs_input_grad says weight needs none",
            _ln(edit(_LN_RIGHT, (_LN_D, _LN_NO_BIAS_BRANCH)), edit(_LN_FORWARD, (
                "        ctx.save_for_backward(", "        ctx.bias_was_none = bias is None\n"
                "        ctx.save_for_backward(")))),
    Mistake("GroupNormFunction", "a weight=None branch computes grad_x whatever x needs",
            "those group sums are grad_x's",
            _gn(edit(_HEAD + _RIGHT + _TAIL, ("        summed = [0, *range(2, x.dim())]\n",
                                              _GN_NO_WEIGHT_BRANCH)))),
    Mistake("RMSNorm", "eps=None resolved at the first call and kept",
            "resolved once and kept", _module(_INIT, edit(_APPLY, (_EPS, f'''        if self.eps is None and getattr(self, "_resolved", None) is None:
            self._resolved = {_OPMATH}  # once, at the first call
        eps = self._resolved if self.eps is None else self.eps
''')))),
]
