"""Lesson 10: RMSNorm's surviving mutants since review 59d took eps=None out of the contract
(an optional, ungraded note), and of the unusual answers of reviews 59c and 59d: each leaves
every graded output and gradient as it was."""

from .. import EquivalentMutant
from .equivalent_reasons import _STATISTIC_COPY

_NONE_EPS = ("changes only the eps a module built with eps=None adds; eps=None is not in the "
             "contract (an optional, ungraded note)")
_UNREAD = "the non-persistent buffer eps_t is never read, and stays out of the state_dict"
_UNCAST = ("a weight cast to the compute dtype first, or promoted inside the Function's "
           "product, gives the same values (a half or float32 weight is exact in the wider "
           "dtype), and autograd returns the weight's gradient in the weight's own dtype")
_HALF_WIDE = ("a half or float32 row computed in float32 or in float64, both accepted (the "
              "output rounded once at the end); a mixed pair promotes to the wider dtype")
_WIDE_PROMOTE = ("wide serves only float32 and float64 inputs here (half ones take float64), "
                 "for which promoting with float16 gives x's own dtype, as with float32; "
                 "otherwise only eps=None's eps changes (ungraded)")

_RSTD_CONTIGUOUS = "rstd is torch.rsqrt's fresh, contiguous result: .contiguous() returns it"

EQUIVALENTS = [
    *(EquivalentMutant("RMSNormFunction", kind, f"ctx.save_for_backward({saved}, weight, rstd)",
                       f"ctx.save_for_backward({saved}, weight, rstd{copy})", reason)
      for saved in ("x.detach()", "x.view_as(x)")
      for kind, copy, reason in (("save_copy", ".clone()", _STATISTIC_COPY),
                                 ("add_copy", ".contiguous()", _RSTD_CONTIGUOUS))),
    EquivalentMutant("RMSNorm", 'drop_statement',
                     "self.register_buffer('eps_t', torch.tensor(0.0), persistent=False)",
                     'pass', _UNREAD),
    EquivalentMutant("RMSNorm", 'nudge_constant',
                     "self.register_buffer('eps_t', torch.tensor(0.0), persistent=False)",
                     "self.register_buffer('eps_t', torch.tensor(1.0), persistent=False)", _UNREAD),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'w = self.weight if self.weight.dtype == wide or wide == torch.float64 else self.weight.to(wide)',
                     'w = self.weight if self.weight.dtype != wide or wide == torch.float64 else self.weight.to(wide)', _UNCAST),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'w = self.weight if self.weight.dtype == wide or wide == torch.float64 else self.weight.to(wide)',
                     'w = self.weight if self.weight.dtype == wide or wide == torch.float32 else self.weight.to(wide)', _UNCAST),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'w = self.weight if self.weight.dtype == wide or wide == torch.float64 else self.weight.to(wide)',
                     'w = self.weight if self.weight.dtype == wide or wide != torch.float64 else self.weight.to(wide)', _UNCAST),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'eps = (torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps',
                     'eps = (torch.finfo(torch.promote_types(x.dtype, torch.float16)).eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'wide = x.dtype if x.dtype == torch.float64 else torch.float32',
                     'wide = x.dtype if x.dtype == torch.float32 else torch.float32', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'wide = x.dtype if x.dtype == torch.float64 else torch.float32',
                     'wide = x.dtype if x.dtype == torch.float64 else torch.float16', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'wide = x.dtype if x.dtype == torch.float64 else torch.float32',
                     'wide = x.dtype if x.dtype != torch.float64 else torch.float32', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps if self.eps is None else self.eps',
                     'eps = torch.finfo(torch.promote_types(x.dtype, torch.float16)).eps if self.eps is None else self.eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'torch.float64 if x.dtype == torch.float64 else torch.float32).eps',
                     'torch.float64 if x.dtype == torch.float64 else torch.float16).eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'torch.float64 if x.dtype == torch.float64 else torch.float32).eps',
                     'torch.float32 if x.dtype == torch.float64 else torch.float32).eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'torch.float64 if x.dtype == torch.float64 else torch.float32).eps',
                     'torch.float64 if x.dtype != torch.float64 else torch.float32).eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'torch.float64 if x.dtype == torch.float64 else torch.float32).eps',
                     'torch.float64 if x.dtype == torch.float32 else torch.float32).eps', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)', _HALF_WIDE),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype not in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)', _HALF_WIDE),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'wide = torch.promote_types(x.dtype, torch.float32)',
                     'wide = torch.promote_types(x.dtype, torch.float16)', _WIDE_PROMOTE),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype not in (torch.float16, torch.bfloat16) else wide), eps)', _HALF_WIDE),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'y = RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)',
                     'y = RMSNormFunction.apply(x.to(torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in (torch.float16, torch.bfloat16) else wide), eps)', _HALF_WIDE),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'if self.eps is None and getattr(self, "_resolved", None) is None:',
                     'if self.eps is not None and getattr(self, "_resolved", None) is None:', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'drop_statement',
                     'self._resolved = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps  # once, at the first call',
                     'pass  # once, at the first call', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'if self.eps is None and getattr(self, "_resolved", None) is None:',
                     'if self.eps is None and getattr(self, "_resolved", None) is not None:', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'self._resolved = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps  # once, at the first call',
                     'self._resolved = torch.finfo(torch.promote_types(x.dtype, torch.float16)).eps  # once, at the first call', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'swap_comparison',
                     'wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype',
                     'wide = torch.float32 if x.dtype not in (torch.float16, torch.bfloat16) else x.dtype', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype',
                     'wide = torch.float16 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'drop_statement',
                     'eps = torch.finfo(wide).eps',
                     'pass', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'drop_statement',
                     'eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps if eps is None else eps',
                     'pass', _NONE_EPS),
    EquivalentMutant("RMSNorm", 'narrow_accumulator',
                     'eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps if eps is None else eps',
                     'eps = torch.finfo(torch.promote_types(x.dtype, torch.float16)).eps if eps is None else eps', _NONE_EPS),
]
