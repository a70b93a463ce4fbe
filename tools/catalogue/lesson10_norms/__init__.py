"""Lesson 10 (normalisation layers): answers with known verdicts for LayerNormFunction,
RMSNormFunction, the RMSNorm module and GroupNormFunction, one module per exercise
(LayerNormFunction's and GroupNormFunction's builders and unusual answers in layer_norm and
group_norm, their mistakes in layer_norm_mistakes and group_norm_mistakes); domains.py holds
what only the generated checks of each domain see, saved_budget.py the float64 copies only the
float32 saved check sees, review53.py to review59d.py the answers of those reviews. Since review 59d, eps=None is
no longer in RMSNorm's contract (an optional, ungraded note): see RETIRED and DROPPED."""

from . import (domains, group_norm, group_norm_mistakes, layer_norm, layer_norm_mistakes,
               learner55, rms_norm_function, rms_norm_module, review53, review54, review55,
               review57, review57c, review58, review58b, review59, review59b, review59c,
               review59d, saved_budget)

from .. import Unusual

# eps=None left RMSNorm's contract in review 59d: two answers wrong only there now pass (kept as
# unusual answers); five computed a float16 x in float16 as well, which the entry "a float16 x
# squared in float16" already holds, so they are dropped
RETIRED = {"eps coerced with float() in __init__", "eps=None resolved at the first call and kept"}
DROPPED = {"eps=None resolved in __init__", "eps=None taken for the default 1e-6",
           "eps=None resolved from the weight's dtype", "eps=None passed on to the Function",
           "eps=None resolved as torch.finfo(x.dtype).eps"}

_UNUSUAL = (layer_norm.UNUSUAL + rms_norm_function.UNUSUAL + rms_norm_module.UNUSUAL
           + group_norm.UNUSUAL + review53.UNUSUAL + review54.UNUSUAL + review55.UNUSUAL
           + review57.UNUSUAL + review57c.UNUSUAL + review58.UNUSUAL + review58b.UNUSUAL
           + review59.UNUSUAL + review59b.UNUSUAL + review59c.UNUSUAL + review59d.UNUSUAL)
_MISTAKES = (layer_norm_mistakes.MISTAKES + rms_norm_function.MISTAKES + rms_norm_module.MISTAKES
            + group_norm_mistakes.MISTAKES + domains.MISTAKES + saved_budget.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review55.MISTAKES + learner55.MISTAKES
            + review57.MISTAKES + review57c.MISTAKES + review58.MISTAKES
            + review58b.MISTAKES + review59.MISTAKES + review59b.MISTAKES
            + review59c.MISTAKES + review59d.MISTAKES)
MISTAKES = [entry for entry in _MISTAKES if entry.name not in RETIRED | DROPPED]
UNUSUAL = list(_UNUSUAL) + [Unusual(entry.exercise, f"{entry.name} (eps=None ungraded)",
                                    entry.code) for entry in _MISTAKES if entry.name in RETIRED]
