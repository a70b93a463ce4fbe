"""Lesson 10, review 57 (round C): the reviewer's RMSNorm modules that passed both checks: one
that computes a float64 x given to a float32 module in float32 and casts the output back to
float64 (the case was graded at float32's tolerance), and one that computes a bfloat16 row in
bfloat16 (float16 widened to float32, as the overflow needs; the half outputs were graded to a
few roundings, where torch rounds once). Also a module that computes every input in float32,
graded now to float64's precision too. The reviewer's other answers duplicate entries here."""

from .. import Mistake, edit
from .rms_norm_module import _APPLY, _EPS, _INIT, _module

_HALF_BRANCH = ("        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: in float32\n"
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n")

MISTAKES = [
    Mistake("RMSNorm", "a float64 x computed in the float32 weight's dtype, cast back",
            "a step ran in float32",
            _module(_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        wide = torch.promote_types(self.weight.dtype, "
                                         "torch.float32)\n"
                                         "        y = RMSNormFunction.apply(x.to(wide), "
                                         "self.weight.to(wide), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "every input computed in float32, cast back", "a step ran in float32",
            _module(_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        y = RMSNormFunction.apply(x.float(), "
                                         "self.weight.float(), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "a bfloat16 row computed in bfloat16, float16 widened",
            "some step of yours ran in bfloat16",
            _module(_INIT, edit(_APPLY, (_HALF_BRANCH, _HALF_BRANCH.replace(
                "(torch.float16, torch.bfloat16)", "(torch.float16,)"))))),
]
