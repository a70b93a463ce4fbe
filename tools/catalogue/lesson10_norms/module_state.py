"""Lesson 10: the RMSNorm module's state across calls and instances: one weight tensor shared by
every module, a widened weight copy cached at the first call (stale after load_state_dict or an
optimiser step), and a module with **kwargs and a non-persistent buffer that loads
torch.nn.RMSNorm's state_dict."""

from .. import Mistake, Unusual, edit
from .rms_norm_function import _rms
from .rms_norm_module import _WIDE_APPLY, _WIDE_MODULE

_CACHED = edit(_WIDE_MODULE, (_WIDE_APPLY, (
    "        if not hasattr(self, '_wide') or self._wide.dtype != wide:\n"
    "            self._wide = self.weight.to(wide)\n"
    "        y = RMSNormFunction.apply(x.to(wide), self._wide, eps)\n")))


UNUSUAL = [
    Unusual("RMSNorm", "**kwargs and a non-persistent buffer", edit(_WIDE_MODULE, (
        "    def __init__(self, dim, eps=1e-6):\n        super().__init__()\n",
        "    def __init__(self, dim, eps=1e-6, **_):\n        super().__init__()\n"
        "        self.register_buffer('eps_t', torch.tensor(0.0), persistent=False)\n"))),
]

MISTAKES = [
    # one cached ones tensor wrapped by every module: loading or training one moves them all
    Mistake("RMSNorm", "every RMSNorm(dim) wraps one cached ones tensor",
            "share one weight tensor", _rms() + "\n\n" + '''
from torch import nn

_ONES = {}  # one ones-vector per size, built once


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        # nn.Parameter wraps the cached tensor without copying: every RMSNorm(dim) shares it
        self.weight = nn.Parameter(_ONES.setdefault(dim, torch.ones(dim)))

    def forward(self, x):
        eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps \\
            if self.eps is None else self.eps
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
    Mistake("RMSNorm", "self.weight.to(wide) cached at the first call and reused",
            "copy of its weight kept from an earlier call", _CACHED),
    Mistake("RMSNorm", "a half module's float32 weight copy cached at the first call",
            "copy of its weight kept from an earlier call", edit(
                _CACHED, ("        y = RMSNormFunction.apply(x.to(wide), self._wide, eps)\n",
                          "        half = x.dtype in (torch.float16, torch.bfloat16)\n"
                          "        weight = self._wide if half else self.weight.to(wide)\n"
                          "        y = RMSNormFunction.apply(x.to(wide), weight, eps)\n"))),
]
