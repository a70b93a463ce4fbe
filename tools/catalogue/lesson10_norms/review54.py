"""Lesson 10, review 54: the reviewer's answers that passed (RMSNorm's eps=None resolved as
torch.finfo(x.dtype).eps, the lesson's own solution until then: bfloat16's 0.0078 where
torch.nn.RMSNorm adds float32's eps) or whose first line named another mistake (eps used as a
floor under the mean square or the variance, named "ignores its eps argument"), a half-precision
input computed and returned in float32, GroupNorm's one-pass variance shifted by the sample's
mean and its float64 statistics saved for a float32 x, and an eps=None resolved as torch does,
written another way; the reviewer's other answers duplicate entries already here."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .rms_norm_function import _rms

_INIT = ('''
class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
''')

_OPMATH = "torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps"

_GN_RIGHT = _HEAD + _RIGHT + _TAIL

UNUSUAL = [
    Unusual("RMSNorm", "eps=None resolved from a tuple of half dtypes, weight cast at the call",
            _rms() + _INIT + '''        eps = self.eps
        if eps is None:  # torch computes float16 and bfloat16 in float32, and adds its eps
            wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
            eps = torch.finfo(wide).eps
        if x.dtype in (torch.float16, torch.bfloat16):  # torch computes these in float32
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
]

MISTAKES = [
    # the lesson's solution until review 54: right for float32 and float64, off by about 1.5
    # (bfloat16) and 0.7 (float16) on rows of mean square near 1e-3
    Mistake("RMSNorm", "eps=None resolved as torch.finfo(x.dtype).eps",
            "resolves eps=None as torch.finfo(x.dtype).eps", _rms() + _INIT +
            "        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n", named=True),
    Mistake("RMSNorm", "float16 and bfloat16 computed and returned in float32",
            "returns float32, where torch.nn.RMSNorm returns bfloat16", _rms() + _INIT +
            f"        eps = {_OPMATH} if self.eps is None else self.eps\n"
            "        if x.dtype in (torch.float16, torch.bfloat16):  # more accurate in float32\n"
            "            return RMSNormFunction.apply(x.float(), self.weight.float(), eps)\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n"),
    Mistake("RMSNormFunction", "eps as a floor under the mean square",
            "uses eps as a floor under the mean square", edit(
                _rms(), ("torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)",
                         "torch.rsqrt(x.square().mean(-1, keepdim=True).clamp_min(eps))"))),
    Mistake("GroupNormFunction", "eps as a floor under the variance",
            "uses eps as a floor under the variance", _gn(_GN_RIGHT, edit(
                _FORWARD, ("torch.rsqrt(variance + eps)",
                           "torch.rsqrt(variance.clamp_min(eps))")))),
    Mistake("GroupNormFunction", "one-pass variance shifted by each sample's mean",
            "rows of far-apart magnitude", _gn(_GN_RIGHT, edit(_FORWARD, (
                "        variance, mean = torch.var_mean(rows, dim=-1, keepdim=True, "
                "correction=0)\n",
                "        mean = rows.mean(-1, keepdim=True)\n"
                "        shifted = rows - rows.mean((1, 2), keepdim=True)  # the sample's mean\n"
                "        variance = (shifted.square().mean(-1, keepdim=True)\n"
                "                    - shifted.mean(-1, keepdim=True) ** 2)\n")))),
    Mistake("GroupNormFunction", "float64 mean and rstd saved for a float32 x",
            "of one number per group in torch.float64", _gn(_GN_RIGHT, edit(_FORWARD, (
                "torch.var_mean(rows, dim=-1,", "torch.var_mean(rows.double(), dim=-1,"), (
                "        y = ((rows - mean) * rstd).reshape(x.shape)\n",
                "        y = ((rows - mean) * rstd).to(x.dtype).reshape(x.shape)\n")))),
]
