"""Lesson 10 (normalisation layers): answers with known verdicts for LayerNormFunction,
RMSNormFunction, the RMSNorm module and GroupNormFunction. One module per exercise holds its
builders, its unusual answers and its first mistakes (layer_norm and layer_norm_mistakes,
rms_norm_function, rms_norm_module, group_norm and group_norm_mistakes); the others hold one
concept across the exercises: unrequested_work (work for a gradient nobody asked for),
gradient_slips (the gradient's formula and shapes), one_pass_variance, eps_handling,
module_dtypes and module_state (the RMSNorm module), saved_budget (what forward saves),
written_differently (correct answers written another way) and domains (what only the
generated checks of each domain see). Since eps=None left RMSNorm's contract (an optional,
ungraded note), see RETIRED and DROPPED."""

from . import (domains, eps_handling, gradient_slips, group_norm, group_norm_mistakes,
               layer_norm, layer_norm_mistakes, module_dtypes, module_state, one_pass_variance,
               rms_norm_function, rms_norm_module, saved_budget, unrequested_work,
               written_differently)

from .. import Unusual

# eps=None left RMSNorm's contract: two answers wrong only there now pass (kept as unusual
# answers); five computed a float16 x in float16 as well, which the entry "a float16 x squared
# in float16" already holds, so they are dropped
RETIRED = {"eps coerced with float() in __init__", "eps=None resolved at the first call and kept"}
DROPPED = {"eps=None resolved in __init__", "eps=None taken for the default 1e-6",
           "eps=None resolved from the weight's dtype", "eps=None passed on to the Function",
           "eps=None resolved as torch.finfo(x.dtype).eps"}

_CONCEPTS = (unrequested_work, gradient_slips, one_pass_variance, eps_handling, module_dtypes,
             module_state, written_differently)
_UNUSUAL = (layer_norm.UNUSUAL + rms_norm_function.UNUSUAL + rms_norm_module.UNUSUAL
            + group_norm.UNUSUAL + sum((module.UNUSUAL for module in _CONCEPTS), []))
_MISTAKES = (layer_norm_mistakes.MISTAKES + rms_norm_function.MISTAKES + rms_norm_module.MISTAKES
             + group_norm_mistakes.MISTAKES + domains.MISTAKES + saved_budget.MISTAKES
             + sum((module.MISTAKES for module in _CONCEPTS), []))
MISTAKES = [entry for entry in _MISTAKES if entry.name not in RETIRED | DROPPED]
UNUSUAL = list(_UNUSUAL) + [Unusual(entry.exercise, f"{entry.name} (eps=None ungraded)",
                                    entry.code) for entry in _MISTAKES if entry.name in RETIRED]
