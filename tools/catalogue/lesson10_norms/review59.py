"""Lesson 10, review 58c: dead reductions, each computed beside the needed gradient's real work
(they passed both checks: the dead-work check saw only full-size tensors), and one made for
float32 inputs only (the needs_input_grad checks ran on float64 alone)."""

from .. import Mistake, edit
from .group_norm import _RIGHT, _grad_x
from .layer_norm import _LN_CORRECT, _ln_grad_x
from .rms_norm_function import _RMS_BACKWARD, _rms

_LN = _ln_grad_x(_LN_CORRECT)
_LN_X_HAT = "            x_hat = (x - mean) * rstd\n"

MISTAKES = [
    Mistake("LayerNormFunction", "a dead (D,) sum of grad_output beside the conditional grad_bias",
            "computes part of grad_bias", edit(_LN, (
                "        D = x.shape[-1]\n",
                "        D = x.shape[-1]\n        unused = grad_output.reshape(-1, D).sum(0)\n"))),
    Mistake("LayerNormFunction", "a dead einsum for grad_weight whenever x_hat is built",
            "computes part of grad_weight", edit(_LN, (
                _LN_X_HAT,
                _LN_X_HAT + '            unused = torch.einsum("...d,...d->d", grad_output, '
                'x_hat)\n'))),
    Mistake("LayerNormFunction", "a dead float64 weight sum, for float32 inputs only",
            "computes part of grad_weight", edit(_LN, (
                _LN_X_HAT,
                _LN_X_HAT + "            if x.dtype == torch.float32:  # a wider copy, kept aside\n"
                "                unused = torch.einsum(\"...d,...d->d\", grad_output, "
                "x_hat).double()\n"))),
    Mistake("RMSNormFunction", "a dead einsum for grad_weight beside the conditional one",
            "computes part of grad_weight", _rms(edit(_RMS_BACKWARD, (
                "        x_hat = x * rstd\n",
                "        x_hat = x * rstd\n"
                '        unused = torch.einsum("...d,...d->d", grad_output, x_hat)\n')))),
    Mistake("GroupNormFunction", "a dead (C,) sum of grad_output beside the conditional grad_bias",
            "computes part of grad_bias", edit(_grad_x(_RIGHT), (
                "        summed = [0, *range(2, x.dim())]\n",
                "        summed = [0, *range(2, x.dim())]\n"
                "        unused = grad_output.sum(summed)\n"))),
]

UNUSUAL = []
