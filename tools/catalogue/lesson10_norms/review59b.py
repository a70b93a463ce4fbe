"""Lesson 10, review 59b: a module that keeps a widened copy of its weight from its first call
(it passed both checks: every module graded was fresh), its half-only variant, and two answers
whose first line named another mistake (a bias sum written as ones @ rows named grad_weight's;
an empty batch's backward error named instance norm)."""

from .. import Mistake, edit
from .group_norm import _RIGHT, _grad_x
from .layer_norm import _LN_CORRECT, _ln_grad_x
from .rms_norm_module import _WIDE_APPLY, _WIDE_MODULE

_CACHED = edit(_WIDE_MODULE, (_WIDE_APPLY, (
    "        if not hasattr(self, '_wide') or self._wide.dtype != wide:\n"
    "            self._wide = self.weight.to(wide)\n"
    "        y = RMSNormFunction.apply(x.to(wide), self._wide, eps)\n")))

MISTAKES = [
    Mistake("RMSNorm", "self.weight.to(wide) cached at the first call and reused",
            "copy of its weight kept from an earlier call", _CACHED),
    Mistake("RMSNorm", "a half module's float32 weight copy cached at the first call",
            "copy of its weight kept from an earlier call", edit(
                _CACHED, ("        y = RMSNormFunction.apply(x.to(wide), self._wide, eps)\n",
                          "        half = x.dtype in (torch.float16, torch.bfloat16)\n"
                          "        weight = self._wide if half else self.weight.to(wide)\n"
                          "        y = RMSNormFunction.apply(x.to(wide), weight, eps)\n"))),
    Mistake("LayerNormFunction", "grad_bias as ones @ rows, computed whatever needs_input_grad "
            "says", "computes part of grad_bias", edit(_ln_grad_x(_LN_CORRECT), (
                "        D = x.shape[-1]\n",
                "        D = x.shape[-1]\n        rows = grad_output.reshape(-1, D)\n"
                "        unused = rows.new_ones(rows.shape[0]) @ rows\n"))),
    Mistake("GroupNormFunction", "backward's rows as reshape(N, num_groups, -1), an empty batch "
            "unhandled", "backward raised RuntimeError", edit(_grad_x(_RIGHT), (
                "            g = g.reshape(x_hat.shape)\n",
                "            g = g.reshape(N, ctx.num_groups, -1)\n"))),
]

UNUSUAL = []
